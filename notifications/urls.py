from django.urls import path

from notifications import views

urlpatterns = [
    path("bildirimler/", views.notification_list, name="notification_list"),
    path("bildirimler/<int:pk>/ac/", views.notification_open, name="notification_open"),
    path("bildirimler/tumu-okundu/", views.notification_read_all, name="notification_read_all"),
]

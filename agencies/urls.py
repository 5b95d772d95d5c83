"""The agency manager's desk pages (included by quotes.urls under acente/)."""

from django.urls import path

from agencies import views

urlpatterns = [
    path("calisanlar/", views.agent_list, name="agency_agents"),
    path("calisanlar/<int:agent_id>/durum/", views.agent_toggle, name="agency_agent_toggle"),
    path("calisanlar/<int:agent_id>/tali-acente/", views.agent_move, name="agency_agent_move"),
    path("tali-acenteler/", views.sub_agency_add, name="agency_sub_agency_add"),
    path("tali-acenteler/<int:sub_agency_id>/durum/", views.sub_agency_toggle, name="agency_sub_agency_toggle"),
]

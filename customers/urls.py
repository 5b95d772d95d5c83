"""customers desk pages."""

urlpatterns: list = []

"""documents desk pages."""

urlpatterns: list = []

"""customers API routes, included under /api/ in the api namespace."""

urlpatterns: list = []

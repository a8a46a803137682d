"""The console's HTML pages (HTMX)."""

urlpatterns: list = []

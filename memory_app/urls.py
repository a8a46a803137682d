"""Console URLs for memory curation, mounted at /memory/ (the API lives in memory_app.api_urls)."""

from django.urls import path

from memory_app import views, views_erasure

app_name = "memory"

urlpatterns = [
    path("", views.record_list, name="record_list"),
    path("bulk/", views.record_bulk, name="record_bulk"),
    path("erase-person/", views_erasure.person_erase_page, name="person_erase"),
    path("held/", views.held_list, name="held_list"),
    path("held/<int:record_id>/review/", views.held_review, name="held_review"),
    path("<int:record_id>/", views.record_detail, name="record_detail"),
    path("<int:record_id>/edit/", views.record_edit, name="record_edit"),
    path("<int:record_id>/delete/", views.record_delete, name="record_delete"),
    path("<int:record_id>/resolve/", views.record_resolve, name="record_resolve"),
]

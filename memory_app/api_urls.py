"""/api/v1/memory/: mounted by config/api_urls.py. `<id:pk>` is harness.http.api_base's bigint-bounded id."""

from django.urls import path

from memory_app import api, api_erasure

urlpatterns = [
    path("records/", api.RecordListView.as_view(), name="memory-records"),
    path("records/bulk-delete/", api.BulkDeleteView.as_view(), name="memory-bulk-delete"),
    path("records/bulk-expire/", api.BulkExpireView.as_view(), name="memory-bulk-expire"),
    path("records/<id:pk>/", api.RecordDetailView.as_view(), name="memory-record"),
    path("records/<id:pk>/chain/", api.RecordChainView.as_view(), name="memory-record-chain"),
    path("records/<id:pk>/supersede/", api.RecordSupersedeView.as_view(), name="memory-record-supersede"),
    path("records/<id:pk>/review/", api.RecordReviewView.as_view(), name="memory-record-review"),
    path("records/<id:pk>/expire/", api.RecordExpireView.as_view(), name="memory-record-expire"),
    path("records/<id:pk>/delete/", api.RecordDeleteView.as_view(), name="memory-record-delete"),
    path("records/<id:pk>/erase/", api.RecordEraseView.as_view(), name="memory-record-erase"),
    path("erasures/", api_erasure.PersonErasureView.as_view(), name="memory-person-erase"),
    path("retrieve/", api.RetrieveView.as_view(), name="memory-retrieve"),
    path("held/", api.HeldListView.as_view(), name="memory-held"),
    path("conflicts/", api.ConflictListView.as_view(), name="memory-conflicts"),
    path("context/", api.ContextCreateView.as_view(), name="memory-context"),
    path("context/<id:pk>/", api.ContextDetailView.as_view(), name="memory-context-read"),
    path("store/items/", api.StoreItemsView.as_view(), name="memory-store-items"),
    path("store/items/delete/", api.StoreDeleteView.as_view(), name="memory-store-delete"),
    path("store/search/", api.StoreSearchView.as_view(), name="memory-store-search"),
    path("store/namespaces/", api.StoreNamespacesView.as_view(), name="memory-store-namespaces"),
]

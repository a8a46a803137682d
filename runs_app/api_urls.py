"""/api/v1/runs/..., checkpoints, approvals, effects, tasks, handoffs, projects/{id}/retention/."""

from django.urls import path

from harness.http import api_base  # noqa: F401 - registers the <id:...> converter
from harness.http.plain import plain_first
from runs_app import api, api_forks, api_handoffs, api_retention, api_threads

urlpatterns = [
    path("runs/", api.RunListCreateApi.as_view(), name="api-runs"),
    path("runs/<id:pk>/", api.RunDetailApi.as_view(), name="api-run"),
    path("runs/<id:pk>/claim/", api.RunClaimApi.as_view(), name="api-run-claim"),
    path("runs/<id:pk>/heartbeat/", api.RunHeartbeatApi.as_view(), name="api-run-heartbeat"),
    path("runs/<id:pk>/transition/", api.RunTransitionApi.as_view(), name="api-run-transition"),
    path("runs/<id:pk>/usage/", api.RunUsageApi.as_view(), name="api-run-usage"),
    path("runs/<id:pk>/events/", api.RunEventsApi.as_view(), name="api-run-events"),
    path("runs/<id:pk>/approvals/", api.RunApprovalCreateApi.as_view(), name="api-run-approvals"),
    # The agent's hottest calls try the plain path first (harness.http.plain).
    path("checkpoints/", plain_first(api.CheckpointListCreateApi, post=api.checkpoint_create_plain),
         name="api-checkpoints"),
    path("checkpoints/<id:pk>/", api.CheckpointDetailApi.as_view(), name="api-checkpoint"),
    path("checkpoints/<id:pk>/lineage/", plain_first(api.CheckpointLineageApi, get=api.checkpoint_lineage_plain),
         name="api-checkpoint-lineage"),
    path("checkpoints/<id:pk>/fork/", api_forks.CheckpointForkApi.as_view(), name="api-checkpoint-fork"),
    path("threads/", api_threads.ThreadEnsureApi.as_view(), name="api-threads"),
    path("threads/checkpoints/", api_threads.ThreadCheckpointsApi.as_view(), name="api-thread-checkpoints"),
    path("threads/checkpoint/", api_threads.ThreadCheckpointApi.as_view(), name="api-thread-checkpoint"),
    path("threads/writes/", api_threads.ThreadWritesApi.as_view(), name="api-thread-writes"),
    path("threads/delete/", api_threads.ThreadDeleteApi.as_view(), name="api-thread-delete"),
    path("approvals/", api.ApprovalListApi.as_view(), name="api-approvals"),
    path("approvals/<id:pk>/", api.ApprovalDetailApi.as_view(), name="api-approval"),
    path("approvals/<id:pk>/decision/", api.ApprovalDecisionApi.as_view(), name="api-approval-decision"),
    path("effects/", api.EffectListIntendApi.as_view(), name="api-effects"),
    path("effects/deliver/", api.EffectDeliverApi.as_view(), name="api-effects-deliver"),
    path("effects/<id:pk>/", api.EffectDetailApi.as_view(), name="api-effect"),
    path("runs/<id:pk>/handoffs/", api_handoffs.RunHandoffIssueApi.as_view(), name="api-run-handoffs"),
    path("handoffs/", api_handoffs.HandoffListApi.as_view(), name="api-handoffs"),
    path("handoffs/<id:pk>/", api_handoffs.HandoffDetailApi.as_view(), name="api-handoff"),
    path("handoffs/<id:pk>/accept/", api_handoffs.HandoffAcceptApi.as_view(), name="api-handoff-accept"),
    path("handoffs/<id:pk>/return/", api_handoffs.HandoffReturnApi.as_view(), name="api-handoff-return"),
    path("handoffs/<id:pk>/cancel/", api_handoffs.HandoffCancelApi.as_view(), name="api-handoff-cancel"),
    path("tasks/", api.TaskListCreateApi.as_view(), name="api-tasks"),
    path("tasks/<id:pk>/", api.TaskDetailApi.as_view(), name="api-task"),
    path("tasks/<id:pk>/transition/", api.TaskTransitionApi.as_view(), name="api-task-transition"),
    path("projects/<id:pk>/retention/", api_retention.ProjectRetentionApi.as_view(), name="api-project-retention"),
    path("projects/<id:pk>/retention/dry-run/", api_retention.ProjectRetentionDryRunApi.as_view(),
         name="api-project-retention-dry-run"),
]

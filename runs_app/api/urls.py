"""/api/v1/runs/..., checkpoints, approvals, effects, tasks, handoffs, projects/{id}/retention/."""

from django.urls import path

from harness.http import api_base  # noqa: F401 - registers the <id:...> converter
from harness.http.plain import plain_first
from runs_app.api import (
    approvals,
    checkpoints,
    effects,
    events,
    forks,
    handoffs,
    retention,
    runs,
    tasks,
    threads,
    tools,
)

urlpatterns = [
    path("runs/", runs.RunListCreateApi.as_view(), name="api-runs"),
    path("runs/<id:pk>/", runs.RunDetailApi.as_view(), name="api-run"),
    path("runs/<id:pk>/claim/", runs.RunClaimApi.as_view(), name="api-run-claim"),
    path("runs/<id:pk>/heartbeat/", runs.RunHeartbeatApi.as_view(), name="api-run-heartbeat"),
    path("runs/<id:pk>/transition/", runs.RunTransitionApi.as_view(), name="api-run-transition"),
    path("runs/<id:pk>/usage/", runs.RunUsageApi.as_view(), name="api-run-usage"),
    path("runs/<id:pk>/events/", events.RunEventsApi.as_view(), name="api-run-events"),
    path("runs/<id:pk>/approvals/", approvals.RunApprovalCreateApi.as_view(), name="api-run-approvals"),
    # The agent's hottest calls try the plain path first (harness.http.plain).
    path("checkpoints/", plain_first(checkpoints.CheckpointListCreateApi, post=checkpoints.checkpoint_create_plain),
         name="api-checkpoints"),
    path("checkpoints/<id:pk>/", checkpoints.CheckpointDetailApi.as_view(), name="api-checkpoint"),
    path("checkpoints/<id:pk>/lineage/",
         plain_first(checkpoints.CheckpointLineageApi, get=checkpoints.checkpoint_lineage_plain),
         name="api-checkpoint-lineage"),
    path("checkpoints/<id:pk>/fork/", forks.CheckpointForkApi.as_view(), name="api-checkpoint-fork"),
    path("threads/", threads.ThreadEnsureApi.as_view(), name="api-threads"),
    path("threads/checkpoints/", threads.ThreadCheckpointsApi.as_view(), name="api-thread-checkpoints"),
    path("threads/checkpoint/", threads.ThreadCheckpointApi.as_view(), name="api-thread-checkpoint"),
    path("threads/writes/", threads.ThreadWritesApi.as_view(), name="api-thread-writes"),
    path("threads/delete/", threads.ThreadDeleteApi.as_view(), name="api-thread-delete"),
    path("approvals/", approvals.ApprovalListApi.as_view(), name="api-approvals"),
    path("approvals/<id:pk>/", approvals.ApprovalDetailApi.as_view(), name="api-approval"),
    path("approvals/<id:pk>/decision/", approvals.ApprovalDecisionApi.as_view(), name="api-approval-decision"),
    path("approvals/<id:pk>/outcome/", approvals.ApprovalOutcomeApi.as_view(), name="api-approval-outcome"),
    path("tools/schemas/", tools.ToolSchemaListRegisterApi.as_view(), name="api-tool-schemas"),
    path("tools/schemas/<id:pk>/", tools.ToolSchemaDetailApi.as_view(), name="api-tool-schema"),
    path("effects/", effects.EffectListIntendApi.as_view(), name="api-effects"),
    path("effects/deliver/", effects.EffectDeliverApi.as_view(), name="api-effects-deliver"),
    path("effects/<id:pk>/", effects.EffectDetailApi.as_view(), name="api-effect"),
    path("runs/<id:pk>/handoffs/", handoffs.RunHandoffIssueApi.as_view(), name="api-run-handoffs"),
    path("handoffs/", handoffs.HandoffListApi.as_view(), name="api-handoffs"),
    path("handoffs/<id:pk>/", handoffs.HandoffDetailApi.as_view(), name="api-handoff"),
    path("handoffs/<id:pk>/accept/", handoffs.HandoffAcceptApi.as_view(), name="api-handoff-accept"),
    path("handoffs/<id:pk>/return/", handoffs.HandoffReturnApi.as_view(), name="api-handoff-return"),
    path("handoffs/<id:pk>/cancel/", handoffs.HandoffCancelApi.as_view(), name="api-handoff-cancel"),
    path("tasks/", tasks.TaskListCreateApi.as_view(), name="api-tasks"),
    path("tasks/<id:pk>/", tasks.TaskDetailApi.as_view(), name="api-task"),
    path("tasks/<id:pk>/transition/", tasks.TaskTransitionApi.as_view(), name="api-task-transition"),
    path("projects/<id:pk>/retention/", retention.ProjectRetentionApi.as_view(), name="api-project-retention"),
    path("projects/<id:pk>/retention/dry-run/", retention.ProjectRetentionDryRunApi.as_view(),
         name="api-project-retention-dry-run"),
]

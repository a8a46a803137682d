"""Console URLs for approvals, runs, tasks and checkpoints (the API lives in runs_app.api.urls)."""

from django.urls import path

from runs_app.views import approvals, effects, forks, handoffs, lineage, policies, runs, standing_approvals, tasks

app_name = "runs"

urlpatterns = [
    path("approvals/", approvals.approval_inbox, name="approval_inbox"),
    path("approvals/bulk/", approvals.approval_bulk, name="approval_bulk"),
    path("approvals/decided/", approvals.approval_decided, name="approval_decided"),
    path("approvals/standing/", standing_approvals.standing_approval_list_view, name="standing_approval_list"),
    path("approvals/standing/<int:rule_id>/revoke/", standing_approvals.standing_approval_revoke_view,
         name="standing_approval_revoke"),
    path("approvals/<int:approval_id>/", approvals.approval_detail, name="approval_detail"),
    path("approvals/<int:approval_id>/assign/", approvals.approval_assign_view, name="approval_assign"),
    path("approvals/<int:approval_id>/approve/", approvals.approval_approve, name="approval_approve"),
    path("approvals/<int:approval_id>/reject/", approvals.approval_reject, name="approval_reject"),
    path("approvals/<int:approval_id>/edit-approve/", approvals.approval_edit_approve, name="approval_edit_approve"),
    path("approvals/<int:approval_id>/edit-typed/", approvals.approval_edit_typed, name="approval_edit_typed"),
    path("approvals/<int:approval_id>/cancel/", runs.approval_cancel_view, name="approval_cancel"),
    path("approvals/<int:approval_id>/extend/", runs.approval_extend_view, name="approval_extend"),
    path("policies/", policies.policy_list, name="policy_list"),
    path("policies/publish/", policies.policy_publish, name="policy_publish"),
    path("runs/", runs.run_list, name="run_list"),
    path("effects/<int:effect_id>/", effects.effect_detail, name="effect_detail"),
    path("effects/<int:effect_id>/mark-delivered/", effects.effect_mark_delivered, name="effect_mark_delivered"),
    path("effects/<int:effect_id>/retry/", effects.effect_retry, name="effect_retry"),
    path("effects/<int:effect_id>/abandon/", effects.effect_abandon, name="effect_abandon"),
    path("runs/<int:run_id>/", runs.run_inspector, name="run_inspector"),
    path("runs/<int:run_id>/lineage/", lineage.run_lineage, name="run_lineage"),
    path("runs/<int:run_id>/cancel/", runs.run_cancel, name="run_cancel"),
    path("runs/<int:run_id>/retry/", runs.run_retry, name="run_retry"),
    path("runs/<int:run_id>/repair/", runs.run_repair, name="run_repair"),
    path("runs/<int:run_id>/fail/", runs.run_fail, name="run_fail"),
    path("runs/<int:run_id>/requeue/", runs.run_requeue, name="run_requeue"),
    path("runs/<int:run_id>/start/", runs.run_start, name="run_start"),
    path("tasks/", tasks.task_list, name="task_list"),
    path("tasks/<int:task_id>/", tasks.task_detail, name="task_detail"),
    path("tasks/<int:task_id>/lineage/", lineage.task_lineage, name="task_lineage"),
    path("checkpoints/<int:checkpoint_id>/", lineage.checkpoint_detail, name="checkpoint_detail"),
    path("checkpoints/<int:checkpoint_id>/fork/", forks.checkpoint_fork_view, name="checkpoint_fork"),
    path("checkpoints/diff/", lineage.checkpoint_diff, name="checkpoint_diff"),
    path("handoffs/<int:handoff_id>/", handoffs.handoff_detail, name="handoff_detail"),
    path("handoffs/<int:handoff_id>/answer/", handoffs.handoff_answer, name="handoff_answer"),
]

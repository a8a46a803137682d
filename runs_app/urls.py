"""Console URLs for approvals, runs, tasks and checkpoints (the API lives in runs_app.api.urls)."""

from django.urls import path

from runs_app import views, views_forks, views_handoffs, views_run_actions

app_name = "runs"

urlpatterns = [
    path("approvals/", views.approval_inbox, name="approval_inbox"),
    path("approvals/bulk/", views.approval_bulk, name="approval_bulk"),
    path("approvals/<int:approval_id>/", views.approval_detail, name="approval_detail"),
    path("approvals/<int:approval_id>/assign/", views.approval_assign_view, name="approval_assign"),
    path("approvals/<int:approval_id>/approve/", views.approval_approve, name="approval_approve"),
    path("approvals/<int:approval_id>/reject/", views.approval_reject, name="approval_reject"),
    path("approvals/<int:approval_id>/edit-approve/", views.approval_edit_approve, name="approval_edit_approve"),
    path("approvals/<int:approval_id>/cancel/", views_run_actions.approval_cancel_view, name="approval_cancel"),
    path("approvals/<int:approval_id>/extend/", views_run_actions.approval_extend_view, name="approval_extend"),
    path("runs/", views.run_list, name="run_list"),
    path("effects/<int:effect_id>/", views.effect_detail, name="effect_detail"),
    path("effects/<int:effect_id>/mark-delivered/", views.effect_mark_delivered, name="effect_mark_delivered"),
    path("effects/<int:effect_id>/retry/", views.effect_retry, name="effect_retry"),
    path("effects/<int:effect_id>/abandon/", views.effect_abandon, name="effect_abandon"),
    path("runs/<int:run_id>/", views.run_inspector, name="run_inspector"),
    path("runs/<int:run_id>/lineage/", views.run_lineage, name="run_lineage"),
    path("runs/<int:run_id>/cancel/", views_run_actions.run_cancel, name="run_cancel"),
    path("runs/<int:run_id>/retry/", views_run_actions.run_retry, name="run_retry"),
    path("runs/<int:run_id>/repair/", views_run_actions.run_repair, name="run_repair"),
    path("runs/<int:run_id>/fail/", views_run_actions.run_fail, name="run_fail"),
    path("runs/<int:run_id>/requeue/", views_run_actions.run_requeue, name="run_requeue"),
    path("tasks/", views.task_list, name="task_list"),
    path("tasks/<int:task_id>/", views.task_detail, name="task_detail"),
    path("tasks/<int:task_id>/lineage/", views.task_lineage, name="task_lineage"),
    path("checkpoints/<int:checkpoint_id>/", views.checkpoint_detail, name="checkpoint_detail"),
    path("checkpoints/<int:checkpoint_id>/fork/", views_forks.checkpoint_fork_view, name="checkpoint_fork"),
    path("checkpoints/diff/", views.checkpoint_diff, name="checkpoint_diff"),
    path("handoffs/<int:handoff_id>/", views_handoffs.handoff_detail, name="handoff_detail"),
    path("handoffs/<int:handoff_id>/answer/", views_handoffs.handoff_answer, name="handoff_answer"),
]

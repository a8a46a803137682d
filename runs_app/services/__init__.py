"""Write operations on runs, events, node executions, tasks, checkpoints, approvals, external effects, handoffs.

One module per aggregate; every door (API, console, admin, worker) imports the services from here.
Every status change goes through `harness.transitions.cas_transition` with the machine declared in
`runs_app.machines`.
"""

from runs_app.services.approval_actions import (
    ApprovalAction,
    ApprovalPlan,
    approval_action_plan,
    approval_cancel,
    approval_extend,
)
from runs_app.services.approval_assign import approval_assign, project_reviewers
from runs_app.services.approval_bulk import BulkItem, BulkResult, approval_decide_bulk
from runs_app.services.approval_outcome import approval_report_outcome
from runs_app.services.approvals import (
    Decision,
    approval_decide,
    approval_expire,
    approval_expire_due,
    approval_request_create,
)
from runs_app.services.checkpoints import checkpoint_create
from runs_app.services.effects import (
    Delivery,
    Resend,
    effect_deliver,
    effect_dispatch,
    effect_intend,
    effect_mark_unknown,
    effect_refuse,
    effect_resolve,
)
from runs_app.services.forks import Fork, checkpoint_fork, run_forked_from, state_diff
from runs_app.services.handoffs import (
    handoff_accept,
    handoff_answer_by_person,
    handoff_cancel,
    handoff_consume,
    handoff_expire_due,
    handoff_issue,
    handoff_return,
)
from runs_app.services.run_actions import RunAction, RunPlan, run_act, run_action_plan
from runs_app.services.runs import (
    MAX_COST_PER_CALL,
    MAX_TOKENS_PER_CALL,
    node_execution_finish,
    node_execution_start,
    run_bind_result,
    run_claim,
    run_claim_attempt,
    run_count_start,
    run_create,
    run_event_append,
    run_events_append,
    run_heartbeat,
    run_metrics_merge,
    run_reblock,
    run_record_usage,
    run_release,
    run_set_current_node,
    run_transition,
    run_usage_report,
)
from runs_app.services.tasks import TASK_CLIENT_FIELDS, task_create, task_save, task_transition
from runs_app.services.threads import (
    thread_checkpoint_json,
    thread_checkpoint_put,
    thread_checkpoints_json,
    thread_delete,
    thread_ensure,
    thread_writes_put,
)
from runs_app.services.tool_schemas import tool_schema_register

__all__ = [
    "approval_report_outcome",
    "ApprovalAction",
    "ApprovalPlan",
    "RunAction",
    "RunPlan",
    "approval_action_plan",
    "approval_cancel",
    "approval_extend",
    "run_act",
    "run_action_plan",
    "MAX_COST_PER_CALL",
    "MAX_TOKENS_PER_CALL",
    "TASK_CLIENT_FIELDS",
    "BulkItem",
    "BulkResult",
    "Decision",
    "Delivery",
    "Resend",
    "Fork",
    "approval_assign",
    "approval_decide",
    "approval_decide_bulk",
    "approval_expire",
    "approval_expire_due",
    "approval_request_create",
    "checkpoint_create",
    "checkpoint_fork",
    "project_reviewers",
    "effect_deliver",
    "effect_dispatch",
    "effect_intend",
    "effect_mark_unknown",
    "effect_refuse",
    "effect_resolve",
    "handoff_accept",
    "handoff_answer_by_person",
    "handoff_cancel",
    "handoff_consume",
    "handoff_expire_due",
    "handoff_issue",
    "handoff_return",
    "node_execution_finish",
    "node_execution_start",
    "run_bind_result",
    "run_claim",
    "run_claim_attempt",
    "run_count_start",
    "run_create",
    "run_event_append",
    "run_forked_from",
    "run_events_append",
    "run_heartbeat",
    "run_metrics_merge",
    "run_reblock",
    "run_record_usage",
    "run_release",
    "run_set_current_node",
    "run_transition",
    "run_usage_report",
    "state_diff",
    "task_create",
    "task_save",
    "task_transition",
    "thread_checkpoint_json",
    "thread_checkpoint_put",
    "thread_checkpoints_json",
    "thread_delete",
    "thread_ensure",
    "thread_writes_put",
    "tool_schema_register",
]

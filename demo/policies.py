"""The demo's approval policies (issue 33), so a newcomer sees them at work: a quorum waiting for its second
reviewer, a request escalated to a second group when the first let its time run out, a standing approval that
approved a request without asking, and a question to a person that is not an approval.

Session S-43 ("royalties"), runs of the agent `accountant`: P-1 waits for its second editor ("1 of 2"), P-2 was
escalated to the publishers when the editors let it wait past its 8 hours, P-3's royalty statement was approved by
mira's standing approval for `send_statement` ("don't ask again" for a week, 20 statements to the author), and the
accountant asks which account November's royalties leave from (the inbox's Questions tab). Written through the
services, as an agent, the reviewers and an operator would. Groups: `editors` (reviewer, mira, admin) decide
`pay_royalties` two at a time; `publishers` (pat, admin) take what the editors let expire.
"""

import datetime as dt

from django.contrib.auth.models import User

from demo.tools import PAY_ROYALTIES_SCHEMA
from harness.actors import Actor
from harness.models import Project
from runs_app import services as runs
from runs_app.models import ExpiryAction, ReviewerGroup, Run
from runs_app.services.approval_escalation import approval_escalate
from runs_app.services.approval_policies import approval_policy_publish
from runs_app.services.questions import question_ask
from runs_app.services.standing_approvals import standing_approval_create
from sessions_app.services import session_create, session_items_append

SESSION_REF = "S-43"
AGENT = Actor.for_agent("accountant")
ROYALTY_OPTIONS = [
    {"name": "wrong_amount", "reviewer_text": "The amount does not match the sales report.",
     "agent_text": "Recompute the amount from this month's sales report and ask again."},
    {"name": "not_due", "reviewer_text": "Royalties are not due yet.",
     "agent_text": "Wait for the end of the quarter, then ask again."},
]


def load_demo_policies(*, project: Project, operator: User, editors: list[User], publishers: list[User],
                       voter: User) -> bool:
    """Publish the demo's groups and policies and ask its requests, once (False: already loaded). `voter`, one of
    the `editors`, gives the quorum's first approval."""
    if project.sessions.filter(ref=SESSION_REF).exists():
        return False
    editing = _group(project, "editors", editors)
    publishing = _group(project, "publishers", publishers)
    as_operator = Actor.for_user(operator)
    runs.tool_schema_register(project=project, tool="pay_royalties", schema=PAY_ROYALTIES_SCHEMA, actor=AGENT)
    approval_policy_publish(
        project=project, tool="pay_royalties", actor=as_operator, required_approvals=2, eligible_groups=[editing],
        expires_after=dt.timedelta(hours=8), on_expiry=ExpiryAction.ESCALATE, escalate_to=publishing,
        escalation_expires_after=dt.timedelta(hours=24), always_ask=True, reject_options=ROYALTY_OPTIONS)
    session = session_create(project=project, role="manager", memory_policy="session", ref=SESSION_REF,
                             metadata={"topic": "royalties"})
    # A quorum half way: mira approved, a second editor is needed ("1 of 2" in the inbox).
    quorum = _waiting_run(project, session.pk, "P-1", "Pay this month's royalties to the author.")
    asked = runs.approval_request_create(
        project=project, run_id=quorum.pk, tool="pay_royalties", arguments={"payee": "author", "amount_eur": 1840},
        idempotency_key="S-43/royalties/2026-11", risk="high", reason="Money leaves the account.", actor=AGENT)
    runs.approval_decide(project=project, approval_id=asked.pk, actor=Actor.for_user(voter),
                         decision="approve", reason="Matches the November sales report.")
    # An escalation: the editors let October's payment wait past its 8 hours, so the publishers decide it now.
    late = _waiting_run(project, session.pk, "P-2", "Pay October's royalties to the translator.")
    overdue = runs.approval_request_create(
        project=project, run_id=late.pk, tool="pay_royalties", arguments={"payee": "translator", "amount_eur": 420},
        idempotency_key="S-43/royalties/2026-10-translator", risk="high", reason="Money leaves the account.",
        actor=AGENT)
    if overdue.expires_at is None:  # the policy's 8 hours set it; without them there is nothing to escalate
        raise RuntimeError("the demo's pay_royalties policy set no deadline")
    approval_escalate(approval_id=overdue.pk, now=overdue.expires_at)
    # A standing approval: mira said "don't ask again" for the author's monthly statements; P-3's was approved by it.
    standing_approval_create(
        project=project, actor=Actor.for_user(voter), tool="send_statement", agent=AGENT.name,
        match_arguments={"to": "author"}, max_uses=20, expires_in=dt.timedelta(days=7),
        reason="Monthly statements to the author are routine.")
    statement = _waiting_run(project, session.pk, "P-3", "Send the author November's royalty statement.")
    runs.approval_request_create(
        project=project, run_id=statement.pk, tool="send_statement", arguments={"to": "author", "month": "2026-11"},
        idempotency_key="S-43/statement/2026-11", risk="low", reason="The author reads it.", actor=AGENT,
        executor="agent")
    # A question that is not an approval: which account the quorum's payment leaves from.
    question_ask(project=project, actor=AGENT, run_id=quorum.pk, idempotency_key="S-43/question/account",
                 question="Which account should November's royalties leave from?",
                 answer_schema={"type": "string", "enum": ["operating account", "royalties reserve"]},
                 context={"amount_eur": 1840, "payee": "author"})
    return True


def _group(project: Project, name: str, members: list[User]) -> ReviewerGroup:
    group, _ = ReviewerGroup.objects.get_or_create(project=project, name=name)
    group.members.add(*members)
    return group


def _waiting_run(project: Project, session_id: int, ref: str, ask: str) -> Run:
    run = runs.run_create(project=project, session_id=session_id, ref=ref, task_mode="publish",
                          active_agent="accountant")
    session_items_append(project=project, session_id=session_id, items=[
        {"role": "user", "content": {"text": ask}, "run_id": run.pk}])
    return runs.run_transition(project=project, run_id=run.pk, to="running", expected_version=run.version)

import pytest
from django.core.management import call_command

from harness.models import Project
from memory_app.models import MemoryRecord
from runs_app.models import ApprovalRequest, Checkpoint, ExternalEffect, HumanQuestion, Run, Task
from sessions_app.models import Session


@pytest.mark.django_db
def test_load_demo_builds_the_seed_scenario_once():
    call_command("load_demo", with_users=True)
    runs_after_one = Run.objects.count()
    call_command("load_demo", with_users=True)  # a second run changes nothing, the history included
    assert Run.objects.count() == runs_after_one

    project = Project.objects.get(slug="novelforge")
    session = Session.objects.get(project=project, ref="S-42")
    runs = {r.ref: r for r in Run.objects.filter(session=session)}
    assert {ref: r.status for ref, r in runs.items()} == {
        "R-100": "succeeded", "R-101": "waiting_approval", "R-102": "created"}
    task = Task.objects.get(project=project, ref="T-7")
    assert runs["R-101"].task_id == task.pk and runs["R-101"].current_node == "publish"

    days = list(Checkpoint.objects.filter(task=task).order_by("depth").values_list("label", "depth"))
    # Day 3 ends with R-101 waiting: its approval request checkpoints it (issue 16, section 5).
    assert [label.split(":")[0] for label, _ in days] == ["day 1", "day 2", "day 3",
                                                          "waiting for approval of publish_chapter"]
    assert task.latest_checkpoint.parent.label.startswith("day 3")
    assert task.latest_checkpoint.parent.parent.parent.parent_id is None

    pending = ApprovalRequest.objects.get(project=project, status="pending", run__session=session)
    assert pending.run_id == runs["R-101"].pk and pending.risk == "high" and pending.tool == "publish_chapter"
    assert runs["R-101"].pending_approval_id == pending.pk
    effect = ExternalEffect.objects.get(project=project, run__ref="R-100")
    assert effect.status == "consumed" and effect.receipt

    memory = MemoryRecord.objects.filter(project=project).exclude(status="held")
    assert memory.count() >= 3
    superseded = memory.get(status="superseded")
    assert superseded.superseded_by.status == "active"
    # The scenario is one session and one approval; the history (demo.history) is the H- rest, none of it pending;
    # the policies' (demo.policies) are S-43 and its P- runs.
    scenario = Session.objects.filter(project=project).exclude(ref__startswith="H-").exclude(ref="S-43")
    assert scenario.count() == 1
    assert ApprovalRequest.objects.filter(project=project, run__ref__startswith="R-").count() == 1
    assert ApprovalRequest.objects.filter(project=project, status="pending", run__ref__startswith="R-").count() == 1


@pytest.mark.django_db
def test_the_demo_shows_a_quorum_half_way():
    call_command("load_demo", with_users=True)
    project = Project.objects.get(slug="novelforge")
    quorum = ApprovalRequest.objects.get(project=project, run__ref="P-1")
    assert (quorum.status, quorum.approvals_required, quorum.policy_version) == ("pending", 2, 1)
    assert [v.user.username for v in quorum.votes.all()] == ["mira"]
    assert quorum.policy.always_ask and quorum.policy.escalate_to.name == "publishers"
    assert {g.name: sorted(u.username for u in g.members.all()) for g in project.reviewer_groups.all()} == {
        "editors": ["admin", "mira", "reviewer"], "publishers": ["admin", "pat"]}


@pytest.mark.django_db
def test_the_demo_shows_an_escalation():
    call_command("load_demo", with_users=True)
    escalated = ApprovalRequest.objects.get(project__slug="novelforge", run__ref="P-2")
    assert (escalated.status, escalated.routed_group.name) == ("pending", "publishers")
    assert escalated.escalated_at is not None and escalated.expires_at > escalated.escalated_at


@pytest.mark.django_db
def test_the_demo_shows_a_standing_approval_and_a_question():
    call_command("load_demo", with_users=True)
    project = Project.objects.get(slug="novelforge")
    statement = ApprovalRequest.objects.get(project=project, run__ref="P-3")
    rule = statement.standing_approval
    assert (statement.status, statement.decided_by.username) == ("approved", "mira")
    assert (rule.tool, rule.agent, rule.uses, rule.max_uses, rule.revoked_at) == (
        "send_statement", "agent:accountant", 1, 20, None)
    question = HumanQuestion.objects.get(project=project)
    assert (question.status, question.run.ref, question.asked_by) == ("pending", "P-1", "agent:accountant")
    assert question.answer_schema["enum"] == ["operating account", "royalties reserve"]

"""Who may act, per project, in the console (issues 16.5 and 17.4): an admin freezes and unfreezes a project
(CSRF, audited); a frozen project's approvals are not decided; a reviewer of project A sees B's approvals but is
offered no decision there and is refused one, alone or in bulk."""

import pytest
from django.test import Client
from django.urls import reverse

from harness.models import AuditEntry, Membership, Project
from runs_app.models import ApprovalRequest, ApprovalStatus
from tests import factories
from tests.console.scenario import Scene
from tests.console.test_approval_bulk import BULK, ask, results

pytestmark = pytest.mark.django_db
PROJECTS = reverse("project_list")


def _login(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def _csrf(client: Client) -> str:
    client.get(PROJECTS)
    return client.cookies["csrftoken"].value


def _freeze(client: Client, project: Project, reason: str = "incident 42") -> object:
    return client.post(reverse("project_freeze", args=[project.slug]), {"reason": reason},
                       HTTP_X_CSRFTOKEN=_csrf(client))


def test_an_admin_freezes_and_unfreezes_a_project_audited(project) -> None:  # type: ignore[no-untyped-def]
    ada = factories.make_user("ada", role="admin", projects=[project])
    client = _login(ada)
    assert _freeze(client, project, "<script>alert(1)</script>").status_code == 302
    project.refresh_from_db()
    assert project.frozen_at is not None and project.frozen_by == ada
    page = client.get(PROJECTS).content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page
    assert 'action="/projects/acme/unfreeze/"' in page

    response = client.post(reverse("project_unfreeze", args=[project.slug]), {"reason": "resolved"},
                           HTTP_X_CSRFTOKEN=_csrf(client))
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.frozen_at is None
    actions = list(AuditEntry.objects.filter(project=project, target_type="project").order_by("seq")
                   .values_list("action", "actor"))
    assert actions == [("project.frozen", "user:ada"), ("project.unfrozen", "user:ada")]


def test_freezing_needs_the_csrf_token(project) -> None:  # type: ignore[no-untyped-def]
    client = _login(factories.make_user("ada", role="admin", projects=[project]))
    response = client.post(reverse("project_freeze", args=[project.slug]), {"reason": "x"})
    assert response.status_code == 403
    project.refresh_from_db()
    assert project.frozen_at is None


def test_a_reviewer_cannot_freeze_and_sees_no_button(project, reviewer) -> None:  # type: ignore[no-untyped-def]
    client = _login(reviewer)
    assert "/freeze/" not in client.get(PROJECTS).content.decode()
    assert _freeze(client, project).status_code == 403
    project.refresh_from_db()
    assert project.frozen_at is None and not AuditEntry.objects.filter(action="project.frozen").exists()


def test_an_outsider_cannot_freeze_another_project(project, other_project) -> None:  # type: ignore[no-untyped-def]
    client = _login(factories.make_user("ada", role="admin", projects=[other_project]))
    assert _freeze(client, project).status_code == 404


def test_a_frozen_projects_approval_is_refused_in_the_console(scene: Scene, project, reviewer) -> None:  # type: ignore[no-untyped-def]
    ada = factories.make_user("ada", role="admin", projects=[project])
    _freeze(_login(ada), project)
    client = Client()
    client.force_login(reviewer)
    response = client.post(reverse("runs:approval_approve", args=[scene.approval.pk]),
                           {"version": scene.approval.version})
    assert response.status_code == 409
    assert "frozen" in response.content.decode()
    scene.approval.refresh_from_db()
    assert scene.approval.status == ApprovalStatus.PENDING


# --- per-project reviewers -------------------------------------------------------------------------------


@pytest.fixture
def paula(project, other_project):  # type: ignore[no-untyped-def]
    """Reviewer in `project` by her membership's roles; only a reader in `other_project`."""
    user = factories.make_user("paula")
    Membership.objects.create(user=user, project=project, roles=["reviewer"])
    Membership.objects.create(user=user, project=other_project, roles=[])
    client = Client()
    client.force_login(user)
    return client


def test_a_per_project_reviewer_is_offered_decisions_only_in_their_project(  # type: ignore[no-untyped-def]
        scene: Scene, other_scene: Scene, paula) -> None:
    mine = paula.get(reverse("runs:approval_detail", args=[scene.approval.pk])).content.decode()
    theirs = paula.get(reverse("runs:approval_detail", args=[other_scene.approval.pk]))
    assert theirs.status_code == 200  # reads
    assert reverse("runs:approval_approve", args=[scene.approval.pk]) in mine
    assert reverse("runs:approval_approve", args=[other_scene.approval.pk]) not in theirs.content.decode()
    inbox = paula.get(reverse("runs:approval_inbox")).content.decode()
    assert f'value="{scene.approval.pk}:' in inbox and f'value="{other_scene.approval.pk}:' not in inbox


def test_a_per_project_reviewer_cannot_decide_in_the_other_project(other_scene: Scene, paula) -> None:  # type: ignore[no-untyped-def]
    response = paula.post(reverse("runs:approval_approve", args=[other_scene.approval.pk]),
                          {"version": other_scene.approval.version})
    assert response.status_code == 403
    other_scene.approval.refresh_from_db()
    assert other_scene.approval.status == ApprovalStatus.PENDING


def test_bulk_decides_the_reviewers_project_and_refuses_the_other(  # type: ignore[no-untyped-def]
        scene: Scene, other_scene: Scene, paula) -> None:
    items = [f"{a.pk}:{a.version}:{a.action_fingerprint}" for a in (scene.approval, other_scene.approval)]
    response = paula.post(BULK, {"decision": "approve", "item": items})
    assert results(response) == {scene.approval.pk: "approved", other_scene.approval.pk: "not_a_reviewer"}
    assert ApprovalRequest.objects.get(pk=other_scene.approval.pk).status == ApprovalStatus.PENDING


def test_the_inbox_badge_counts_only_the_projects_the_user_reviews(  # type: ignore[no-untyped-def]
        scene: Scene, other_scene: Scene, other_project, paula) -> None:
    ask(other_project, "R-900")
    badge = paula.get(reverse("pending_count")).content.decode()
    assert ">1<" in badge.replace(" ", "")


def test_an_unknown_effect_is_decided_only_by_a_reviewer_of_its_project(  # type: ignore[no-untyped-def]
        project, other_project, paula) -> None:
    from runs_app.models import EffectStatus, ExternalEffect
    from tests.console.test_effect_decisions import _unknown_effect, _url

    theirs, mine = _unknown_effect(other_project, "pay-b"), _unknown_effect(project, "pay-a")
    page = paula.get(_url("effect_detail", theirs)).content.decode()
    assert _url("effect_abandon", theirs) not in page  # no decision offered where she only reads
    assert paula.post(_url("effect_abandon", theirs), {"reason": "refunded"}).status_code == 403
    assert ExternalEffect.objects.get(pk=theirs.pk).status == EffectStatus.UNKNOWN
    assert _url("effect_abandon", mine) in paula.get(_url("effect_detail", mine)).content.decode()
    assert paula.post(_url("effect_abandon", mine), {"reason": "refunded"}).status_code == 302
    assert ExternalEffect.objects.get(pk=mine.pk).status == EffectStatus.ABANDONED


def test_an_unknown_effect_of_a_frozen_project_is_not_decided(project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    from runs_app.models import EffectStatus, ExternalEffect
    from tests.console.test_effect_decisions import _unknown_effect, _url

    effect = _unknown_effect(project, "pay-f")
    _freeze(_login(factories.make_user("ada", role="admin", projects=[project])), project)
    response = reviewer_client.post(_url("effect_abandon", effect), {"reason": "refunded"})
    assert response.status_code == 409 and "frozen" in response.content.decode()
    assert ExternalEffect.objects.get(pk=effect.pk).status == EffectStatus.UNKNOWN


def test_a_per_project_operator_trims_only_in_their_project(project, other_project) -> None:  # type: ignore[no-untyped-def]
    from sessions_app.models import SessionItem
    from sessions_app.services import session_items_append

    olga = factories.make_user("olga")
    Membership.objects.create(user=olga, project=project, roles=["operator"])
    Membership.objects.create(user=olga, project=other_project, roles=["reviewer"])
    client = Client()
    client.force_login(olga)
    mine, theirs = factories.make_session(project, ref="S-a"), factories.make_session(other_project, ref="S-b")
    for session in (mine, theirs):
        session_items_append(project=session.project, session_id=session.pk,
                             items=[{"role": "user", "content": str(i)} for i in range(3)])
    trim = {"keep_last": 1, "expected_last_seq": 3, "confirm": "on"}
    assert 'id="trim"' not in client.get(reverse("sessions:session_timeline", args=[theirs.pk])).content.decode()
    assert client.post(reverse("sessions:session_trim", args=[theirs.pk]), trim).status_code == 403
    assert SessionItem.objects.filter(session=theirs).count() == 3
    assert 'id="trim"' in client.get(reverse("sessions:session_timeline", args=[mine.pk])).content.decode()
    assert client.post(reverse("sessions:session_trim", args=[mine.pk]), trim).status_code == 302
    assert SessionItem.objects.filter(session=mine).count() == 1


def test_membership_roles_edited_in_the_admin_are_audited(project) -> None:  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import User

    admin = User.objects.create_superuser("root", password="pw-123456")
    membership = Membership.objects.create(user=factories.make_user("paula"), project=project)
    client = Client()
    client.force_login(admin)
    response = client.post(reverse("admin:harness_membership_change", args=[membership.pk]),
                           {"user": membership.user_id, "project": project.pk, "roles": ["reviewer"]})
    assert response.status_code == 302, response.content.decode()[:2000]
    membership.refresh_from_db()
    assert membership.roles == ["reviewer"]
    entry = AuditEntry.objects.get(action="membership.roles")
    assert (entry.actor, entry.data["roles"], entry.data["before"]) == ("user:root", ["reviewer"], [])


def test_the_admin_freezes_a_project_through_the_same_service(project) -> None:  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import User

    client = Client()
    client.force_login(User.objects.create_superuser("root", password="pw-123456"))
    response = client.post(reverse("admin:harness_project_changelist"),
                           {"action": "freeze", "_selected_action": [project.pk]})
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.frozen_at is not None and project.frozen_by.username == "root"
    assert AuditEntry.objects.filter(action="project.frozen", actor="user:root").count() == 1


def test_assignment_follows_the_per_project_roles(scene: Scene, other_scene: Scene, reviewer_client, paula  # type: ignore[no-untyped-def]
                                                  ) -> None:
    from tests.console.test_approval_assign import _assign

    detail = reviewer_client.get(reverse("runs:approval_detail", args=[scene.approval.pk])).content.decode()
    assert '<option value="paula">paula</option>' in detail  # a reviewer of this project by her membership
    assert _assign(reviewer_client, scene, "paula").status_code == 302
    assert ApprovalRequest.objects.get(pk=scene.approval.pk).assigned_to.username == "paula"
    # In the project where she only reads, paula is no assignee and assigns nothing.
    other_reviewer = factories.make_user("rob", role="reviewer", projects=[other_scene.project])
    rob = Client()
    rob.force_login(other_reviewer)
    assert _assign(rob, other_scene, "paula").status_code == 302  # refused with a message, nothing written
    assert ApprovalRequest.objects.get(pk=other_scene.approval.pk).assigned_to is None
    assert _assign(paula, other_scene, "rob").status_code == 302
    assert ApprovalRequest.objects.get(pk=other_scene.approval.pk).assigned_to is None


def test_run_and_approval_actions_follow_the_per_project_roles(scene: Scene, other_scene: Scene,  # type: ignore[no-untyped-def]
                                                               project, other_project) -> None:
    from runs_app.models import Run, RunStatus

    olga = factories.make_user("olga")  # operator and reviewer in `project`, only a reader in `other_project`
    Membership.objects.create(user=olga, project=project, roles=["operator", "reviewer"])
    Membership.objects.create(user=olga, project=other_project, roles=[])
    client = Client()
    client.force_login(olga)
    theirs = other_scene.run
    inspector = client.get(reverse("runs:run_inspector", args=[theirs.pk])).content.decode()
    assert reverse("runs:run_cancel", args=[theirs.pk]) not in inspector
    response = client.post(reverse("runs:run_cancel", args=[theirs.pk]),
                           {"version": theirs.version, "reason": "not mine"})
    assert response.status_code == 403
    assert Run.objects.get(pk=theirs.pk).status != RunStatus.CANCELLED
    response = client.post(reverse("runs:approval_cancel", args=[other_scene.approval.pk]),
                           {"version": other_scene.approval.version, "reason": "not mine"})
    assert response.status_code == 403
    assert ApprovalRequest.objects.get(pk=other_scene.approval.pk).status == ApprovalStatus.PENDING
    mine = client.get(reverse("runs:run_inspector", args=[scene.run.pk])).content.decode()
    assert reverse("runs:run_cancel", args=[scene.run.pk]) in mine

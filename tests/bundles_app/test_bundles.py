"""Run bundles (issue 34, part 5), end to end: a run made through the API and the services on this database is
exported, imported into a second, fresh PostgreSQL database (a clone of the migrated template) by
`manage.py import_run` in a process of its own, and the two sides' run inspector and lineage pages say the same
(ids, urls and the "imported" mark aside). A tampered bundle is refused with its code and writes nothing; an
erased person's words are not in the bundle; an imported run refuses every write but a fork."""

import copy
import difflib
import gzip
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.test import Client
from rest_framework.test import APIClient

from bundles_app.bundle import KINDS, body_digest, seal, verify
from bundles_app.models import ImportedBundle
from bundles_app.services import bundle_export, bundle_import
from harness.actors import Actor
from harness.canonical import digest
from harness.http.errors import DomainError
from harness.models import AuditEntry, ImportedRow, Project
from memory_app.erasure import person_erase
from runs_app.models import Checkpoint, Run, RunEvent, RunStatus
from runs_app.services import approval_decide, approval_request_create, run_transition
from runs_app.services.checkpoints import checkpoint_create
from runs_app.services.effects import effect_deliver, effect_dispatch, effect_intend
from runs_app.services.forks import checkpoint_fork
from sessions_app.models import Session
from tests import factories, template_db
from tests.subprocesses import child_env, run_python

pytestmark = pytest.mark.django_db

MARK = "ZEPHYR-4417"  # alice's words: erased before one export
FACT = "The house style is British spelling"  # a project memory record the run's context read


@pytest.fixture(autouse=True)
def _no_resume_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("worker.tasks.enqueue_resume", lambda run_id: None)


def _agent(project: Project) -> APIClient:
    _, secret = factories.make_agent_token(project, name="bundle-agent")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


@pytest.fixture
def people(project: Project) -> dict[str, Any]:
    return {"operator": factories.make_user("olga", role="operator", projects=[project]),
            "admin": factories.make_user("ada", role="admin", projects=[project]),
            "reviewer": factories.make_user("rhea", role="reviewer", projects=[project])}


@pytest.fixture
def run(project: Project, people: dict[str, Any]) -> Run:
    """A run with what an inspector shows: alice's session items, a context snapshot that read memory, three
    checkpoints (a chain), an approval rhea decided, an effect delivered with its receipt, events, and a fork."""
    agent = _agent(project)
    session = agent.post("/api/v1/sessions/", {"role": "writer", "memory_policy": "external", "ref": "S-9",
                                               "metadata": {"user": "alice"}}, format="json").json()
    created = agent.post("/api/v1/runs/", {"session": session["id"], "ref": "R-9"}, format="json").json()
    run_id = created["id"]
    items = {"items": [{"role": "user", "content": {"text": f"my code is {MARK}"}, "run": run_id},
                       {"role": "assistant", "content": {"text": "noted"}, "run": run_id}]}
    assert agent.post(f"/api/v1/sessions/{session['id']}/items/", items, format="json",
                      HTTP_IDEMPOTENCY_KEY="items-1").status_code == 201
    fact = {"scope": "project", "content": FACT, "provenance_kind": "told", "source_session_id": session["id"],
            "source_item_seq": 2}
    assert agent.post("/api/v1/memory/records/", fact, format="json",
                      HTTP_IDEMPOTENCY_KEY="mem-1").status_code == 201
    assert agent.post("/api/v1/memory/context/", {"run_id": run_id, "query": "house style"}, format="json",
                      HTTP_IDEMPOTENCY_KEY="ctx-1").status_code == 201
    run_transition(project=project, run_id=run_id, to=RunStatus.RUNNING, expected_version=None)
    first = checkpoint_create(project=project, run_id=run_id, label="outline", cursor={"node": "outline"},
                              state={"chapters": 1})
    second = checkpoint_create(project=project, run_id=run_id, parent_id=first.pk, label="draft",
                               cursor={"node": "draft"}, state={"chapters": 2})
    checkpoint_create(project=project, run_id=run_id, parent_id=second.pk, label="polish",
                      cursor={"node": "polish"}, state={"chapters": 3})
    effect, _ = effect_intend(project=project, idempotency_key="pub-1", tool="publish", arguments={"ch": 1},
                              run_id=run_id)
    effect_dispatch(project=project, effect_id=effect.pk)
    effect_deliver(project=project, idempotency_key="pub-1", result={"url": "https://example.test/ch1"})
    approval = approval_request_create(project=project, run_id=run_id, tool="send_invoice", arguments={"n": 1},
                                       idempotency_key="inv-1", actor=Actor.for_agent("writer"), executor="agent")
    approval_decide(project=project, approval_id=approval.pk, actor=Actor.for_user(people["reviewer"]),
                    decision="approve", reason="fine by me")
    return Run.objects.get(pk=run_id)


def _operator_client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


_VOID = {"input", "br", "img", "meta", "link", "hr"}


class _Text(HTMLParser):
    """A page's visible text and link targets under <main> (or the body), the imported mark left out."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag in _VOID and self.skip:
            return
        if self.skip or found.get("id") == "imported-mark" or tag in ("script", "style"):
            self.skip += 1
            return
        for name in ("href", "action"):
            if found.get(name):
                self.parts.append(f"[{name}]")

    def handle_endtag(self, tag: str) -> None:
        if self.skip and tag not in _VOID:
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        if not self.skip and data.strip():
            self.parts.append(data.strip())


def _content(html: str) -> str:
    """The page's content modulo what must differ: ids and numbers (new local ids, urls), the project's slug, the
    csrf token, and the imported mark."""
    body = html.split("<main", 1)[-1]
    parser = _Text()
    parser.feed(body)
    text = "\n".join(parser.parts)
    return re.sub(r"\d+", "#", text)


def _pages(client: Client, run_id: int) -> dict[str, str]:
    pages = {}
    for name, url in (("inspector", f"/runs/{run_id}/"), ("lineage", f"/runs/{run_id}/lineage/")):
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        pages[name] = response.content.decode()
    return pages


_RENDER = """
import json, os
import django
django.setup()
from django.test.utils import setup_test_environment
setup_test_environment()
from django.core.management import call_command
from django.contrib.auth.models import User
from django.test import Client
from harness.models import Project
from tests import factories
args = json.loads(os.environ["BUNDLE_ARGS"])
admin = factories.make_user("ada", role="admin", projects=[])
admin.is_superuser = True
admin.save()
factories.make_user("rhea", role="reviewer", projects=[])
import io
call_command("import_run", args["file"], project=args["project"], by="ada", stdout=io.StringIO())
project = Project.objects.get(slug=args["project"])
from bundles_app.models import ImportedBundle
imported = ImportedBundle.objects.get(project=project)
client = Client()
client.force_login(admin)
out = {"run": imported.root_local_id}
for name, url in (("inspector", f"/runs/{imported.root_local_id}/"),
                  ("lineage", f"/runs/{imported.root_local_id}/lineage/")):
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    out[name] = response.content.decode()
print(json.dumps(out))
"""


@pytest.mark.slow  # ~11 s in a full run: started first (tests/parallel.py)
def test_a_run_exported_here_and_imported_on_a_fresh_database_shows_the_same_pages(
        project: Project, people: dict[str, Any], run: Run, tmp_path: Path, django_db_setup: Any) -> None:
    path = tmp_path / "r9.bundle.json.gz"
    call_command("export_run", str(run.pk), project=project.slug, by="olga", output=str(path), gzip=True)
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    bundle = json.loads(gzip.decompress(path.read_bytes()))
    assert bundle["manifest"]["counts"]["checkpoints"] == 4 and bundle["manifest"]["counts"]["effects"] == 1
    assert [m["content"] for m in bundle["records"]["memory"]] == [FACT]
    assert "approval.approved" in {a["action"] for a in bundle["records"]["audit"]}
    assert AuditEntry.objects.filter(project=project, action="bundle.exported", target_id=str(run.pk)).exists()
    here = _pages(_operator_client(people["admin"]), run.pk)

    fresh = f"{connection.settings_dict['NAME']}_bundle_import"
    template_db.clone_template_as(fresh)
    url = child_env()["DATABASE_URL"].rsplit("/", 1)[0] + f"/{fresh}"
    try:
        args = json.dumps({"file": str(path), "project": project.slug})
        out = json.loads(run_python(_RENDER, env=child_env(DATABASE_URL=url, BUNDLE_ARGS=args), timeout=120))
    finally:
        with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as maintenance:
            maintenance.execute(f'DROP DATABASE IF EXISTS "{fresh}" WITH (FORCE)')
    there = out
    assert "Imported from" in there["inspector"] and 'id="imported-mark"' in there["inspector"]
    assert 'id="imported-mark"' not in here["inspector"]
    for name in ("inspector", "lineage"):
        mine, theirs = _content(here[name]), _content(there[name])
        assert mine == theirs, "\n".join(difflib.unified_diff(mine.splitlines(), theirs.splitlines(), lineterm=""))
    # The pages are not empty shells: what the run holds is on both.
    for words in ("outline", "polish", "send_invoice", "publish", FACT):
        assert words in here["inspector"] + here["lineage"]


def _bundle(project: Project, people: dict[str, Any], run: Run) -> dict[str, Any]:
    return bundle_export(project=project, actor=Actor.for_user(people["operator"]), kind="run", root_id=run.pk)


def _refused(bundle: Any, people: dict[str, Any], slug: str = "imports") -> str:
    before = {m.__name__: m.objects.count() for m in (Run, Session, Checkpoint, RunEvent, ImportedBundle, Project)}
    with pytest.raises(DomainError) as caught:
        bundle_import(bundle=bundle, actor=Actor.for_user(people["admin"]), project_slug=slug)
    after = {m.__name__: m.objects.count() for m in (Run, Session, Checkpoint, RunEvent, ImportedBundle, Project)}
    assert after == before, "a refused bundle wrote something"
    return caught.value.code


def _reseal(bundle: dict[str, Any]) -> dict[str, Any]:
    """What a tamperer who recomputes every hash makes of an edited bundle."""
    return seal({k: v for k, v in bundle["manifest"].items() if k not in ("counts", "digests")}, bundle["records"])


def test_a_tampered_bundle_is_refused_with_its_code_and_writes_nothing(
        project: Project, people: dict[str, Any], run: Run) -> None:
    good = _bundle(project, people, run)
    verify(good)

    changed = copy.deepcopy(good)
    changed["records"]["checkpoints"][0]["state"] = {"chapters": 99}
    assert _refused(changed, people) == "bundle_digest_mismatch"

    rehashed = copy.deepcopy(good)
    rehashed["digest"] = "0" * 64
    assert _refused(rehashed, people) == "bundle_digest_mismatch"

    # The whole digest recomputed but not the manifest's: the kind that changed is named.
    edited = copy.deepcopy(good)
    edited["records"]["events"][0]["kind"] = "run.nothing_happened"
    edited["digest"] = body_digest(edited)
    assert _refused(edited, people) == "bundle_records_changed"

    dropped = copy.deepcopy(good)
    dropped["records"]["events"].pop()
    dropped["digest"] = body_digest(dropped)
    assert _refused(dropped, people) == "bundle_records_missing"

    reordered = copy.deepcopy(good)
    reordered["records"]["checkpoints"].reverse()
    assert _refused(_reseal(reordered), people) == "bundle_records_out_of_order"

    version = copy.deepcopy(good)
    version["version"] = 2
    assert _refused(version, people) == "bundle_version_unsupported"
    assert _refused({**good, "format": "something-else"}, people) == "bundle_format_unknown"

    # Hash-checked is integrity, not authenticity: a bundle resealed after an edit passes the checks.
    resealed = copy.deepcopy(good)
    resealed["records"]["runs"][0]["current_node"] = "edited"
    verify(_reseal(resealed))


def test_an_import_that_fails_midway_writes_nothing(project: Project, people: dict[str, Any], run: Run) -> None:
    """All or nothing: a bundle that passes the checks but names a row it does not carry is refused after some
    rows went in; the transaction takes them all back."""
    broken = copy.deepcopy(_bundle(project, people, run))
    broken["records"]["events"][0]["run_id"] = 10**12
    assert _refused(_reseal(broken), people) == "bundle_reference_broken"


def test_a_second_import_of_the_same_bundle_is_refused(project: Project, people: dict[str, Any], run: Run) -> None:
    bundle = _bundle(project, people, run)
    bundle_import(bundle=bundle, actor=Actor.for_user(people["admin"]), project_slug="copies")
    assert _refused(bundle, people, "copies") == "bundle_already_imported"
    # Into the source project its refs are taken: refused, naming them.
    assert _refused(bundle, people, project.slug) == "bundle_ref_taken"


def test_only_an_admin_creates_the_target_project_and_agents_move_no_bundle(
        project: Project, people: dict[str, Any], run: Run) -> None:
    bundle = _bundle(project, people, run)
    with pytest.raises(DomainError) as caught:
        bundle_import(bundle=bundle, actor=Actor.for_user(people["operator"]), project_slug="brand-new")
    assert caught.value.code == "not_an_admin" and not Project.objects.filter(slug="brand-new").exists()
    with pytest.raises(DomainError) as caught:
        bundle_export(project=project, actor=Actor.for_user(people["reviewer"]), kind="run", root_id=run.pk)
    assert caught.value.code == "not_an_operator"
    with pytest.raises(DomainError) as caught:
        bundle_export(project=project, actor=Actor.for_agent("writer"), kind="run", root_id=run.pk)
    assert caught.value.code == "not_an_operator"


def test_an_erased_persons_words_and_name_are_not_in_the_bundle(
        project: Project, people: dict[str, Any], run: Run) -> None:
    assert MARK in json.dumps(_bundle(project, people, run))
    person_erase(project=project, actor=Actor.for_user(people["admin"]), subject="alice", reason="GDPR request 17")
    text = json.dumps(_bundle(project, people, run))
    assert MARK not in text
    assert '"alice"' not in text
    assert FACT in text  # what was not theirs still travels


def test_no_secret_leaves(project: Project, people: dict[str, Any], run: Run) -> None:
    from harness.models import ApiToken

    text = json.dumps(_bundle(project, people, run))
    for token in ApiToken.objects.all():
        assert token.digest not in text
    for user in (people["operator"], people["admin"], people["reviewer"]):
        assert user.password not in text
    assert all(a["requested_by_token_id"] is None for a in _bundle(project, people, run)["records"]["approvals"])


@pytest.mark.django_db(transaction=True)  # each refusal as production has it: its own transaction, rolled back
def test_an_imported_run_refuses_every_write_but_a_fork(project: Project, people: dict[str, Any], run: Run) -> None:
    done = bundle_import(bundle=_bundle(project, people, run), actor=Actor.for_user(people["admin"]),
                         project_slug="imports")
    imported = Run.objects.get(pk=done.root_local_id)
    target = imported.project
    assert ImportedRow.objects.filter(kind="run", local_id=imported.pk, source_id=run.pk).exists()
    assert imported.status == run.status and imported.ref == run.ref and imported.pk != run.pk
    # Lineage remapped: the imported chain hangs off imported checkpoints.
    chain = list(Checkpoint.objects.filter(run=imported).order_by("pk"))
    source = list(Checkpoint.objects.filter(run=run).order_by("pk"))

    def shape(rows: list[Checkpoint]) -> list[int | None]:
        at = {c.pk: i for i, c in enumerate(rows)}
        return [at.get(c.parent_id) if c.parent_id else None for c in rows]

    assert len(chain) == 4 and shape(chain) == shape(source) and shape(chain)[1:3] == [0, 1]
    assert [c.content_hash for c in chain] == [c.content_hash for c in source]
    assert imported.last_checkpoint_id == chain[-1].pk

    # The API: an agent of the target project .
    agent = _agent(target)
    calls = [(f"/api/v1/runs/{imported.pk}/events/", {"kind": "note", "data": {}}),
             (f"/api/v1/runs/{imported.pk}/transition/", {"to": "cancelled", "expected_version": imported.version}),
             (f"/api/v1/sessions/{imported.session_id}/items/", {"items": [{"role": "user", "content": "x"}]})]
    for url, body in calls:
        answer = agent.post(url, body, format="json")
        assert answer.status_code == 409 and answer.json()["code"] == "imported_read_only", (url, answer.content)
    # The console: an operator's action on the run is refused the same way (a 409 page).
    client = Client()
    client.force_login(people["admin"])
    page = client.get(f"/runs/{imported.pk}/")
    assert page.status_code == 200 and b"Imported from" in page.content
    # The console's run action (an operator's cancel): a 409 page naming the refusal, nothing changed.
    answer = client.post(f"/runs/{imported.pk}/cancel/", {"version": imported.version, "reason": "tidy up"})
    assert answer.status_code == 409 and b"imported_read_only" in answer.content, answer.content[:500]
    # A service (the worker's and the admin's door): the same refusal.
    with pytest.raises(DatabaseError) as caught, transaction.atomic():
        run_transition(project=target, run_id=imported.pk, to=RunStatus.FAILED, expected_version=imported.version)
    assert "read-only" in str(caught.value)
    assert Run.objects.get(pk=imported.pk).version == imported.version

    # A fork of an imported checkpoint is a normal local run (in a new session: the imported one takes no run).
    fork = checkpoint_fork(project=target, checkpoint_id=chain[1].pk, actor=Actor.for_user(people["admin"]),
                           reason="try it locally", new_session=True)
    assert fork.checkpoint.parent_id == chain[1].pk
    assert not ImportedRow.objects.filter(kind="run", local_id=fork.run.pk).exists()
    run_transition(project=target, run_id=fork.run.pk, to=RunStatus.RUNNING, expected_version=None)
    assert RunEvent.objects.filter(run=imported, kind="run.fork_made").exists()


def test_the_api_exports_and_imports_for_a_persons_token(project: Project, people: dict[str, Any], run: Run) -> None:
    _, secret = factories.make_personal_token(people["admin"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    exported = client.post("/api/v1/bundles/export/", {"kind": "run", "id": run.pk}, format="json")
    assert exported.status_code == 200, exported.content
    bundle = exported.json()
    assert verify(bundle) and set(bundle["records"]) == set(KINDS)
    imported = client.post("/api/v1/bundles/import/", {"project": "api-copies", "bundle": bundle}, format="json")
    assert imported.status_code == 201, imported.content
    assert imported.json()["root"]["source_id"] == run.pk
    again = client.post("/api/v1/bundles/import/", {"project": "api-copies", "bundle": bundle}, format="json")
    assert again.status_code == 409 and again.json()["code"] == "bundle_already_imported"
    tampered = {**bundle, "digest": digest("x")}
    refused = client.post("/api/v1/bundles/import/", {"project": "api-copies-2", "bundle": tampered}, format="json")
    assert refused.status_code == 400 and refused.json()["code"] == "bundle_digest_mismatch"
    assert not Project.objects.filter(slug="api-copies-2").exists()


def test_the_console_exports_with_a_csrf_form_and_imports_a_file(
        project: Project, people: dict[str, Any], run: Run) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(people["operator"])
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="bundle-export"' in page
    token = page.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
    assert client.post(f"/bundles/export/run/{run.pk}/").status_code == 403  # no CSRF token
    download = client.post(f"/bundles/export/run/{run.pk}/", {"csrfmiddlewaretoken": token})
    assert download.status_code == 200 and "attachment" in download["Content-Disposition"]
    verify(json.loads(download.content))
    reviewer = Client()
    reviewer.force_login(people["reviewer"])
    assert 'id="bundle-export"' not in reviewer.get(f"/runs/{run.pk}/").content.decode()
    assert reviewer.post(f"/bundles/export/run/{run.pk}/").status_code == 403

    from django.core.files.uploadedfile import SimpleUploadedFile

    admin = Client()
    admin.force_login(people["admin"])
    upload = SimpleUploadedFile("r.json", download.content, content_type="application/json")
    answer = admin.post("/bundles/", {"project": "console-copies", "bundle": upload})
    assert answer.status_code == 302
    imported = ImportedBundle.objects.get(project__slug="console-copies")
    assert answer["Location"] == f"/runs/{imported.root_local_id}/"
    assert admin.get(f"/bundles/{imported.pk}/").status_code == 200
    bad = SimpleUploadedFile("r.json", download.content.replace(b'"polish"', b'"POLISH"'))
    refused = admin.post("/bundles/", {"project": "console-copies-2", "bundle": bad})
    assert refused.status_code == 400 and b"bundle_digest_mismatch" in refused.content


def test_a_session_and_a_task_travel_with_their_runs(project: Project, people: dict[str, Any], run: Run) -> None:
    from runs_app.models import Task
    from tests.factories import make_run, make_task

    second = make_run(project, Session.objects.get(pk=run.session_id))
    actor = Actor.for_user(people["admin"])
    session_bundle = bundle_export(project=project, actor=actor, kind="session", root_id=run.session_id)
    assert [r["id"] for r in session_bundle["records"]["runs"]] == [run.pk, second.pk]
    done = bundle_import(bundle=session_bundle, actor=actor, project_slug="session-copies")
    imported = Session.objects.get(pk=done.root_local_id)
    assert imported.ref == "S-9" and Run.objects.filter(session=imported).count() == 2
    client = Client()
    client.force_login(people["admin"])
    page = client.get(f"/sessions/{imported.pk}/").content.decode()
    assert 'id="imported-mark"' in page and "Imported from" in page

    task = make_task(project, ref="T-9")
    one, two = make_run(project, task_id=task.pk), make_run(project, task_id=task.pk)
    run_transition(project=project, run_id=one.pk, to=RunStatus.RUNNING, expected_version=None)
    step = checkpoint_create(project=project, run_id=one.pk, label="step", state={"plan": 0})
    checkpoint_create(project=project, task_id=task.pk, label="the task's own", state={"plan": 1})
    task_bundle = bundle_export(project=project, actor=actor, kind="task", root_id=task.pk)
    assert [r["id"] for r in task_bundle["records"]["runs"]] == [one.pk, two.pk]
    assert len(task_bundle["records"]["checkpoints"]) == 2  # the run's, and the task's own with no run
    done = bundle_import(bundle=task_bundle, actor=actor, project_slug="task-copies")
    copied = Task.objects.get(pk=done.root_local_id)
    assert copied.ref == "T-9" and copied.latest_checkpoint is not None
    assert copied.latest_checkpoint.task_id == copied.pk
    page = client.get(f"/tasks/{copied.pk}/").content.decode()
    assert 'id="imported-mark"' in page
    # A fork of the imported run's checkpoint is a local run of no task (the imported task takes no new run).
    copy_of_step = Checkpoint.objects.get(project=copied.project, label="step")
    assert copy_of_step.pk != step.pk and copy_of_step.task_id == copied.pk
    fork = checkpoint_fork(project=copied.project, checkpoint_id=copy_of_step.pk, actor=actor, reason="locally",
                           new_session=True)
    assert fork.run.task_id is None and fork.checkpoint.parent_id == copy_of_step.pk


def test_a_bundle_whose_effect_key_is_taken_in_the_target_project_is_refused_whole(
        project: Project, people: dict[str, Any], run: Run) -> None:
    bundle = _bundle(project, people, run)
    bundle["records"]["runs"][0]["ref"] = ""
    bundle["records"]["sessions"][0]["ref"] = ""
    # The same effect key exists in the source project: everything before the effects went in, then it is refused.
    assert _refused(_reseal(bundle), people, project.slug) == "bundle_conflicts"


@pytest.mark.django_db(transaction=True)
def test_the_recovery_pass_leaves_an_imported_run_alone(project: Project, people: dict[str, Any]) -> None:
    """An imported approval past its expiry is not expired (a write the triggers would refuse): the pass goes on
    with the local ones."""
    import datetime as dt

    from django.utils import timezone

    from runs_app.models import ApprovalRequest
    from worker.recovery import recovery_pass

    local = factories.make_run(project)
    run_transition(project=project, run_id=local.pk, to=RunStatus.RUNNING, expected_version=None)
    approval = approval_request_create(project=project, run_id=local.pk, tool="send_invoice", arguments={"n": 2},
                                       idempotency_key="inv-2", actor=Actor.for_agent("writer"), executor="agent")
    done = bundle_import(bundle=bundle_export(project=project, actor=Actor.for_user(people["admin"]), kind="run",
                                              root_id=local.pk),
                         actor=Actor.for_user(people["admin"]), project_slug="imports")
    past = timezone.now() - dt.timedelta(hours=1)
    ApprovalRequest.objects.filter(pk=approval.pk).update(expires_at=past)
    with connection.cursor() as cursor:  # the imported copy's clock ran out too (as the owner may set it)
        cursor.execute("ALTER TABLE runs_app_approvalrequest DISABLE TRIGGER runs_app_approvalrequest_imported_guard")
        ApprovalRequest.objects.filter(run_id=done.root_local_id).update(expires_at=past)
        cursor.execute("ALTER TABLE runs_app_approvalrequest ENABLE TRIGGER runs_app_approvalrequest_imported_guard")
    enqueued: list[int] = []
    report = recovery_pass(enqueue=enqueued.append)
    assert report["expired_approvals"] == [approval.pk]
    assert ApprovalRequest.objects.get(run_id=done.root_local_id).status == "pending"
    assert done.root_local_id not in enqueued


@pytest.mark.django_db(transaction=True)
def test_an_imported_pending_approval_cannot_be_decided_here(project: Project, people: dict[str, Any]) -> None:
    """It shows in the target project's inbox as it was, but a decision (the API's, the console's) is refused:
    the decision belongs to the source instance."""
    from runs_app.models import ApprovalRequest

    local = factories.make_run(project)
    run_transition(project=project, run_id=local.pk, to=RunStatus.RUNNING, expected_version=None)
    approval_request_create(project=project, run_id=local.pk, tool="send_invoice", arguments={"n": 3},
                            idempotency_key="inv-3", actor=Actor.for_agent("writer"), executor="agent")
    done = bundle_import(bundle=bundle_export(project=project, actor=Actor.for_user(people["admin"]), kind="run",
                                              root_id=local.pk),
                         actor=Actor.for_user(people["admin"]), project_slug="imports")
    copy_of = ApprovalRequest.objects.get(run_id=done.root_local_id)
    reviewer = factories.make_user("rita", role="reviewer", projects=[copy_of.project])
    _, secret = factories.make_personal_token(reviewer)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    answer = client.post(f"/api/v1/approvals/{copy_of.pk}/decision/",
                         {"decision": "approve", "expected_version": copy_of.version}, format="json")
    assert answer.status_code == 409 and answer.json()["code"] == "imported_read_only", answer.content
    console = Client()
    console.force_login(reviewer)
    page = console.get(f"/approvals/{copy_of.pk}/")
    assert page.status_code == 200
    assert ApprovalRequest.objects.get(pk=copy_of.pk).status == "pending"

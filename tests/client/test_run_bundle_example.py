"""examples/run_bundle.py against a live server: an admin's personal token exports a run as a bundle through the
API (the summary printed), then imports it into a new project; the imported run is read-only there."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bundles_app.models import ImportedBundle
from harness.models import IdempotentRequest, ImportedRow
from runs_app.models import Run
from runs_app.services.checkpoints import checkpoint_create
from tests import factories
from tests.client.conftest import Live
from tests.subprocesses import ROOT

pytestmark = pytest.mark.django_db(transaction=True)
EXAMPLE = ROOT / "examples" / "run_bundle.py"


def _example(live: Live, token: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HARNESS_URL": live.url, "HARNESS_TOKEN": token}
    return subprocess.run([sys.executable, str(EXAMPLE), *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_the_example_exports_a_run_and_imports_it_read_only(live: Live, tmp_path: Path) -> None:
    admin = factories.make_user("bundle-admin", role="admin", projects=[live.project])
    _, token = factories.make_personal_token(admin)
    run = factories.make_run(live.project, ref="R-101")
    first = checkpoint_create(project=live.project, run_id=run.pk, label="outline", state={"n": 1})
    checkpoint_create(project=live.project, run_id=run.pk, parent_id=first.pk, label="draft", state={"n": 2})
    path = tmp_path / "r101.bundle.json.gz"

    exported = _example(live, token, "export", "--run", "R-101", "--project", "clientco", "-o", str(path))
    assert exported.returncode == 0, exported.stderr
    assert f"bundle harness-bundle v1 of run {run.pk} from" in exported.stdout
    assert "checkpoints 2" in exported.stdout and "digest: " in exported.stdout
    assert path.read_bytes()[:2] == b"\x1f\x8b"

    imported = _example(live, token, "import", str(path), "--project", "clientco-copy")
    assert imported.returncode == 0, imported.stderr
    bundle = ImportedBundle.objects.get(project__slug="clientco-copy")
    assert f"/runs/{bundle.root_local_id}/" in imported.stdout and "read-only" in imported.stdout
    assert ImportedRow.objects.filter(kind="run", local_id=bundle.root_local_id, source_id=run.pk).exists()
    assert Run.objects.get(pk=bundle.root_local_id).ref == "R-101"

    again = _example(live, token, "import", str(path), "--project", "clientco-copy")
    assert again.returncode != 0 and "409 bundle_already_imported" in again.stderr
    # The client's methods: the same doors. The export's reply is never kept under its Idempotency-Key.
    with live.client(token) as client:
        bundle = client.export_bundle(kind="run", id=run.pk)
        assert bundle["manifest"]["counts"]["checkpoints"] == 2
        done = client.import_bundle(project="clientco-copy-2", bundle=bundle)
        assert done["root"]["source_id"] == run.pk
    assert not IdempotentRequest.objects.filter(path="/api/v1/bundles/export/", response_body__isnull=False).exists()
    # An agent's token moves no bundle.
    agent = _example(live, live.agent_token, "export", "--run", str(run.pk))
    assert agent.returncode != 0 and "403 not_an_operator" in agent.stderr

"""The checkpoint diff (state changes apart from the metadata, lists by id, fingerprints as bare hex, a shareable
URL) and the lineage's labels (the full text, and on a task's lineage the run of each checkpoint)."""

import re

import pytest
from django.urls import reverse

from runs_app.models import Checkpoint
from runs_app.presentation.diff import checkpoint_diff
from runs_app.services import checkpoint_create
from tests import factories
from tests.console.scenario import Scene

pytestmark = pytest.mark.django_db

HEX = "ab" * 32


def _diff_url(a: Checkpoint, b: Checkpoint) -> str:
    return reverse("runs:checkpoint_diff") + f"?a={a.pk}&b={b.pk}"


def _paths(body: str) -> list[str]:
    table = body.split('<table class="diff">', 1)[1].split("</table>", 1)[0]
    return re.findall(r"<tr class=\"diff-\w+\"><td><code>([^<]*)</code>", table)


def _child(scene: Scene, parent: Checkpoint, **fields) -> Checkpoint:  # type: ignore[no-untyped-def]
    return checkpoint_create(project=scene.project, run_id=scene.run.pk, parent_id=parent.pk, **fields)


def test_the_state_changes_leave_the_metadata_out_and_the_metadata_is_shown_apart(
    scene: Scene, reviewer_client,  # type: ignore[no-untyped-def]
) -> None:
    root, located = scene.checkpoints[0], scene.checkpoints[1]
    compared = checkpoint_diff(root, located)
    assert [(line.path, line.kind) for line in compared.lines] == [
        ("artifact_fingerprints", "added"), ("artifact_fingerprints.repo", "removed"),  # {"repo": …} → {}
        ("cursor.node", "changed"), ("state.root_cause", "added"), ("state.step", "changed"),
    ]
    metadata = {m.field: m for m in compared.metadata}
    assert set(metadata) == {"label", "content_hash", "authority_ref", "schema_version"}
    assert (metadata["label"].before, metadata["label"].after, metadata["label"].differs) == ("cloned", "located", True)
    assert metadata["content_hash"].differs and not metadata["schema_version"].differs
    body = reviewer_client.get(_diff_url(root, located), HTTP_HX_REQUEST="true", HTTP_HX_TARGET="diff").content.decode()
    assert _paths(body) == [line.path for line in compared.lines]
    assert '<span id="diff-count">5</span>' in body
    metadata_table = body.split('id="diff-metadata"', 1)[1]
    assert 'class="diff-changed" data-field="label"' in metadata_table and located.content_hash in metadata_table


def test_lists_of_objects_with_ids_compare_by_id_and_other_lists_by_index(scene: Scene) -> None:
    base = scene.checkpoints[3]
    a = _child(scene, base, state={"todos": [{"id": "t1", "done": False}, {"id": "t2", "done": False}],
                                   "files": ["a.py", "b.py"]})
    b = _child(scene, a, state={"todos": [{"id": "t0", "done": True}, {"id": "t1", "done": True},
                                          {"id": "t2", "done": False}],
                                "files": ["z.py", "a.py", "b.py"]})
    lines = {line.path: line.kind for line in checkpoint_diff(a, b).lines}
    assert lines == {
        'state.todos[id="t0"].done': "added", 'state.todos[id="t0"].id': "added",
        'state.todos[id="t1"].done': "changed",  # t2 did not change: no line for it
        "state.files[0]": "changed", "state.files[1]": "changed", "state.files[2]": "added",
    }
    # One item without an id (or two with the same id): the whole list is compared by index.
    c = _child(scene, b, state={"todos": [{"id": "t0", "done": True}, {"done": True}], "files": []})
    assert 'state.todos[1].done' in {line.path for line in checkpoint_diff(b, c).lines}


def test_a_fingerprint_that_differs_only_by_its_sha256_prefix_is_no_change(scene: Scene) -> None:
    base = scene.checkpoints[3]
    a = _child(scene, base, artifact_fingerprints={"repo": f"sha256:{HEX}", "notes": HEX})
    b = _child(scene, a, artifact_fingerprints={"repo": HEX, "notes": f"sha256:{HEX}"})
    assert [line.path for line in checkpoint_diff(a, b).lines if line.path.startswith("artifact")] == []
    c = _child(scene, b, artifact_fingerprints={"repo": "sha256:" + "cd" * 32, "notes": HEX})
    assert [(line.path, line.kind) for line in checkpoint_diff(b, c).lines] == [
        ("artifact_fingerprints.repo", "changed"),
    ]


def test_the_diff_url_the_lineage_pushes_opens_the_same_diff_as_a_page(
    scene: Scene, other_scene: Scene, reviewer_client, client,  # type: ignore[no-untyped-def]
) -> None:
    lineage = reviewer_client.get(reverse("runs:run_lineage", args=[scene.run.pk])).content.decode()
    button = re.search(r"<button[^>]*hx-get=\"[^\"]*\"[^>]*>Diff</button>", lineage)
    assert button and 'hx-push-url="true"' in button.group(0)
    located, fork = scene.checkpoints[1], scene.checkpoints[2]
    url = _diff_url(located, fork)
    partial = reviewer_client.get(url, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="diff")
    page = reviewer_client.get(url)  # the pushed URL, opened in a new tab or sent to a colleague
    assert partial.status_code == page.status_code == 200
    assert "HX-Request" in page["Vary"]
    partial_body, page_body = partial.content.decode(), page.content.decode()
    assert partial_body.lstrip().startswith('<div id="diff">') and "<html" in page_body
    assert _paths(page_body) == _paths(partial_body) == ["state.files[1]", "state.root_cause"]
    # Tenant scoping: another project's checkpoints are a 404, a signed-out visitor is sent to log in.
    assert reviewer_client.get(_diff_url(*other_scene.checkpoints[1:3])).status_code == 404
    assert reviewer_client.get(_diff_url(located, other_scene.checkpoints[2])).status_code == 404
    anonymous = client.get(url)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/login/")


def test_lineage_labels_carry_their_full_text_and_a_tasks_lineage_names_each_run(
    scene: Scene, reviewer_client,  # type: ignore[no-untyped-def]
) -> None:
    long_label = "after the reviewer's edit: retry the flaky login test with a fresh database"
    patched = scene.checkpoints[3]
    other_run = factories.make_run(scene.project, scene.session, task_id=scene.task.pk, ref="R-200")
    resumed = checkpoint_create(project=scene.project, run_id=other_run.pk, parent_id=patched.pk, label=long_label)

    body = reviewer_client.get(reverse("runs:task_lineage", args=[scene.task.pk])).content.decode()
    svg = body.split('<svg class="lineage"', 1)[1].split("</svg>", 1)[0]
    node = svg.split(f'data-checkpoint="{resumed.pk}">', 1)[1].split("</a>", 1)[0]
    assert f"<title>#{resumed.pk} after the reviewer&#x27;s edit: retry the flaky login test with a fresh database" \
           " (R-200)</title>" in node
    assert f">#{resumed.pk} after the reviewer&#x27;s edit: …</text>" in node
    assert '<text class="run"' in node and ">R-200</text>" in node
    patched_node = svg.split(f'data-checkpoint="{patched.pk}">', 1)[1].split("</a>", 1)[0]
    assert ">R-101</text>" in patched_node
    table = body.split("<h2>Checkpoints</h2>", 1)[1]
    assert long_label.replace("'", "&#x27;") in table and ">R-200</a>" in table and ">R-101</a>" in table

    # A run's own lineage shows the full label too, without a run line on every node.
    run_body = reviewer_client.get(reverse("runs:run_lineage", args=[other_run.pk])).content.decode()
    assert f"<title>#{resumed.pk} after the reviewer&#x27;s edit" in run_body and '<text class="run"' not in run_body

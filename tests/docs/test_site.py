"""The documentation site builds with --strict (issue 31, part 1): a broken link, a missing anchor, a page left
out of the nav or a missing included file fails here, as it would fail CI.

And the state-machines page shows each machine's transition table as the code declares it, so the page a user
reads cannot drift from the table every door goes through.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from memory_app.models import MEMORY_MACHINE
from runs_app.machines import APPROVAL_MACHINE, EFFECT_MACHINE, HANDOFF_MACHINE, RUN_MACHINE, TASK_MACHINE
from sessions_app.models import SESSION_MACHINE

ROOT = Path(__file__).resolve().parents[2]
MACHINES = {m.name: m for m in (SESSION_MACHINE, RUN_MACHINE, TASK_MACHINE, APPROVAL_MACHINE, EFFECT_MACHINE,
                                HANDOFF_MACHINE, MEMORY_MACHINE)}


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "concepts" / "resume" / "index.html").is_file()


def _documented_tables() -> dict[str, dict[str, set[str]]]:
    """Each `<!-- machine: NAME -->` table of the page: {source: {destinations}}, `—` for a terminal state."""
    text = (ROOT / "docs" / "concepts" / "state-machines.md").read_text()
    tables: dict[str, dict[str, set[str]]] = {}
    for name, body in re.findall(r"<!-- machine: (\w+) -->\n((?:\|.*\n)+)", text):
        rows = [line.split("|")[1:3] for line in body.splitlines()[2:]]
        tables[name] = {
            src.strip(" `"): {dst.strip(" `") for dst in dsts.split(",")} - {"—"}
            for src, dsts in rows
        }
    return tables


def test_the_state_machines_page_shows_every_table_as_declared() -> None:
    documented = _documented_tables()
    assert set(documented) == set(MACHINES)
    for name, machine in MACHINES.items():
        declared = {str(src): {str(dst) for dst in dsts} for src, dsts in machine.table.items()}
        assert documented[name] == declared, name


@pytest.mark.parametrize("page", sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md")))
def test_no_page_points_outside_the_project(page: str) -> None:
    """The design notes beside the repository are not the project's: its contract is in its own pages."""
    text = (ROOT / page).read_text()
    assert "../shared" not in text and "DESIGN.md" not in text


def test_the_readme_is_a_front_door_not_a_wall() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    assert "../shared" not in readme and "DESIGN.md" not in readme

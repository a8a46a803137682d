"""The fenced `bash` blocks of the README and the docs: the commands a reader is told to type, which
tests/docs/test_commands.py runs against a live console (docs/development/testing.md, "The docs").

Only ```bash fences count: ```sh is the convention for what is not run (long-running or machine-setup
commands), and ```python / ```nginx are not commands.
"""

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A fence opens at the start of a line (MkDocs would not treat an indented one inside a list as ours either)
# and closes at the next bare ``` line.
_FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository root, e.g. "docs/quickstart.md"
    line: int  # the opening fence's line, 1-based, so a failure points at it
    text: str


def bash_blocks(text: str, page: str = "<text>") -> list[Block]:
    """The page's ```bash blocks, in order."""
    return [
        Block(page=page, line=text.count("\n", 0, match.start()) + 1, text=match.group("body"))
        for match in _FENCE.finditer(text)
        if match.group("lang") == "bash"
    ]


def pages() -> list[str]:
    """README.md and every page of the site, as paths relative to the root."""
    return ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md"))]


def blocks_by_page() -> dict[str, list[Block]]:
    """Every page that has at least one ```bash block, with its blocks in order."""
    found = {page: bash_blocks((ROOT / page).read_text(), page) for page in pages()}
    return {page: blocks for page, blocks in found.items() if blocks}

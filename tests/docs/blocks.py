"""The fenced `bash` blocks of the README and the docs: the commands a reader is told to type, which
tests/docs/test_commands.py runs against a live console (docs/development/testing.md, "The docs").

Only ```bash fences count: ```sh is the convention for what is not run (long-running or machine-setup
commands), and ```python / ```nginx are not commands.
"""

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A fence opens a line, indented or not (inside a list item), and closes at the next bare ``` line indented
# the same; the body loses that indentation, as MkDocs shows it.
_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
                    re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository root, e.g. "docs/quickstart.md"
    line: int  # the opening fence's line, 1-based, so a failure points at it
    lang: str  # what follows the opening ```: "bash", "sh", "python", or ""
    text: str
    above: str  # the last non-blank line before the fence: where a `<!-- not run: ... -->` goes


def fenced_blocks(text: str, page: str = "<text>") -> list[Block]:
    """Every fenced block of the page, in order."""
    blocks = []
    for match in _FENCE.finditer(text):
        before = text[:match.start()].splitlines()
        blocks.append(Block(
            page=page, line=len(before) + 1, lang=match.group("lang"),
            text=textwrap.dedent(match.group("body")),
            above=next((line.strip() for line in reversed(before) if line.strip()), ""),
        ))
    return blocks


def bash_blocks(text: str, page: str = "<text>") -> list[Block]:
    """The page's ```bash blocks, in order: the ones the suite runs."""
    return [block for block in fenced_blocks(text, page) if block.lang == "bash"]


def pages() -> list[str]:
    """README.md and every page of the site, as paths relative to the root."""
    return ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md"))]


def blocks_by_page() -> dict[str, list[Block]]:
    """Every page that has at least one ```bash block, with its blocks in order."""
    found = {page: bash_blocks((ROOT / page).read_text(), page) for page in pages()}
    return {page: blocks for page, blocks in found.items() if blocks}

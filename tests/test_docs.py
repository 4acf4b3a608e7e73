"""The README and the pages of docs/: every relative link resolves (the file exists, and an
`#anchor` names a heading of the target as GitHub spells it), and the README stays a short page
that opens with its two commands."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

import pytest
from support import ROOT

README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
README_MAX_LINES = 300

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
CODE_SPAN = re.compile(r"`[^`\n]*`")
INLINE_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
HTML_ANCHOR = re.compile(r"<a\s[^>]*(?:name|id)=\"([^\"]+)\"")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def prose_lines(text: str) -> list[str]:
    """The lines of a Markdown text outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text, lower case, punctuation dropped, spaces as
    hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor of a page: its headings' slugs (a repeated one numbered as GitHub numbers
    it) and explicit HTML anchors."""
    found: set[str] = set()
    seen: Counter[str] = Counter()
    for line in prose_lines(page.read_text()):
        found.update(HTML_ANCHOR.findall(line))
        heading = HEADING.match(line)
        if heading:
            base = slug(heading.group(1))
            found.add(base if not seen[base] else f"{base}-{seen[base]}")
            seen[base] += 1
    return found


def link_targets(page: Path) -> list[str]:
    """The targets of a page's links, inline and reference-style, outside code."""
    targets = []
    for line in prose_lines(page.read_text()):
        prose = CODE_SPAN.sub("", line)
        targets += INLINE_LINK.findall(prose) + REFERENCE_LINK.findall(prose)
    return targets


def broken_links(page: Path, root: Path) -> list[str]:
    """Each relative link of `page` that does not resolve inside `root`, with why."""
    broken = []
    for target in link_targets(page):
        if SCHEME.match(target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / unquote(path)).resolve() if path else page
        if not dest.is_relative_to(root.resolve()) or not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and unquote(anchor) not in anchors(dest):
            broken.append(f"{target}: no heading of {dest.name} has the anchor #{anchor}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page, ROOT) == []


def test_the_check_finds_a_missing_file_a_wrong_anchor_and_a_wrong_local_anchor(
    tmp_path: Path,
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("# Page\n\n## Reader settings (`--set`)\n")
    (tmp_path / "README.md").write_text(
        "# Title\n\n## How to read the report\n\n"
        "[ok](docs/page.md#reader-settings---set) [ok](#how-to-read-the-report) "
        "[ok](https://example.org/x.md#nowhere) `[code](docs/gone.md)`\n"
        "[gone](docs/gone.md) [anchor](docs/page.md#reader-settings) [local](#nowhere)\n"
        "[outside](../elsewhere.md)\n"
        "```sh\n[fenced](docs/gone.md)\n```\n"
    )
    assert broken_links(tmp_path / "README.md", tmp_path) == [
        "docs/gone.md: no such file",
        "docs/page.md#reader-settings: no heading of page.md has the anchor #reader-settings",
        "#nowhere: no heading of README.md has the anchor #nowhere",
        "../elsewhere.md: no such file",
    ]


def test_anchors_are_spelled_as_github_spells_them(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# What `reports/latest/` holds\n\n## Iceberg's query types\n\n## Notes\n\n"
        "## Notes\n\n```sh\n# not a heading\n```\n## Comparing two runs: `lakecompat diff`\n"
    )
    assert anchors(page) == {
        "what-reportslatest-holds",
        "icebergs-query-types",
        "notes",
        "notes-1",
        "comparing-two-runs-lakecompat-diff",
    }


def test_the_readme_is_short_and_opens_with_its_two_commands() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= README_MAX_LINES
    content = [line for line in lines if line.strip()]
    assert content[0].startswith("# ")
    assert content[1] == "```sh" and content[4] == "```"
    assert content[2].startswith("make matrix ") and content[3].startswith("make test ")

"""Every relative link in README.md and docs/**/*.md points to a file or folder of the repository.

Links are read as a reader's Markdown viewer reads them: inline links and images, reference
definitions and HTML `src`/`href` attributes, outside fenced code blocks and code spans.
Addresses with a scheme (https:, mailto:) and in-page anchors are not checked. No compiled core
needed.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parent.parent

FENCE = re.compile(r"^\s{0,3}(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
# [text](target "title") and ![alt](target); link text may hold one level of brackets.
INLINE = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]"  # the text
    r"\(\s*(<[^>]*>|[^\s)]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)"  # (target "optional title")
)
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_ATTR = re.compile(r"\b(?:src|href)=\"([^\"]+)\"")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def markdown_files() -> list[Path]:
    """README.md and every Markdown file under docs/, in a stable order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every link in `text` that a viewer would follow, code excluded."""
    found: list[tuple[int, str]] = []
    in_fence = False
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        line = CODE_SPAN.sub("", line)
        targets = [m.group(1) for m in INLINE.finditer(line)]
        targets += [m.group(1) for m in REFERENCE.finditer(line)]
        targets += [m.group(1) for m in HTML_ATTR.finditer(line)]
        found += [(number, t[1:-1] if t.startswith("<") and t.endswith(">") else t) for t in targets]
    return found


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    """`file:line: target` for each relative link of `path` that leads nowhere or out of `root`."""
    bad = []
    for number, target in links(path.read_text(encoding="utf-8")):
        if not target or target.startswith("#") or SCHEME.match(target):
            continue
        relative = unquote(target.split("#", 1)[0].split("?", 1)[0])
        resolved = (path.parent / relative).resolve()
        if not resolved.exists() or not resolved.is_relative_to(root.resolve()):
            bad.append(f"{path.relative_to(root)}:{number}: {target}")
    return bad


def test_every_relative_link_in_the_docs_resolves() -> None:
    bad = [entry for path in markdown_files() for entry in broken_links(path)]
    assert bad == [], "links to missing files:\n" + "\n".join(bad)


def test_the_checker_reads_the_performance_pages() -> None:
    # Guards against a pattern that matches nothing (and so passes everything): the performance
    # front page links its history, data and topic pages.
    targets = {t for _, t in links((ROOT / "docs/performance/README.md").read_text(encoding="utf-8"))}
    assert {"history/README.md", "data/README.md", "quinn.md", "history/round-13.md"} <= targets


def test_links_in_code_are_skipped_and_broken_ones_found(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "here.md").write_text("x")
    (tmp_path / "outside.md").write_text("x")
    page = root / "docs" / "page.md"
    page.write_text(
        '[ok](here.md) and [gone](missing.md#part) and ![img](<sp ace.png> "t")\n'
        "`[code](nowhere.md)` [web](https://example.org/x) [anchor](#top) [up](../../outside.md)\n"
        "```\n[fenced](nowhere.md)\n```\n"
        '[ref]: also-missing.md\n<img src="here.md"> [nested [b]](here.md) [enc](here%2Emd)\n'
    )
    assert [t for _, t in links(page.read_text())] == [
        "here.md",
        "missing.md#part",
        "sp ace.png",
        "https://example.org/x",
        "#top",
        "../../outside.md",
        "also-missing.md",
        "here.md",
        "here%2Emd",
        "here.md",
    ]
    assert broken_links(page, root) == [
        "docs/page.md:1: missing.md#part",
        "docs/page.md:1: sp ace.png",
        "docs/page.md:2: ../../outside.md",
        "docs/page.md:6: also-missing.md",
    ]

"""Check the code layout rules of docs/architecture.md: no import circle between the modules of a
Rust crate, no source file over 800 lines, and every module opening with a line that says what
it is for (`//!` in Rust, a docstring in Python).

Usage: python3 scripts/check_layout.py   (exit status 1 and one line per problem if any)

A Rust module's imports are its `crate::a::b` and `super::a` paths outside `#[cfg(test)]`
(tests may reach anywhere); `a::b` inside a module folder is the module `a/b.rs` or
`a/b/mod.rs`. A circle is a path of such imports that returns to where it started.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 800


def rust_modules(src: Path) -> dict[tuple[str, ...], Path]:
    mods = {}
    for f in src.rglob("*.rs"):
        parts = list(f.relative_to(src).with_suffix("").parts)
        if parts[-1] in ("mod", "lib"):
            parts = parts[:-1]
        mods[tuple(parts)] = f
    return mods


def rust_imports(mods: dict[tuple[str, ...], Path]) -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    edges: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
    for m, f in mods.items():
        text = f.read_text().split("#[cfg(test)]")[0]
        out = set()
        for line in text.splitlines():
            if line.strip().startswith("//"):
                continue
            for base, rest in re.findall(r"\b(crate|super)((?:::[a-z_][a-z0-9_]*)+)", line):
                target: tuple[str, ...] = () if base == "crate" else m[:-1]
                for name in rest.strip(":").split("::"):
                    if (*target, name) not in mods:
                        break
                    target = (*target, name)
                if target and target != m and m[: len(target)] != target:
                    out.add(target)
        edges[m] = out
    return edges


def circles(edges: dict[tuple[str, ...], set[tuple[str, ...]]]) -> set[tuple[str, ...]]:
    found: set[tuple[str, ...]] = set()

    def walk(node: tuple[str, ...], path: list[tuple[str, ...]]) -> None:
        for nxt in edges.get(node, ()):
            if nxt in path:
                found.add(tuple(sorted("/".join(p) for p in path[path.index(nxt) :])))
            elif len(path) < 16:
                walk(nxt, [*path, nxt])

    for n in edges:
        walk(n, [n])
    return found


def problems() -> list[str]:
    out = []
    for src in sorted(ROOT.glob("crates/*/src")):
        for c in sorted(circles(rust_imports(rust_modules(src)))):
            out.append(f"{src.parent.name}: import circle between {', '.join(c)}")
    files = [*ROOT.glob("crates/**/*.rs"), *ROOT.glob("python/**/*.py"), *ROOT.glob("tests/*.py")]
    for f in sorted(p for p in files if "target" not in p.parts):
        lines = f.read_text().splitlines()
        rel = f.relative_to(ROOT)
        if len(lines) > MAX_LINES:
            out.append(f"{rel}: {len(lines)} lines (at most {MAX_LINES})")
        first = next((ln for ln in lines if ln.strip() and not ln.startswith("#!")), "")
        doc = first.startswith("//!") if f.suffix == ".rs" else first.lstrip().startswith(('"""', 'r"""'))
        if not doc:
            out.append(f"{rel}: does not open with a line saying what it is for")
    return out


if __name__ == "__main__":
    found = problems()
    for p in found:
        print(p)
    sys.exit(1 if found else 0)

"""Check the code layout rules of docs/architecture.md: no import circle between the modules of a
Rust crate or between the modules of the Python package, no source file over 800 lines, and
every module opening with a line that says what it is for (`//!` in Rust, a docstring in Python).

Usage: python3 scripts/check_layout.py   (exit status 1 and one line per problem if any)

A Rust module's imports are its `crate::a::b` and `super::a` paths in code outside
`#[cfg(test)]` (tests may reach anywhere); comments, doc comments and their links
(`[crate::a::B]`) are not imports. `a::b` inside a module folder is the module `a/b.rs` or
`a/b/mod.rs`.

A Python module's imports are its `import` and `from ... import` statements of `quicksim`
modules, at the top or inside a function alike (a deferred import is still a dependency), but
not those under `if TYPE_CHECKING:`, which never run. `from . import x` is the module `x` when
there is one. An import of a module's own enclosing package does not count (Python loads a
package before its modules anyway), as `crate::a` from inside `a` in Rust.

A circle is a path of such imports that returns to where it started.
"""

from __future__ import annotations

import ast
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
        text = _code(f.read_text().split("#[cfg(test)]")[0])
        out = set()
        for line in text.splitlines():
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


def _code(text: str) -> str:
    """`text` (Rust) with its comments (`//`, `///`, `//!`, `/* */`) and string and char literals
    blanked out, so neither a doc link nor a path in a message reads as an import."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                depth += text.startswith("/*", i) - text.startswith("*/", i)
                i += 2 if text.startswith(("/*", "*/"), i) else 1
            out.append(" ")
            continue
        raw = re.match(r'b?r(#*)"', text[i : i + 40]) if c in "br" and not _ident(text, i - 1) else None
        if raw:
            close = '"' + raw.group(1)
            j = text.find(close, i + raw.end())
            i = n if j < 0 else j + len(close)
            out.append('""')
            continue
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append('""')
            continue
        if c == "'":
            # A char literal ('/', '\n', '\''); a lifetime ('a) has no closing quote after one char.
            if text.startswith("\\", i + 1):
                j = text.find("'", i + 3)
            else:
                j = i + 2 if text.startswith("'", i + 2) else -1
            if j > 0:
                out.append("' '")
                i = j + 1
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _ident(text: str, i: int) -> bool:
    return i >= 0 and (text[i].isalnum() or text[i] == "_")


def python_modules(root: Path, package: str = "quicksim") -> dict[tuple[str, ...], Path]:
    """Module name (as a tuple) -> file, for every module of `package` under `root`."""
    mods = {}
    for f in (root / package).rglob("*.py"):
        parts = [package, *f.relative_to(root / package).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[tuple(parts)] = f
    return mods


def _runtime_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of `tree` except those under `if TYPE_CHECKING:`."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def python_imports(mods: dict[tuple[str, ...], Path]) -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    """Module -> the modules of the package it imports (see the module docstring)."""
    edges: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
    for m, f in mods.items():
        package = m if f.name == "__init__.py" else m[:-1]
        out = set()
        for node in _runtime_imports(ast.parse(f.read_text(), str(f))):
            if isinstance(node, ast.Import):
                targets = [tuple(a.name.split(".")) for a in node.names]
            else:
                base = package[: len(package) - node.level + 1] if node.level else ()
                base = (*base, *(node.module.split(".") if node.module else ()))
                targets = [(*base, a.name) if (*base, a.name) in mods else base for a in node.names]
            for target in targets:
                while target and target not in mods:
                    target = target[:-1]
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
    for c in sorted(circles(python_imports(python_modules(ROOT / "python")))):
        out.append(f"python: import circle between {', '.join(c)}")
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

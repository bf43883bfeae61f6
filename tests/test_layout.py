"""The code layout rules (scripts/check_layout.py): no import circle inside a crate or the Python
package, no file over 800 lines, every module saying what it is for; and the checker itself
finds a planted circle in either language."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from conftest import load_script

ROOT = Path(__file__).resolve().parent.parent


def _checker() -> ModuleType:
    return load_script("check_layout")


def test_the_repository_follows_the_layout_rules() -> None:
    assert _checker().problems() == []


def test_a_planted_circle_is_found(tmp_path: Path) -> None:
    c = _checker()
    src = tmp_path / "src"
    (src / "flows").mkdir(parents=True)
    (src / "lib.rs").write_text("//! crate\nmod world;\nmod flows;\n")
    (src / "world.rs").write_text("//! run loop\nuse crate::flows::udp::Udp;\n")
    (src / "flows" / "mod.rs").write_text("//! flows\npub mod udp;\n")
    (src / "flows" / "udp.rs").write_text(
        "//! udp\nuse crate::world::Ctx;\n#[cfg(test)]\nmod tests { use crate::world::X; }\n"
    )
    found = c.circles(c.rust_imports(c.rust_modules(src)))
    assert found == {("flows/udp", "world")}
    # A test module's imports do not count: without the one above, no circle.
    (src / "flows" / "udp.rs").write_text("//! udp\n#[cfg(test)]\nmod tests { use crate::world::X; }\n")
    assert c.circles(c.rust_imports(c.rust_modules(src))) == set()


def test_a_doc_link_or_a_string_is_not_an_import(tmp_path: Path) -> None:
    c = _checker()
    src = tmp_path / "src"
    src.mkdir()
    (src / "lib.rs").write_text("//! crate\nmod a;\nmod b;\n")
    (src / "a.rs").write_text("//! a\nuse crate::b::B;\n")
    (src / "b.rs").write_text(
        "//! b, beside [`crate::a::A`]\n/// See [crate::a::A].\npub struct B; // crate::a::A\n"
        '/* crate::a::A */\nconst M: &str = "crate::a::A";\nconst R: &str = r#"crate::a::A"#;\n'
        "fn f<'a>(x: &'a str) -> char { '/' }\n"
    )
    assert c.circles(c.rust_imports(c.rust_modules(src))) == set()
    (src / "b.rs").write_text("//! b\nfn f<'a>(x: &'a str) -> char { '/' }\nuse crate::a::A;\n")
    assert c.circles(c.rust_imports(c.rust_modules(src))) == {("a", "b")}


def test_a_planted_python_circle_is_found(tmp_path: Path) -> None:
    c = _checker()
    pkg = tmp_path / "quicksim"
    (pkg / "study").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""pkg"""\nfrom . import api\n')
    (pkg / "api.py").write_text('"""api"""\nfrom .errors import E\n')
    (pkg / "errors.py").write_text('"""errors"""\nE = 1\n')
    (pkg / "study" / "__init__.py").write_text(
        '"""study"""\nfrom .. import api\n\ndef run():\n    from . import text\n'
    )
    (pkg / "study" / "text.py").write_text(
        '"""text"""\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import plots\n'
        "from . import study\n"
    )
    (pkg / "study" / "plots.py").write_text('"""plots"""\nfrom .text import X\n')
    (pkg / "study" / "study.py").write_text('"""consts"""\nfrom ... import errors\n')
    edges = c.python_imports(c.python_modules(tmp_path))
    assert edges[("quicksim", "study")] == {("quicksim", "api"), ("quicksim", "study", "text")}
    # Type-only imports and imports of a module's own package do not count: no circle yet.
    assert c.circles(edges) == set()
    # A function-level import is a dependency like any other.
    (pkg / "study" / "study.py").write_text('"""consts"""\n\ndef f():\n    from .plots import Y\n')
    found = c.circles(c.python_imports(c.python_modules(tmp_path)))
    assert found == {("quicksim/study/plots", "quicksim/study/study", "quicksim/study/text")}


def test_the_bench_and_the_library_do_not_import_the_cli() -> None:
    """The benchmark harness and the library below it stand without the command line: only the
    CLI (and `python -m quicksim`) imports `quicksim.cli`."""
    c = _checker()
    edges = c.python_imports(c.python_modules(ROOT / "python"))
    reach = {
        m: sorted(t for t in targets if t[:2] == ("quicksim", "cli"))
        for m, targets in edges.items()
        if m[:2] != ("quicksim", "cli") and m != ("quicksim", "__main__")
    }
    assert {m: t for m, t in reach.items() if t} == {}

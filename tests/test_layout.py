"""The code layout rules (scripts/check_layout.py): no import circle inside a crate, no file over
800 lines, every module saying what it is for; and the checker itself finds a planted circle."""

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

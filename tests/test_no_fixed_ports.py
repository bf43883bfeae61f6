"""Issue 39: the test suite binds no fixed port, so it runs beside any other program (a Dask test
bound the dashboard's 8787 and failed while another program held it). Every Dask cluster a test
starts has its dashboard off or on port 0 and its scheduler on port 0; this reads the tests'
own source, so a new test that forgets is caught here."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    def called(node: ast.Call) -> str:
        f = node.func
        return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""

    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and called(n) == name]


def _sources() -> dict[Path, ast.AST]:
    return {p: ast.parse(p.read_text(), str(p)) for p in sorted(TESTS.glob("*.py"))}


def test_every_local_cluster_has_no_fixed_port() -> None:
    bad = []
    for path, tree in _sources().items():
        for call in _calls(tree, "LocalCluster"):
            kw = {k.arg: k.value for k in call.keywords}
            dashboard = kw.get("dashboard_address")
            off = isinstance(dashboard, ast.Constant) and (
                dashboard.value is None or str(dashboard.value).endswith(":0")
            )
            port = kw.get("scheduler_port")
            zero = isinstance(port, ast.Constant) and port.value == 0
            if not (off and zero):
                bad.append(f"{path.name}:{call.lineno}")
    assert not bad, f"LocalCluster without dashboard_address=None (or ':0') and scheduler_port=0: {bad}"


def test_every_dask_command_line_asks_for_port_0() -> None:
    """`dask scheduler` / `dask worker` started by a test: `--dashboard-address HOST:0`, and the
    scheduler `--port 0`."""
    bad = []
    for path in sorted(TESTS.glob("*.py")):
        text = path.read_text()
        if '"scheduler"' in text and "dask" in text and path.name != Path(__file__).name:
            if '"--dashboard-address"' not in text or '"--port", "0"' not in text:
                bad.append(path.name)
            for line in text.splitlines():
                if "--dashboard-address" in line and ":0" not in line and '"127.0.0.1:0"' not in line:
                    bad.append(f"{path.name}: {line.strip()}")
    assert not bad, bad


def test_no_test_names_a_fixed_dask_port() -> None:
    bad = [
        f"{p.name}:{i}"
        for p in sorted(TESTS.glob("*.py"))
        if p.name != Path(__file__).name
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if (":8787" in line or "8787," in line) and not line.lstrip().startswith("#")
    ]
    assert not bad, bad

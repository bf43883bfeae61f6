"""scripts/rustc-pgo, the rustc wrapper that applies the PGO profile: which compilations get it.

A fake rustc prints the arguments it was called with (and an LLVM version for `-vV`), so each
case checks the exact flags the wrapper adds, without compiling anything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WRAPPER = ROOT / "scripts" / "rustc-pgo"
PROFILE = ROOT / "pgo" / "quicksim.profdata"

pytestmark = pytest.mark.skipif(shutil.which("sh") is None, reason="the wrapper is a POSIX sh script")


def _fake_rustc(tmp_path: Path, llvm: str = "22.1.2") -> Path:
    rustc = tmp_path / "rustc"
    rustc.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = -vV ]; then echo "rustc 9.9.9"; echo "LLVM version: {llvm}"; exit 0; fi\n'
        'printf "%s\\n" "$@"\n'
    )
    rustc.chmod(0o755)
    return rustc


def _run(rustc: Path, *args: str, mode: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("QUICKSIM_PGO", None)
    if mode is not None:
        env["QUICKSIM_PGO"] = mode
    return subprocess.run(
        [str(WRAPPER), str(rustc), *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60
    )


OURS = ["--crate-name", "quicksim_net", "crates/quicksim-net/src/lib.rs", "-C", "opt-level=3"]


def test_an_optimised_build_of_a_quicksim_crate_gets_the_profile(tmp_path: Path) -> None:
    if not PROFILE.is_file():
        pytest.skip("no committed profile")
    out = _run(_fake_rustc(tmp_path), *OURS).stdout.splitlines()
    assert out == [*OURS, f"-Cprofile-use={PROFILE}", "--cfg", "quicksim_pgo"]


@pytest.mark.parametrize(
    "args",
    [
        # a dependency: its source path is absolute
        ["--crate-name", "serde", "/registry/serde-1.0/src/lib.rs", "-C", "opt-level=3"],
        # a debug build
        ["--crate-name", "quicksim_net", "crates/quicksim-net/src/lib.rs", "-C", "opt-level=0"],
        # a test harness (the profile was made from the library code, not from cfg(test) code)
        [*OURS, "--test"],
    ],
    ids=["dependency", "debug", "test-harness"],
)
def test_other_compilations_pass_through_unchanged(tmp_path: Path, args: list[str]) -> None:
    assert _run(_fake_rustc(tmp_path), *args).stdout.splitlines() == args


def test_an_older_llvm_builds_without_the_profile(tmp_path: Path) -> None:
    # An indexed profile cannot be read by an LLVM older than the one that wrote it.
    made_by = (ROOT / "pgo" / "quicksim.profdata.llvm").read_text().strip()
    older = str(int(made_by.split(".")[0]) - 1) + ".0.0"
    assert _run(_fake_rustc(tmp_path, older), *OURS).stdout.splitlines() == OURS


def test_modes_off_and_generate(tmp_path: Path) -> None:
    rustc = _fake_rustc(tmp_path)
    assert _run(rustc, *OURS, mode="off").stdout.splitlines() == OURS
    gen = _run(rustc, *OURS, mode="generate:/tmp/raw").stdout.splitlines()
    # The same cfg as the optimised build's (`use`): a different cfg changed some functions'
    # control-flow hashes, and a fresh profile did not apply to them.
    assert gen == [*OURS, "-Cprofile-generate=/tmp/raw", "--cfg", "quicksim_pgo"]


def test_an_unknown_mode_is_an_error_naming_it(tmp_path: Path) -> None:
    r = _run(_fake_rustc(tmp_path), *OURS, mode="fast")
    assert r.returncode == 2
    assert "QUICKSIM_PGO=fast" in r.stderr and "use, off, generate:DIR" in r.stderr


def _rustc_rejecting_profiles(tmp_path: Path, message: str) -> Path:
    """A fake rustc that fails with `message` when handed a profile, and else prints its arguments."""
    rustc = tmp_path / "rustc"
    rustc.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = -vV ]; then echo "rustc 9.9.9"; echo "LLVM version: 99.0.0"; exit 0; fi\n'
        'for a in "$@"; do case $a in -Cprofile-use=*) echo "' + message + '" >&2; exit 1 ;; esac; done\n'
        'printf "%s\\n" "$@"\n'
    )
    rustc.chmod(0o755)
    return rustc


def test_a_profile_the_toolchain_cannot_read_warns_and_builds_without_it(tmp_path: Path) -> None:
    if not PROFILE.is_file():
        pytest.skip("no committed profile")
    msg = "error: Could not read profile data file: unsupported instrumentation profile format version"
    r = _run(_rustc_rejecting_profiles(tmp_path, msg), *OURS)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == OURS
    assert "building without PGO" in r.stderr


def test_a_compile_error_with_the_profile_is_still_an_error(tmp_path: Path) -> None:
    if not PROFILE.is_file():
        pytest.skip("no committed profile")
    r = _run(_rustc_rejecting_profiles(tmp_path, "error[E0308]: mismatched types"), *OURS)
    assert r.returncode == 1
    assert "mismatched types" in r.stderr
    assert r.stdout == ""

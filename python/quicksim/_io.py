"""Atomic file writes shared by results, sweeps, plots and reproductions: write to a temporary
name in the same directory, fsync, rename. A reader never sees a half-written file, and a
crash leaves the previous version (or nothing) in place. Also the JSON layout of result files
(`dumps_readable`), the provenance stored in Parquet files (`parquet_writer`), the one rule by
which a name becomes a file name (`file_name`), the check of an output folder (`out_dir`) and
its exclusive lock (`locked_folder`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ScenarioError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "PARQUET_KEY",
    "atomic_write",
    "atomic_write_text",
    "dumps_readable",
    "file_name",
    "locked_folder",
    "out_dir",
    "parquet_writer",
]

PARQUET_KEY = b"quicksim"
"""Key of the JSON provenance (seed, scenario hash, versions, table) in a Parquet file's
key-value metadata: `pyarrow.parquet.read_schema(path).metadata[b"quicksim"]`."""


def atomic_write(path: Path, write: Callable[[Path], object]) -> None:
    """Write via a temporary file in the same directory, then rename over `path`."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        write(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """`atomic_write` of UTF-8 text."""
    atomic_write(path, lambda p: p.write_text(text, encoding="utf-8"))


def parquet_writer(
    frame: pd.DataFrame, provenance: Mapping[str, Any] | None = None
) -> Callable[[Path], object]:
    """A writer for `atomic_write` that stores `frame` as Parquet, without its index, with
    `provenance` as JSON under PARQUET_KEY in the file's metadata (a file copied out of its
    folder still says which scenario, seed and version made it)."""
    if not provenance:
        return lambda path: frame.to_parquet(path, index=False)

    def write(path: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(frame, preserve_index=False)
        metadata = dict(table.schema.metadata or {})
        metadata[PARQUET_KEY] = json.dumps(dict(provenance), sort_keys=True).encode()
        pq.write_table(table.replace_schema_metadata(metadata), path)

    return write


def dumps_readable(value: Any, levels: int = 2, *, _depth: int = 0) -> str:
    """JSON with the outer `levels` levels indented and everything deeper on one line.

    A summary of 10 000 flows reads as one line per flow, and is written by the C encoder in
    pieces (`json.dumps(indent=...)` runs the pure-Python encoder: seconds for such a file).
    Strict: NaN or infinity raise ValueError.
    """
    if levels <= 0 or not isinstance(value, dict | list) or not value:
        return json.dumps(value, allow_nan=False)
    pad, end = "  " * (_depth + 1), "  " * _depth
    if isinstance(value, dict):
        items = [
            f"{pad}{json.dumps(str(k))}: {dumps_readable(v, levels - 1, _depth=_depth + 1)}"
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + end + "}"
    items = [pad + dumps_readable(v, levels - 1, _depth=_depth + 1) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + end + "]"


_PLAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")
MAX_FILE_NAME = 200
"""Longest file name `file_name` returns, in bytes: below the 255 of every common file system,
with room for the `.<name>.tmp-<pid>` of `atomic_write`."""


def file_name(label: str) -> str:
    """The file name a user-given name (a flow's qlog file, a sweep plot) is written under.

    The one rule for every name that becomes a file: a name made of ASCII letters, digits, `-`,
    `_` and `.` that does not start with `.` is its own file name (`sender1.client.sqlog`);
    otherwise every other byte of its UTF-8 form is written `%XX` and a leading `.` as `%2E`
    (`../../x` -> `%2E.%2F..%2Fx`, `a/b` -> `a%2Fb`, `/tmp/x` -> `%2Ftmp%2Fx`). So the result
    never holds a path separator, is never `.`, `..` or hidden, and two names never share a file
    (`%` is escaped too). A result longer than MAX_FILE_NAME bytes keeps its first part, `~`, 16
    hex digits of the SHA-256 of the name and its last 24 characters (its extension); the empty
    name is `%`.
    """
    if not label:
        return "%"
    escaped = "".join(c if c in _PLAIN else _percent(c) for c in label)
    if escaped.startswith("."):
        escaped = "%2E" + escaped[1:]
    if len(escaped) > MAX_FILE_NAME:
        digest = hashlib.sha256(label.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        tail = escaped[-24:]
        escaped = f"{escaped[: MAX_FILE_NAME - len(tail) - 17]}~{digest}{tail}"
    return escaped


def _percent(c: str) -> str:
    return "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass"))


def out_dir(value: str | os.PathLike[str], field: str = "out") -> Path:
    """An output folder as given by the user, refused (ScenarioError naming `field`) when empty:
    `Path("")` is the current directory, where a run's tables would land among unrelated files."""
    text = os.fsdecode(os.fspath(value))
    if not text.strip():
        raise ScenarioError(f"{field}: {text!r} is not a folder; name one, e.g. {field} out/run1")
    return Path(text)


_HELD: dict[str, list[int]] = {}  # real path -> [file descriptor, depth]: this process's locks
_HELD_GUARD = threading.Lock()


@contextlib.contextmanager
def locked_folder(folder: Path, field: str = "out") -> Iterator[Path]:
    """Create `folder` if needed and hold an exclusive lock on it for the block: a second quicksim
    process writing into the same folder is refused at once (ScenarioError naming `field` and
    the folder) instead of mixing its tables with this one's. `flock` on the folder itself (no
    lock file among the outputs), so the kernel releases it when the holder dies: no stale lock
    after a kill. Re-entrant within a process (the CLI holds it around `run` and `save`, which
    take it too). A folder created here and still empty when the block fails is removed again.
    Without `fcntl` (Windows), or on a file system that cannot lock, there is no lock."""
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with _flock(folder, field):
            yield folder
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                folder.rmdir()  # only if empty: what a failed run wrote stays
        raise


@contextlib.contextmanager
def _flock(folder: Path, field: str) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on Linux or macOS
        yield
        return
    key = os.path.realpath(folder)
    with _HELD_GUARD:
        held = _HELD.get(key)
        if held is not None:
            held[1] += 1
        else:
            fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise ScenarioError(
                    f"{field}: {folder} is in use by another quicksim run; wait for it to end "
                    "or choose another folder"
                ) from None
            except OSError:  # a file system without locks (some network mounts): run unlocked
                pass
            held = _HELD[key] = [fd, 1]
    try:
        yield
    finally:
        with _HELD_GUARD:
            held[1] -= 1
            if held[1] == 0:
                del _HELD[key]
                with contextlib.suppress(OSError):  # not locked (a file system without locks)
                    fcntl.flock(held[0], fcntl.LOCK_UN)
                os.close(held[0])

"""Run I/O without torch: atomic file writes with ordinary permissions, JSON, and where
scripts find the model file.

Every file a run writes (checkpoints, training state, JSON results, charts, the optimal
solver's table) goes through ``atomic_write``: a crash at any point leaves either the old
file or the new one, never half of one. The file gets the permissions ``open()`` would give
it (``0o666`` less the umask), not the private ``0o600`` of a temporary file.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from typing import IO, Any, Callable

DEFAULT_CHECKPOINT = "rubik_policy_value.pt"  # what main.py writes, in the working folder
PRETRAINED_CHECKPOINT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pretrained", DEFAULT_CHECKPOINT)


TEMP_PREFIX = ".tmp-"  # temp files of atomic_write: ".tmp-<pid>-<random><final name>"


class CheckpointError(Exception):
    """A checkpoint is missing, unreadable, or does not fit the network. The message is one sentence."""


class OutputError(OSError):
    """An output location cannot be written (a directory where a file goes, no permission,
    a read-only or full file system). The message is one sentence. An ``OSError``, so that
    code that handles failed writes keeps handling it."""


def _file_mode() -> int:
    """``0o666`` less the process umask: what a plain ``open(path, "w")`` would create."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


FILE_MODE = _file_mode()


def atomic_write(path: str | os.PathLike, write_fn: Callable[[IO], Any], mode: str = "wb") -> None:
    """Write through ``write_fn(file)`` to a temp file beside ``path``, then ``os.replace``."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
        # The writer's pid in the name: remove_stale_temps can tell a dead writer's leftover.
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f"{TEMP_PREFIX}{os.getpid()}-", suffix=os.path.basename(path))
    except OSError as exc:
        raise OutputError(f"cannot write '{path}' ({exc.strerror or exc}).") from exc
    try:
        os.chmod(tmp, FILE_MODE)  # mkstemp makes it private; results are ordinary files
        with os.fdopen(fd, mode) as f:
            write_fn(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, OutputError):
            raise OutputError(f"cannot write '{path}' ({exc.strerror or exc}).") from exc
        raise


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` is running (a zombie, killed but not yet reaped, counts as gone)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):  # no /proc (not Linux): the signal test above is all we have
        return True


def remove_stale_temps(directory: str | os.PathLike, prefix: str = TEMP_PREFIX) -> list[str]:
    """Remove the temp files ``atomic_write`` left in ``directory`` when its writer was killed
    (``kill -9`` during a save): files named ``<prefix><pid>-...`` whose pid is no running
    process. A live writer's temp file is kept. Returns the removed paths; a missing
    ``directory`` or a file that cannot be removed is skipped."""
    directory = os.fspath(directory) or "."
    pattern = re.compile(re.escape(prefix) + r"(\d+)-")
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    removed = []
    for name in names:
        match = pattern.match(name)
        if match is None or int(match.group(1)) == os.getpid() or process_alive(int(match.group(1))):
            continue
        path = os.path.join(directory, name)
        try:
            if os.path.isfile(path) and not os.path.islink(path):
                os.unlink(path)
                removed.append(path)
        except OSError:
            pass
    return removed


def check_writable(path: str | os.PathLike, folder: bool = False) -> None:
    """Raise OutputError (one sentence) unless a file can be written at ``path`` (``folder``:
    files inside the folder ``path``), checked before a run's work starts. Nothing is left
    behind: a probe file is written and removed in the nearest folder that exists (missing
    folders below it would be created there); permission bits say nothing for root or a
    read-only mount."""
    path = os.fspath(path)
    if not path:
        raise OutputError("an output location is empty (an unset shell variable?).")
    if not folder and os.path.isdir(path):
        raise OutputError(f"cannot write the file '{path}': it is a directory.")
    if folder and os.path.exists(path) and not os.path.isdir(path):
        raise OutputError(f"cannot write into '{path}': it is a file, not a folder.")
    base = os.path.abspath(path) if folder else os.path.dirname(os.path.abspath(path))
    while not os.path.exists(base):
        base = os.path.dirname(base)
    if not os.path.isdir(base):
        raise OutputError(f"cannot write to '{path}': '{base}' is a file, not a folder.")
    try:
        fd, probe = tempfile.mkstemp(dir=base, prefix=f"{TEMP_PREFIX}{os.getpid()}-", suffix=".probe")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputError(f"cannot write to '{path}' ({exc.strerror or type(exc).__name__}).") from None


def write_json(path: str | os.PathLike, data) -> None:
    """``data`` as indented JSON, written atomically: readers never see half a file."""
    atomic_write(path, lambda f: f.write(json.dumps(data, indent=2).encode()), mode="wb")


def read_json(path: str | os.PathLike):
    """The JSON value stored at ``path``."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def short_path(path: str) -> str:
    """``path`` relative to the working folder when it lies inside it (what scripts print)."""
    rel = os.path.relpath(path)
    return path if rel.startswith(os.pardir) else rel


def find_checkpoint(explicit: str | None = None, name: str = DEFAULT_CHECKPOINT) -> str:
    """The model file scripts use: ``explicit`` if given, else ``./<name>``, else the shipped
    ``pretrained/<name>`` (``name``: the puzzle's model file, ``rubik_policy_value.pt`` for the
    2x2). Raises CheckpointError if none exists."""
    if explicit:
        if not os.path.isfile(explicit):
            raise CheckpointError(
                f"checkpoint '{explicit}' does not exist; train a model with 'python main.py' "
                f"(it writes ./{DEFAULT_CHECKPOINT}) or pass an existing --checkpoint."
                if name == DEFAULT_CHECKPOINT
                else f"checkpoint '{explicit}' does not exist; pass an existing --checkpoint."
            )
        return explicit
    pretrained = (
        PRETRAINED_CHECKPOINT
        if name == DEFAULT_CHECKPOINT
        else os.path.join(os.path.dirname(PRETRAINED_CHECKPOINT), name)
    )
    for candidate in (name, pretrained):
        if os.path.isfile(candidate):
            return short_path(candidate)
    if name == DEFAULT_CHECKPOINT:
        raise CheckpointError(
            f"no model found: neither ./{DEFAULT_CHECKPOINT} nor {os.path.relpath(PRETRAINED_CHECKPOINT)} exists; "
            "train one with 'python main.py' or pass --checkpoint PATH."
        )
    raise CheckpointError(
        f"no model found: neither ./{name} nor {os.path.relpath(pretrained)} exists; pass --checkpoint PATH "
        "(or use --solver bestfirst, which needs no network)."
    )

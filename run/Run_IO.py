"""Run I/O without torch: safe file writes with ordinary permissions, run locks, JSON, and
where scripts find the model file.

Every file a run writes (checkpoints, training state, JSON results, charts, screenshots, the
optimal solver's table) goes through ``atomic_write``: a crash at any point leaves either the
old file or the new one, never half of one, and never a temp file after SIGTERM. A symbolic
link is followed (its target is replaced, the link stays); anything that is not a regular file
(a directory, a device, a FIFO) is refused, never replaced; a full disk is one sentence
whichever layer met it. The file gets the permissions ``open()`` would give it (``0o666``
less the umask), not the private ``0o600`` of a temporary file.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import signal
import stat
import tempfile
from typing import IO, Any, Callable

DEFAULT_CHECKPOINT = "rubik_policy_value.pt"  # what main.py writes, in the working folder
#: The repository's root (this file is in its run/ package): where the shipped models are.
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRETRAINED_CHECKPOINT = os.path.join(REPO, "pretrained", DEFAULT_CHECKPOINT)


TEMP_PREFIX = ".tmp-"  # temp files of atomic_write: ".tmp-<pid>-<random><final name>"

#: Signals that end a process without Python's clean-up: held while a temp file exists.
_HELD_SIGNALS = {signal.SIGTERM, signal.SIGHUP}

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)


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


def _kind(mode: int) -> str:
    """What a non-regular file is, from its ``st_mode``: "a directory", "a FIFO (named pipe)", ..."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def not_a_file(path: str | os.PathLike) -> str | None:
    """Why ``path`` is no regular file to read (symbolic links followed), as a phrase: "does
    not exist", "is a directory", "is a FIFO (named pipe)", "is a loop of symbolic links",
    "is a symbolic link to 'x', which does not exist", ...; None for a regular file."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.islink(path):
            return f"is a symbolic link to '{os.readlink(path)}', which does not exist"
        return "does not exist"
    except OSError as exc:
        return "is a loop of symbolic links" if exc.errno == errno.ELOOP else f"cannot be read ({exc.strerror})"
    return None if stat.S_ISREG(mode) else f"is {_kind(mode)}"


def output_target(path: str | os.PathLike) -> str:
    """The file that writing ``path`` replaces: ``path`` itself, or the target of the
    symbolic link(s) it names (the link stays a link). Raises OutputError (one sentence) if
    that exists and is not a regular file, or the links form a loop."""
    path = os.fspath(path)
    problem = not_a_file(path)
    if problem is not None and problem.startswith("is ") and not problem.startswith("is a symbolic link to"):
        raise OutputError(f"cannot write '{path}': it {problem}, not a regular file.")
    return os.path.realpath(path) if os.path.islink(path) else path


@contextlib.contextmanager
def _signals_held():
    """SIGTERM and SIGHUP wait until the block ends (a temp file exists only inside it):
    their default action ends the process at once, with no ``finally`` to remove it."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


class _ErrorRecorder:
    """A file object that remembers the first OSError its writes met: a writer (``torch.save``)
    may turn it into another exception, which ``atomic_write`` translates back."""

    def __init__(self, file: IO):
        self._file = file
        self.error: OSError | None = None

    def write(self, data):
        try:
            return self._file.write(data)
        except OSError as exc:
            self.error = self.error or exc
            raise

    def __getattr__(self, name):
        return getattr(self._file, name)


def _output_error(path: str, exc: BaseException) -> OutputError:
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
    return OutputError(f"cannot write '{path}' ({reason}).")


def atomic_write(path: str | os.PathLike, write_fn: Callable[[IO], Any], mode: str = "wb") -> None:
    """Write through ``write_fn(file)`` to a temp file beside the file ``path`` names (the
    target of a symbolic link), then ``os.replace`` it. Raises OutputError (one sentence) if
    that is no regular file or a write fails at any layer (a full disk too, whatever exception
    ``write_fn`` turned it into); the old file is kept then. SIGTERM waits for the end."""
    path = os.fspath(path)
    target = output_target(path)
    with _signals_held():
        try:
            os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
            # The writer's pid in the name: remove_stale_temps can tell a dead writer's leftover.
            fd, tmp = tempfile.mkstemp(
                dir=os.path.dirname(os.path.abspath(target)),
                prefix=f"{TEMP_PREFIX}{os.getpid()}-",
                suffix=os.path.basename(target),
            )
        except OSError as exc:
            raise _output_error(path, exc) from exc
        recorder = None
        try:
            os.chmod(tmp, FILE_MODE)  # mkstemp makes it private; results are ordinary files
            with os.fdopen(fd, mode) as f:
                recorder = _ErrorRecorder(f)
                write_fn(recorder)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException as exc:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            if isinstance(exc, OutputError):
                raise
            if isinstance(exc, OSError):
                raise _output_error(path, exc) from exc
            if recorder is not None and recorder.error is not None:
                raise _output_error(path, recorder.error) from exc
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
    files inside the folder ``path``; a file that exists must be a regular one, see
    ``output_target``), checked before a run's work starts. Nothing is left
    behind: a probe file is written and removed in the nearest folder that exists (missing
    folders below it would be created there); permission bits say nothing for root or a
    read-only mount."""
    path = os.fspath(path)
    if not path:
        raise OutputError("an output location is empty (an unset shell variable?).")
    if folder and os.path.exists(path) and not os.path.isdir(path):
        raise OutputError(f"cannot write into '{path}': it is a file, not a folder.")
    base = os.path.abspath(path) if folder else os.path.dirname(os.path.abspath(output_target(path)))
    while not os.path.exists(base):
        base = os.path.dirname(base)
    if not os.path.isdir(base):
        raise OutputError(f"cannot write to '{path}': '{base}' is a file, not a folder.")
    try:
        with _signals_held():
            fd, probe = tempfile.mkstemp(dir=base, prefix=f"{TEMP_PREFIX}{os.getpid()}-", suffix=".probe")
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        raise OutputError(f"cannot write to '{path}' ({exc.strerror or type(exc).__name__}).") from None


class FileLock:
    """An exclusive ``fcntl.flock`` on the file ``path`` (created if missing; it holds the
    holder's pid, for messages only). The kernel drops a lock when its process ends, however
    it ends, so the lock of a killed run is free at once, whatever process its pid names by
    then, and two runs never both take it. Entering raises OutputError (one sentence naming
    the lock file) if another process holds it or it is no regular file: ``"{what} is in
    use by process N (lock file 'path'); {advice}."``. Leaving removes the file."""

    def __init__(self, path: str, what: str, advice: str):
        self.path, self.what, self.advice = path, what, advice
        self._fd: int | None = None

    def _open(self) -> int:
        """A descriptor of the lock file, created if missing; OutputError if it is no regular file."""
        try:
            os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK, FILE_MODE)
        except OSError as exc:
            problem = not_a_file(self.path)
            reason = f"it {problem}" if problem and problem.startswith("is ") else f"{exc.strerror or exc}"
            raise OutputError(f"cannot use the lock file '{self.path}': {reason}; remove it.") from None
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            raise OutputError(f"cannot use the lock file '{self.path}': it is {_kind(mode)}; remove it.")
        return fd

    def _holder(self, fd: int) -> int | None:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        return int(text) if text.isascii() and text.isdigit() else None

    def _still_named(self, fd: int) -> bool:
        """Whether ``path`` still names the file of ``fd`` (its last holder may have removed it)."""
        try:
            return os.path.samestat(os.fstat(fd), os.stat(self.path))
        except FileNotFoundError:
            return False

    def __enter__(self) -> FileLock:
        while True:
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = self._holder(fd)
                os.close(fd)
                who = f"process {holder}" if holder else "another process"
                raise OutputError(f"{self.what} is in use by {who} (lock file '{self.path}'); {self.advice}.") from None
            if self._still_named(fd):
                break
            os.close(fd)  # removed by a run that just ended: lock the file that names it now
        left = self._holder(fd)
        if left and left != os.getpid():
            # The lock is free, so process `left` no longer holds it; the number may name a live process all the
            # same (pid 1, a number reused since): then it is not "no longer running".
            state = "which no longer holds it" if process_alive(left) else "which is no longer running"
            print(f"Taking over the lock '{self.path}' of process {left}, {state}.")
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def __exit__(self, *exc_info) -> None:
        if self._still_named(self._fd):
            os.unlink(self.path)  # still holding it: a run that opened this file sees it is gone
        os.close(self._fd)
        self._fd = None


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


def find_checkpoint(explicit: str | None = None, name: str = DEFAULT_CHECKPOINT, remedy: str | None = None) -> str:
    """The model file scripts use: ``explicit`` if given, else ``./<name>``, else the shipped
    ``pretrained/<name>`` (``name``: the puzzle's or board's model file, ``rubik_policy_value.pt`` for
    the 2x2). Raises CheckpointError if none exists, or ``explicit`` is no regular file (a
    directory, a FIFO, a loop of symbolic links: the message says which). ``remedy``: what the
    message advises when no file is found (default: the cube's, to train one or use a solver
    without a network)."""
    if explicit:
        problem = not_a_file(explicit)
        if problem not in (None, "does not exist"):
            raise CheckpointError(f"checkpoint '{explicit}' {problem}; pass a model file to --checkpoint.")
        if problem:
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
    if remedy is None:
        remedy = (
            "train one with 'python main.py' or pass --checkpoint PATH"
            if name == DEFAULT_CHECKPOINT
            else "pass --checkpoint PATH (or use --solver bestfirst, which needs no network)"
        )
    raise CheckpointError(f"no model found: neither ./{name} nor {os.path.relpath(pretrained)} exists; {remedy}.")

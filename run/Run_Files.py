"""What every training run of ``main.py`` has, whatever it trains (Run_Loop.py drives it): its files
(the checkpoint, the training state beside it, the log folder) and their locks, the guard that lets a signal
stop a run only between two commits, the check that a resumed run keeps its saved flags, and the check that
its flags fit the machine's memory. Every problem a user can fix is one sentence: ``RunError``."""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import time

from run.Run_IO import FileLock, OutputError, check_writable, remove_stale_temps, short_path


# --------------------------------------------------------------------------- interruption
class Interrupted(BaseException):
    """A run stopped by SIGINT or SIGTERM. A BaseException, as KeyboardInterrupt: the signal lands on any line,
    and a library's ``except Exception`` there (an optional import's guard, say) must not swallow it."""


class InterruptGuard:
    """SIGINT/SIGTERM stop training with ``Interrupted``, but never in the middle of a save:
    inside ``deferred()`` the signal is held and raised when the block ends. The signal is kept
    after it is raised, so that ``check()`` between two iterations raises it again should anything
    have swallowed it (in CI a benchmark once did not end within 5 minutes of its SIGTERM, waiting for its
    trainer: a swallowed signal is the likely cause)."""

    def __init__(self):
        self._deferring = False
        self._pending: int | None = None

    def install(self) -> None:
        signal.signal(signal.SIGINT, self._handle)
        signal.signal(signal.SIGTERM, self._handle)

    @contextlib.contextmanager
    def installed(self):
        """The guard for the block; the handlers it replaced are put back afterwards."""
        previous = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
        self.install()
        try:
            yield self
        finally:
            signal.signal(signal.SIGINT, previous[0])
            signal.signal(signal.SIGTERM, previous[1])

    def _handle(self, signum, frame):
        self._pending = signum
        if not self._deferring:
            raise Interrupted(signal.Signals(signum).name)

    def check(self) -> None:
        """Raise ``Interrupted`` if a signal came (and, raised where it landed, was swallowed there)."""
        if self._pending is not None:
            signum, self._pending = self._pending, None
            raise Interrupted(signal.Signals(signum).name)

    @contextlib.contextmanager
    def deferred(self):
        self._deferring = True
        try:
            yield
        finally:
            self._deferring = False
        self.check()


class RunError(Exception):
    """A problem the user can fix, in one sentence: ``main`` prints it and exits with status 2."""


def run_root(checkpoint: str) -> str:
    """The name of a run: the checkpoint path less its suffix, a symbolic link replaced by the
    file it names. Every name of one model file (``m.pt``, ``m.pth``, ``m``, a link to
    ``m.pt``) is one run, with one training state and one lock."""
    if os.path.islink(checkpoint):
        checkpoint = short_path(os.path.realpath(checkpoint))
    return os.path.splitext(checkpoint)[0]


def state_path_for(checkpoint: str) -> str:
    return run_root(checkpoint) + ".train_state.pt"


def lock_path_for(checkpoint: str) -> str:
    """The lock of the run (a name that no checkpoint's training state can take)."""
    return state_path_for(checkpoint) + ".lock"


def log_lock_path_for(log_dir: str) -> str:
    return os.path.join(log_dir, "run.lock")


def metrics_path_for(log_dir: str) -> str:
    return os.path.join(log_dir, "metrics.json")


def chart_path_for(log_dir: str) -> str:
    return os.path.join(log_dir, "training_metrics.png")


#: What a run leaves in its log folder; a new run moves an older run's aside.
LOG_FILES = ("metrics.json", "training_metrics.png", "eval_scramble_result.json", "eval_bar_chart.png", "tensorboard")


def archive_old_logs(log_dir: str) -> str | None:
    """Move an older run's outputs aside so that a fresh run never mixes with them. A
    ``tensorboard`` folder alone is no run: a run killed before its first iteration left
    it (its hyperparameters, nothing else), and the new run adds its events there."""
    names = [n for n in LOG_FILES if os.path.exists(os.path.join(log_dir, n))]
    if names in ([], ["tensorboard"]):
        return None
    dest = os.path.join(log_dir, "previous", time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(dest, exist_ok=True)
    for n in names:
        shutil.move(os.path.join(log_dir, n), os.path.join(dest, n))
    return dest


def check_output_paths(checkpoint: str, log_dir: str) -> None:
    """Raise RunError unless the checkpoint names a file and it, its training state and the
    logs can be written (``Run_IO.check_writable``: a FIFO or a device is refused too): found
    before any work, not after the first iteration. Creates nothing."""
    if not checkpoint.strip() or checkpoint.endswith(("/", os.sep)) or os.path.isdir(checkpoint):
        raise RunError(f"--checkpoint must name a model file, got '{checkpoint}'.")
    if not log_dir.strip():
        raise RunError("--log-dir must name a folder, got ''.")
    if os.path.exists(log_dir) and not os.path.isdir(log_dir):
        raise RunError(f"--log-dir '{log_dir}' is a file, not a folder.")
    outputs = (
        ("--checkpoint", checkpoint, False),
        ("--checkpoint", state_path_for(checkpoint), False),
        ("--log-dir", log_dir, True),
    )
    for flag, path, folder in outputs:
        try:
            check_writable(path, folder=folder)
        except OutputError as exc:
            raise RunError(f"{flag}: {exc}") from None


def remove_temps_of_killed_runs(checkpoint: str, log_dir: str) -> None:
    """Temp files that killed writers left beside the checkpoint and in the log folder."""
    for folder in sorted({os.path.dirname(os.path.realpath(checkpoint)), os.path.abspath(log_dir)}):
        for path in remove_stale_temps(folder):
            print(f"Removed {path}, left by a run that was killed while saving.")


@contextlib.contextmanager
def run_locks(checkpoint: str, log_dir: str):
    """The run's two locks (``Run_IO.FileLock``): its checkpoint, by ``lock_path_for``, and
    its log folder, so that no second run resumes, writes or archives a live run's files."""
    with (
        FileLock(
            lock_path_for(checkpoint),
            f"checkpoint '{checkpoint}'",
            "wait for that run to end or give this one another --checkpoint",
        ),
        FileLock(
            log_lock_path_for(log_dir),
            f"--log-dir '{log_dir}'",
            "wait for that run to end or give this one another --log-dir",
        ),
    ):
        yield


def snapshot_path(checkpoint: str, iteration: int) -> str:
    """The copy of the model kept at ``iteration`` (``--snapshot-every``)."""
    return f"{os.path.splitext(checkpoint)[0]}_iter{iteration:04d}.pt"


# --------------------------------------------------------------------------- saved flags
def is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def all_finite(values) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values)


def saved_flags(text) -> dict | None:
    """The flags a training state was saved with (its ``args``: ``vars(args)`` as JSON), or None."""
    try:
        flags = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    return flags if isinstance(flags, dict) else None


#: Flags a resumed run may change: how long it trains (raised to extend a run), and all that is
#: not its recipe: the final evaluation, the device, threads and workers, the files and the output.
#: Every other flag (the --recipe, each recipe flag, --puzzle, --seed) must be the saved run's.
RESUME_MAY_CHANGE = frozenset(
    {"num_iters", "time_budget", "skip_eval", "device", "threads", "workers", "backend", "ray_address"}
    | {"snapshot_every"}
    | {"eval_min_len", "eval_max_len", "eval_runs", "eval_sims", "eval_max_steps", "eval_solver"}
    | {"checkpoint", "log_dir", "fresh", "progress"}
)


def flag_text(dest: str, value) -> str:
    """A flag as a command line gives it: ``--sims 300 600 800``, ``--fresh``, ``no --recipe``."""
    flag = "--" + dest.replace("_", "-")
    if value is True:
        return flag
    if value is False or value is None:
        return f"no {flag}"
    return f"{flag} {' '.join(map(str, value)) if isinstance(value, list) else value}"


def check_saved_flags(saved: dict, path: str, flags: dict) -> None:
    """Raise RunError unless ``flags`` (``vars(args)``) train as the run saved in ``path`` did (``saved``:
    its flags): resumed with other flags, a run would go on as a hybrid of two (buffers mixed, a
    network converted, another seed). Flags the saved run did not know yet are not compared."""
    now = json.loads(json.dumps(flags))  # as saved: tuples become lists
    differ = [k for k in now if k in saved and k not in RESUME_MAY_CHANGE and saved[k] != now[k]]
    if differ:
        used = ", ".join(flag_text(k, saved[k]) for k in differ)
        asked = ", ".join(flag_text(k, now[k]) for k in differ)
        raise RunError(
            f"training state '{path}' belongs to a run with other training flags: the saved run used {used}; this "
            f"command asks for {asked}; give the saved run's flags to continue it, or --fresh to start over."
        )


# --------------------------------------------------------------------------- memory
def machine_memory() -> int | None:
    """Bytes of physical memory, or None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def binary_size(count: float) -> str:
    """``2.2 TiB``, ``126.0 GiB``, ..."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if count < 1024 or unit == "PiB":
            return f"{count:.1f} {unit}"
        count /= 1024
    raise AssertionError("unreachable")


def check_memory_needs(phases: list[list[tuple[int, str]]], available: int | None = None) -> None:
    """Raise RunError (one sentence) where the largest phase of ``phases`` (per phase, the arrays that live at
    once: ``(bytes, what sets them)``) needs more than the machine has (``available``; default its physical
    memory): flags each within bounds can together ask for terabytes, which would fail deep inside numpy."""
    available = machine_memory() if available is None else available
    phase = max(phases, key=lambda needs: sum(b for b, _ in needs))
    total = sum(b for b, _ in phase)
    if available is not None and total > available:
        largest, what = max(phase)
        raise RunError(
            f"these flags need at least {binary_size(total)} of memory at once, more than this machine's "
            f"{binary_size(available)}: {binary_size(largest)} of it for {what}; lower them."
        )

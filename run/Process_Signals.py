"""How a script ends when it is signalled, and child processes that end with their parent.

Standard library only, so that an entry script can load it before its slow imports (torch takes
seconds to import, longer on a loaded machine, and a signal then must end the script as well).

``start_script()`` is the first statement of every entry script (``main.py``, ``evaluate.py``, ...,
when run as a program). From then on SIGINT (Ctrl-C) and SIGTERM (``kill``, a supervisor, a job
runner) end the script with one line, ``interrupted``, on stderr and exit status 130, whenever they
come: during the imports, the work or the clean-up, never a traceback. During the imports a signal
ends the process at once: there is nothing to save yet, and a ``KeyboardInterrupt`` raised there
can be lost (torch's C++ code imports numpy and swallows any exception of that import). While
``main`` runs (``Cli.run_script`` calls ``running()``) a signal raises ``KeyboardInterrupt`` where
the script is, so its ``finally`` blocks run (locks, temp files, child processes) and ``run_script``
(or a training run's own handler, which saves first) ends it. Once ``interrupted`` is printed, or
the work is over, a further signal ends the process at once again, with the same status.

``die_with_parent(pid)`` in a child process (the benchmark's trainer, a self-play or evaluation
worker): the child gets SIGTERM when process ``pid`` ends, however it ends, ``kill -9`` too, so that
no child runs on writing into its parent's folders or holding its parent's stdout open (a ``| tee``
after the parent would never end). A parent that starts one of the entry scripts passes
``child_env()`` as its environment and ``start_script()`` does it there.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

EXIT_INTERRUPTED = 130  # how a shell reports a process that SIGINT ended
#: The environment variable that asks an entry script to end with the process it names (``child_env``).
PARENT_PID_ENV = "RUBIK_DIE_WITH_PID"
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>: the signal the kernel sends this process when its parent ends
WATCH_SECONDS = 1.0  # without prctl: how often a thread checks that the parent still runs
_SIGNALS = (signal.SIGINT, signal.SIGTERM)

_raising = False  # while ``main`` runs: a signal raises KeyboardInterrupt; before and after, it ends the process
_printed = False  # ``interrupted`` is on stderr: a signal's exit adds no second line


def interrupted() -> int:
    """Print ``interrupted`` on stderr (after what stdout holds) and return the exit status 130. From now on
    a further SIGINT or SIGTERM ends the process at once with that status, and no second line."""
    global _raising, _printed
    _raising = False
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # a closed or broken stream: the status still tells
            pass
    try:
        print("interrupted", file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass
    _printed = True
    return EXIT_INTERRUPTED


def running() -> None:
    """``main`` starts (``Cli.run_script``): from now on SIGINT and SIGTERM raise ``KeyboardInterrupt``."""
    global _raising
    quiet_signals()
    _raising = True


def finishing() -> None:
    """The script's work is over (``Cli.run_script`` after ``main``): a signal now, during the interpreter's
    clean-up, ends the process at once as ``interrupted`` (130) instead of raising where nothing catches it."""
    global _raising
    _raising = False


def _on_signal(signum, frame) -> None:
    if not _raising:
        os._exit(EXIT_INTERRUPTED if _printed else interrupted())
    raise KeyboardInterrupt  # SIGTERM as Ctrl-C: the same clean-up, the same end


def _excepthook(kind, value, tb, default=sys.excepthook) -> None:
    if issubclass(kind, KeyboardInterrupt):  # raised where nothing caught it: still no traceback
        os._exit(EXIT_INTERRUPTED if _printed else interrupted())
    default(kind, value, tb)


def quiet_signals() -> None:
    """SIGINT and SIGTERM end this process as ``interrupted`` (130), without a traceback, from now on: at
    once, or by ``KeyboardInterrupt`` while ``main`` runs (``running``)."""
    for signum in _SIGNALS:
        signal.signal(signum, _on_signal)
    sys.excepthook = _excepthook


def start_script() -> None:
    """The first statement of every entry script run as a program: ``quiet_signals``, and when the parent
    asked for it (``child_env``) ``die_with_parent``. The variable is removed: it is this process's, not its
    children's."""
    quiet_signals()
    parent = os.environ.pop(PARENT_PID_ENV, "")
    if parent.isascii() and parent.isdigit():
        die_with_parent(int(parent))


def child_env(env: dict | None = None) -> dict:
    """``env`` (default: this process's environment) with the request that a child entry script end with
    this process (``start_script`` reads it)."""
    return {**(os.environ if env is None else env), PARENT_PID_ENV: str(os.getpid())}


def die_with_parent(parent_pid: int) -> None:
    """This process gets SIGTERM when process ``parent_pid`` (its parent) ends, however it ends. Linux: the
    kernel sends it (``prctl(PR_SET_PDEATHSIG)``; the kernel watches the parent's thread that started this
    process, so parents start their children from the main thread); elsewhere a daemon thread checks every
    ``WATCH_SECONDS``. A parent that has already ended (before this call) sends it now."""
    # A mask inherited from a parent that started this process while holding SIGTERM (Run_IO holds it during a
    # write) would keep the signal pending for ever.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    if not _kernel_signals_parent_death():
        threading.Thread(target=_watch_parent, args=(parent_pid,), name="watch-parent", daemon=True).start()
    if os.getppid() != parent_pid:  # it ended before the line above could ask: nobody else will signal
        os.kill(os.getpid(), signal.SIGTERM)


def _kernel_signals_parent_death() -> bool:
    """Ask Linux for SIGTERM when the parent ends; False where that cannot be asked (another system)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes  # here: only Linux children need it

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent_pid: int) -> None:
    # An orphan is adopted by init (or a subreaper): its parent pid changes when the parent ends.
    while os.getppid() == parent_pid:
        time.sleep(WATCH_SECONDS)
    os.kill(os.getpid(), signal.SIGTERM)

"""Signals (issue 47, items 3, 13 and 18): every entry script ends with ``interrupted`` and exit status 130
on SIGINT or SIGTERM at any moment, its imports and its clean-up included; a child process that asked
(``Process_Signals.die_with_parent``) ends when its parent does, ``kill -9`` included.

A signal "during the imports" is made certain by a ``numpy`` on PYTHONPATH that says it is being imported
and then sleeps: every script imports numpy before its work, and Process_Signals imports nothing but the
standard library."""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import REPO
from proc_tree import alive, needs_proc, wait_for
from run import Process_Signals

SCRIPTS = sorted(p.name for p in REPO.glob("*.py") if '__name__ == "__main__"' in p.read_text(encoding="utf-8"))
SLOW_NUMPY = """
import os, time
open(os.environ["IMPORT_STARTED"], "w").close()
time.sleep(120)
"""


def test_the_entry_scripts_are_the_ones_known():
    assert {"main.py", "evaluate.py", "test.py", "gtp.py", "benchmark.py", "PyGame.py", "Optimal_Solver.py"} <= set(
        SCRIPTS
    )


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_entry_script_sets_up_its_signals_before_any_other_import(script):
    """The first statement after the docstring and ``from __future__``: ``if __name__ == "__main__":``
    with ``from run import Process_Signals`` and ``Process_Signals.start_script()`` (a module imported by a test or a
    worker process sets nothing)."""
    body = ast.parse((REPO / script).read_text(encoding="utf-8")).body
    body = [node for node in body[1:] if not (isinstance(node, ast.ImportFrom) and node.module == "__future__")]
    first = body[0]
    assert isinstance(first, ast.If) and ast.unparse(first.test) == "__name__ == '__main__'", script
    assert [ast.unparse(node) for node in first.body] == [
        "from run import Process_Signals",
        "Process_Signals.start_script()",
    ]


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_the_imports_ends_every_script_as_interrupted(tmp_path, signum):
    (tmp_path / "numpy.py").write_text(SLOW_NUMPY)
    for script in SCRIPTS:
        started = tmp_path / f"{script}.started"
        path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
        env = dict(os.environ, PYTHONPATH=path, IMPORT_STARTED=str(started), SDL_VIDEODRIVER="dummy")
        proc = subprocess.Popen(
            [sys.executable, str(REPO / script)], env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        wait_for(started.exists, what=f"{script} to import numpy")
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
        assert (proc.returncode, err.decode()) == (130, "interrupted\n"), script


SCRIPT = textwrap.dedent(
    """
    import atexit, os, signal, sys, time
    sys.path.insert(0, {repo!r})
    from run import Process_Signals
    Process_Signals.start_script()
    from run import Cli

    def main(argv=None):
        mode = sys.argv[1]
        if mode == "again":  # a second signal after `interrupted`, as during a run's clean-up
            status = Cli.interrupted()
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(30)
            return status
        if mode == "cleanup":  # a signal while the interpreter cleans up after the work
            atexit.register(time.sleep, 30)
        print("working", flush=True)
        if mode == "work":
            time.sleep(30)
        return 0

    Cli.run_script(main)
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["work", "cleanup", "again"])
def test_sigterm_while_working_cleaning_up_or_after_interrupted_is_interrupted(tmp_path, mode):
    script = tmp_path / "tool.py"
    script.write_text(SCRIPT.format(repo=str(REPO)))
    proc = subprocess.Popen([sys.executable, str(script), mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if mode != "again":
        assert proc.stdout.readline() == b"working\n"
        time.sleep(0.5)  # into the sleep (work) or the atexit handler (clean-up)
        proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, err.decode()) == (130, "interrupted\n")


CHILD = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {repo!r})
    from run import Process_Signals
    if sys.argv[1] == "thread":  # the watchdog of systems without prctl
        Process_Signals._kernel_signals_parent_death = lambda: False
        Process_Signals.WATCH_SECONDS = 0.1
    Process_Signals.die_with_parent(int(sys.argv[2]))
    print("ready", flush=True)
    time.sleep(120)
    """
)
PARENT = textwrap.dedent(
    """
    import subprocess, sys, time
    child = subprocess.Popen([sys.executable, sys.argv[1], sys.argv[2], str(__import__("os").getpid())],
                             stdout=subprocess.PIPE)
    assert child.stdout.readline() == b"ready\\n"
    print(child.pid, flush=True)
    time.sleep(120)
    """
)


@pytest.mark.slow
@needs_proc
@pytest.mark.parametrize("how", ["prctl", "thread"])
def test_a_child_ends_when_its_parent_is_killed(tmp_path, how):
    (tmp_path / "child.py").write_text(CHILD.format(repo=str(REPO)))
    (tmp_path / "parent.py").write_text(PARENT)
    parent = subprocess.Popen(
        [sys.executable, str(tmp_path / "parent.py"), str(tmp_path / "child.py"), how], stdout=subprocess.PIPE
    )
    child = int(parent.stdout.readline())
    assert alive(child)
    parent.kill()  # kill -9: no handler, no clean-up in the parent
    parent.wait()
    wait_for(lambda: not alive(child), timeout=30, what="the child to end")


SCRIPT_START = """from run import Process_Signals
Process_Signals.start_script()
time.sleep(0.5)
print("ran on")
"""


@pytest.mark.slow
def test_a_child_whose_parent_already_ended_stops_at_once(tmp_path):
    """The parent named is not this process's parent (it ended and the child was adopted): SIGTERM at once."""
    script = tmp_path / "child.py"
    script.write_text(f"import sys, time\nsys.path.insert(0, {str(REPO)!r})\n" + SCRIPT_START)
    env = dict(os.environ, **{Process_Signals.PARENT_PID_ENV: "1"})
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "", "interrupted\n")


def test_child_env_names_this_process():
    assert Process_Signals.child_env({"A": "1"}) == {"A": "1", Process_Signals.PARENT_PID_ENV: str(os.getpid())}

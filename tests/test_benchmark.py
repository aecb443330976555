"""benchmark.py end to end on tiny settings: given checkpoints, a short training budget, and a stop by a signal."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO
from proc_tree import alive, children, needs_proc, wait_for

ROOT = str(REPO)
TINY = [
    "--positions-per-distance",
    "2",
    "--uniform",
    "3",
    "--sims",
    "4",
    "--max-moves",
    "4",
    "--max-nodes",
    "300",
    "--beam-width",
    "5",
    "--astar-batch",
    "10",
    "--time-limit",
    "0.5",
    "--seed",
    "1",
    "--device",
    "cpu",
]

pytestmark = pytest.mark.usefixtures("isolated_solver_cache")


def run_bench(tmp_path, *extra, timeout=300):
    cmd = [sys.executable, os.path.join(ROOT, "benchmark.py"), "--out-dir", str(tmp_path / "out"), *TINY, *extra]
    return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=timeout)


def bench_in_process(tmp_path, capsys, *argv) -> subprocess.CompletedProcess:
    """``benchmark.main(argv)`` in this process, for runs that end before any work (help, refusals): a
    new process costs seconds of imports for a check of ``main`` alone (benchmark.py's own exit status
    as a process is checked in tests/test_cli_sweep.py). Gives what ``run_bench`` gives; an exception
    that escapes fails the test, as a traceback would."""
    import benchmark

    capsys.readouterr()  # only this run's output
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        status = benchmark.main(list(argv))
    except SystemExit as exc:  # argparse: --help and usage errors
        status = exc.code
    finally:
        os.chdir(cwd)
    out = capsys.readouterr()
    return subprocess.CompletedProcess(["benchmark.main"], status or 0, out.out, out.err)


@pytest.mark.slow
def test_help(tmp_path, capsys):
    out = bench_in_process(tmp_path, capsys, "--help")
    for flag in ("--seed", "--device", "--budget-minutes", "--trainers", "--solvers", "--checkpoints", "--uniform"):
        assert flag in out.stdout
    assert out.returncode == 0


@pytest.mark.slow
def test_bad_flags_exit_2(tmp_path, capsys):
    def refuse(*extra):
        return bench_in_process(tmp_path, capsys, "--out-dir", str(tmp_path / "out"), *TINY, *extra)

    assert refuse("--solvers", "nope").returncode == 2
    assert refuse("--trainers", "nope").returncode == 2
    out = refuse("--checkpoints", "a=missing.pt")
    assert out.returncode == 2 and "missing.pt" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.slow
def test_checkpoints_every_solver_one_table_and_chart(tmp_path, checkpoints):
    net = checkpoints["random"]
    out = run_bench(tmp_path, "--checkpoints", f"rand={net},scramble={net}")
    assert out.returncode == 0, out.stderr
    report = json.loads((tmp_path / "out" / "benchmark.json").read_text())
    rows = {(r["model"], r["solver"]): r for r in report["results"]}
    solvers = ["mcts", "greedy", "beam", "beam_policy", "astar", "bestfirst"]
    assert {s for _, s in rows} >= set(solvers)
    for s in solvers:
        if s == "bestfirst":
            assert ("none", s) in rows and ("rand", s) not in rows  # no network: run once
            continue
        r = rows[("rand", s)]
        assert r["skipped"] is None and r["total"]["n"] == 28  # 2 positions x 14 distances
        assert set(r["groups"]) == {str(d) for d in range(1, 15)} | {"uniform"}
        assert r["groups"]["uniform"]["n"] == 3
        assert 0 <= r["total"]["solve_rate"] <= 1 and r["total"]["seconds_per_cube"] >= 0
        scr = rows[("scramble", s)]
        assert (scr["skipped"] is None) == (s == "beam_policy")  # no value: only the policy beam
    t = rows[("rand", "beam")]["total"]
    assert t["solved"] == 0 or t["moves_over_optimal"] >= 1.0  # never shorter than optimal
    assert rows[("none", "bestfirst")]["groups"]["1"]["solve_rate"] == 1.0  # one move: always found
    md = (tmp_path / "out" / "benchmark.md").read_text()
    assert "| scramble | greedy | n/a |" in md and "| rand | beam_policy |" in md
    assert "moves/optimal" in md and "Solve rate by true distance" in md
    assert (tmp_path / "out" / "benchmark.png").read_bytes()[:4] == b"\x89PNG"
    assert report["models"]["scramble"]["value_scale"].startswith("none")


@pytest.mark.slow
def test_training_budget_stops_main_and_benchmarks_what_it_saved(tmp_path):
    tiny_main = "scramble=--states-per-iter 64 --epochs 1 --batch-size 16 --episodes-per-iter 4 --max-episode-steps 4"
    out = run_bench(
        tmp_path,
        "--trainers",
        "scramble",
        "--budget-minutes",
        "0.25",
        "--train-args",
        tiny_main,
        "--solvers",
        "beam_policy,greedy",
        timeout=200,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads((tmp_path / "out" / "benchmark.json").read_text())
    m = report["models"]["scramble"]
    assert m["stopped_by_budget"] and m["exit_code"] == 130 and m["iterations"] >= 1  # interrupted by SIGTERM
    # No bound on the seconds themselves (a loaded machine stretches them): the budget's stop is the check.
    assert m["train_seconds"] > 0 and "--targets scramble" in m["command"]
    assert (tmp_path / "out" / "scramble.pt").is_file()
    assert "Stopped by SIGTERM" in (tmp_path / "out" / "scramble_train.log").read_text()
    rows = {r["solver"]: r for r in report["results"]}
    assert rows["beam_policy"]["skipped"] is None and rows["greedy"]["skipped"]


@pytest.mark.slow
@needs_proc
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=["TERM", "INT", "KILL"])
def test_the_trainer_ends_with_benchmark_however_it_is_stopped(tmp_path, signum):
    """Issue 47, item 3: benchmark.py signalled by pid (a supervisor's kill, not the terminal's Ctrl-C to the
    whole group) or killed outright: its main.py ends too and writes nothing more into --out-dir."""
    tiny_main = "scramble=--states-per-iter 64 --epochs 1 --batch-size 16 --episodes-per-iter 4 --max-episode-steps 4"
    out = tmp_path / "out"
    cmd = [sys.executable, os.path.join(ROOT, "benchmark.py"), "--out-dir", str(out), *TINY]
    cmd += ["--trainers", "scramble", "--budget-minutes", "60", "--train-args", tiny_main]
    bench = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    log = out / "scramble_train.log"
    wait_for(lambda: log.is_file() and "Training on" in log.read_text(), timeout=300, what="the trainer to start")
    (trainer,) = children(bench.pid)
    bench.send_signal(signum)
    err = bench.communicate(timeout=300)[1]
    if signum == signal.SIGKILL:
        wait_for(lambda: not alive(trainer), timeout=120, what="the trainer to end after its parent")
    else:  # the trainer was stopped and waited for: gone when benchmark.py is
        assert not alive(trainer)
        assert (bench.returncode, err.strip().splitlines()[-1]) == (130, "interrupted"), err
    assert "Stopped by SIGTERM" in log.read_text()  # it saved its last completed iteration, as after its budget
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    time.sleep(2)
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before

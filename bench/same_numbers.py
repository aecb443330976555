"""Fingerprints of tiny training runs of every recipe and of the shipped models' evaluations, to show that a
refactor changed no number: run it before and after, in the same machine and thread count, and diff the two
outputs (``diff before.txt after.txt`` prints nothing when nothing changed).

    python bench/same_numbers.py > before.txt     # on the old commit
    python bench/same_numbers.py > after.txt      # on the new one
    diff before.txt after.txt

Each line is ``name  sha256-of-checkpoint  sha256-of-metrics``; the metrics' wall-time entries (``minutes``)
are left out of their hash, since no two runs share them. The evaluations hash ``results``' solve rates and
lengths (evaluate.py's JSON less its timings).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from run import Cli  # noqa: E402

CUBE_TINY = (
    "--episodes-per-iter 4 --sims 8 8 8 --epochs 1 --batch-size 8 --min-buffer-batches 1 --sample-batches 2 "
    "--max-episode-steps 4 --window 2 --solve-threshold 0.0 --num-iters 3 --skip-eval --no-progress --threads 1"
).split()
GO_TINY = (
    "--games 2 --simulations 4 --train-steps 2 --batch-size 8 --filters 8 --blocks 1 --gate-games 0 "
    "--buffer-min-games 2 --num-iters 3 --time-budget 0"
).split()
#: name -> main.py flags (each with --seed 7, its own checkpoint and log folder).
RUNS = {
    "original": CUBE_TINY,
    "exact": ["--recipe", "exact", "--states-per-iter", "64", "--epochs", "1", "--batch-size", "4096",
              "--num-iters", "3", "--skip-eval", "--no-progress", "--threads", "1"],
    "alphazero": ["--recipe", "alphazero", *CUBE_TINY, "--time-budget", "0"],
    "3x3": ["--recipe", "3x3", "--hidden-sizes", "64", "32", "--states-per-iter", "520", "--batch-size", "64",
            "--lr-schedule", "constant", "--num-iters", "3", "--skip-eval", "--no-progress", "--threads", "1",
            "--time-budget", "0"],
    "go5": ["--recipe", "go5", *GO_TINY],
    "go7": ["--recipe", "go7", *GO_TINY],
    "go5-score": ["--recipe", "go5-score", *GO_TINY, "--lr-drops"],  # no budget, no drops
}  # fmt: skip
#: name -> evaluate.py flags for a shipped model (its JSON results in --log-dir).
EVALS = {
    "2x2-exact": ["--checkpoint", "pretrained/rubik_policy_value.pt", "--runs", "40", "--min-len", "1",
                  "--max-len", "8", "--seed", "7", "--no-progress"],
    "3x3": ["--puzzle", "3x3", "--checkpoint", "pretrained/rubik3x3_policy_value.pt", "--runs", "4",
            "--min-len", "12", "--max-len", "12", "--solver", "beam", "--beam-width", "300", "--seed", "7",
            "--no-progress"],
}  # fmt: skip


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def metrics_hash(path: str) -> str:
    with open(path) as f:
        metrics = json.load(f)
    metrics.pop("minutes", None)
    return sha(json.dumps(metrics, sort_keys=True).encode())


def run(cmd: list[str], cwd: str) -> None:
    done = subprocess.run([sys.executable, *cmd], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()[-500:]}")


def main(argv=None) -> int:
    parser = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--only", nargs="*", choices=[*RUNS, *EVALS], help="runs or evaluations to fingerprint (default: all)"
    )
    args = parser.parse_args(argv)
    wanted = set(args.only or [*RUNS, *EVALS])
    env_threads = os.environ.get("OMP_NUM_THREADS", "default")
    print(f"# torch threads: OMP_NUM_THREADS={env_threads}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, flags in RUNS.items():
            if name not in wanted:
                continue
            ckpt, logs = os.path.join(tmp, f"{name}.pt"), os.path.join(tmp, f"{name}_logs")
            run([os.path.join(ROOT, "main.py"), *flags, "--seed", "7", "--checkpoint", ckpt, "--log-dir", logs], tmp)
            with open(ckpt, "rb") as f:
                weights = sha(f.read())
            print(f"train {name:10s} {weights} {metrics_hash(os.path.join(logs, 'metrics.json'))}", flush=True)
        for name, flags in EVALS.items():
            if name not in wanted:
                continue
            out = os.path.join(tmp, f"eval_{name}")
            run([os.path.join(ROOT, "evaluate.py"), *flags, "--log-dir", out], ROOT)
            found = sorted(n for n in os.listdir(out) if n.endswith(".json"))
            digest = []
            for n in found:
                with open(os.path.join(out, n)) as f:
                    data = json.load(f)
                rows = data if isinstance(data, list) else data.get("results", data)
                digest.append(json.dumps(strip_times(rows), sort_keys=True))
            print(f"eval  {name:10s} {sha(''.join(digest).encode())} ({', '.join(found)})", flush=True)
    return 0


def strip_times(value):
    """``value`` less every entry whose key names a time (seconds, minutes, per-second rates)."""
    if isinstance(value, dict):
        timed = ("second", "minute", "time", "per_s", "_s")
        return {k: strip_times(v) for k, v in value.items() if not any(t in k for t in timed)}
    if isinstance(value, list):
        return [strip_times(v) for v in value]
    return value


if __name__ == "__main__":
    Cli.run_script(main)

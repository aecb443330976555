"""The GPU smoke check: does every path that uses a network train, evaluate, search and play on CUDA,
and give the CPU's numbers there? One go, at most about 5 minutes on one CUDA GPU.

    python bench/gpu_smoke.py [--out docs/gpu_smoke.txt]      (or bash bench/gpu_smoke.sh, which installs first)

Without a GPU it says so and exits 0. With one, each check runs the same seeded command on ``--device
cuda`` and on ``--device cpu`` and compares what they report:

* training: tiny ``main.py`` runs of the original recipe, ``--recipe exact``, ``--recipe 3x3``,
  ``--game go5`` and ``--recipe go5-score``: both finish, write a checkpoint that loads on the CPU, and
  log finite losses. Where the data do not depend on the network (the exact and 3x3 recipes draw their
  states from seeded random walks) the last loss agrees within ``LOSS_REL_TOL``; where self-play
  generates them (original, go5, go5-score),
  a float rounding in the search may change a visit count and the games, so only "finite, both ran" is
  required there and the two losses are printed.
* networks: the shipped 2x2, 3x3 and go5 models read 4,096 inputs alike on both devices (largest
  absolute difference of values and logits at most ``OUTPUT_ABS_TOL``).
* solvers: the 2x2's greedy and MCTS searches by true distance and the 3x3's default beam on fixed
  scrambles: the same solve rate and mean length within ``LENGTH_TOL`` moves.
* Go: the go5 agent against the random player, a few games on each device: the same number of wins
  within one game.
* speed: the 3x3 and go5 networks' forward (states a second, batch 4,096), cuda against cpu, measured
  side by side; each training line also gives both runs' seconds.

Exit status 0 when every check holds (or no GPU is present), 1 when one fails (each failure named), 2 on
bad flags. Tolerances: why each is what it is stands beside it below.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from run import Cli  # noqa: E402

#: Training losses of runs fed the same data: float32 sums in another order (cuBLAS against MKL) differ
#: in the 6th-7th digit a step, and a few steps of Adam keep that far below a tenth of a percent.
LOSS_REL_TOL = 1e-3
#: One forward pass: float32 in another summation order, |value| <= 1 and logits of order 10.
OUTPUT_ABS_TOL = 1e-3
#: Mean solution length: equal outputs give equal moves except at a near-tie of two children's values
#: (Value_Scale.TIE_TOLERANCE decides those alike on both devices; a value that straddles it may not).
LENGTH_TOL = 0.25
NO_GPU = (
    "No CUDA GPU is present (torch.cuda.is_available() is False): nothing to check here; run it on a machine with one."
)

#: The tiny training runs: (name, main.py flags), each a few seconds.
TRAIN_RUNS = {
    "original": (
        "--num-iters 2 --episodes-per-iter 4 --sims 8 8 8 --epochs 1 --batch-size 8 --min-buffer-batches 1 "
        "--sample-batches 2 --max-episode-steps 4 --window 2 --solve-threshold 0.0 --skip-eval"
    ),
    "exact": "--recipe exact --num-iters 2 --states-per-iter 64 --epochs 1 --batch-size 4096 --skip-eval",
    "3x3": (
        "--recipe 3x3 --num-iters 2 --hidden-sizes 64 32 --states-per-iter 520 --batch-size 64 "
        "--lr-schedule constant --skip-eval"
    ),
    "go5": (
        "--game go5 --num-iters 2 --games 2 --simulations 4 --train-steps 2 --batch-size 8 --filters 8 --blocks 1 "
        "--gate-games 0 --buffer-min-games 2"
    ),
    # komi input, score and ownership heads, the score utility (issue 48): their losses on the GPU too
    "go5-score": (
        "--recipe go5-score --num-iters 2 --games 2 --simulations 4 --sampled-simulations 4 --train-steps 2 "
        "--batch-size 8 --filters 8 --blocks 1 --gate-games 0 --buffer-min-games 2"
    ),
}
#: Runs whose training data do not depend on the network's outputs (seeded random walks).
SAME_DATA = {"exact", "3x3"}
#: Fixed 3x3 scrambles of 12 quarter turns (the 3x3 default solves them in seconds on either device).
SCRAMBLES_3X3 = (
    "R U F' L D B R' U' F D' L B'",
    "F R' D L' B U F' R D' B' L U",
    "U L F' D R B' U' L' F D' R' B",
)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import torch  # here: --help needs none of it

    from run.Run_IO import OutputError, check_writable

    if args.out:
        try:
            check_writable(args.out)  # before the work, not after five minutes of it
        except OutputError as exc:
            return Cli.fail(exc)
    if args.device == "cuda" and not torch.cuda.is_available():
        print(NO_GPU)
        return 0
    out_lines: list[str] = []

    def say(line: str) -> None:
        print(line, flush=True)
        out_lines.append(line)

    other = "cpu"
    name = torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu"
    say(f"GPU smoke: {args.device} ({name}) against {other}; torch {torch.__version__}; seed {args.seed}")
    failures: list[str] = []
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="gpu_smoke_") as tmp:
        work = Path(tmp)
        for check in (check_training, check_networks, check_solvers, check_go, check_speed):
            failures += check(work, args, say)
    say(f"{len(failures)} check(s) failed" if failures else "every check holds")
    for failure in failures:
        say(f"  FAILED: {failure}")
    say(f"wall time {time.monotonic() - start:.0f} s")
    if args.out:
        from run.Run_IO import atomic_write

        atomic_write(args.out, lambda f: f.write("\n".join(out_lines) + "\n"), mode="w")
    return 1 if failures else 0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = Cli.ArgumentParser(description=__doc__, formatter_class=Cli.HelpFormatter)
    parser.add_argument(
        "--device",
        choices=("cuda", "cpu"),
        default="cuda",
        help="the device checked against the CPU (cpu: the script's own test, cpu against cpu)",
    )
    parser.add_argument("--seed", type=Cli.seed, default=0, help="seed of every run")
    parser.add_argument(
        "--out", type=Cli.nonempty_path, help="also write the report to this file (e.g. docs/gpu_smoke.txt)"
    )
    parser.add_argument("--skip", nargs="*", default=[], choices=("training", "networks", "solvers", "go", "speed"))
    return parser.parse_args(argv)


def run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    # the repository first, then what the caller's PYTHONPATH holds (wheels carried to a GPU machine)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, *cmd], cwd=cwd, capture_output=True, text=True, env=env, timeout=600)


def both_devices(args) -> tuple[tuple[str, str], tuple[str, str]]:
    """``(label, device)`` of the two sides: the device checked, then the cpu (labels differ even when
    ``--device cpu`` checks the script itself)."""
    return (("checked", args.device), ("cpu", "cpu"))


# --------------------------------------------------------------------------- training
def check_training(work: Path, args, say) -> list[str]:
    if "training" in args.skip:
        return []
    failures = []
    for run_name, flags in TRAIN_RUNS.items():
        losses, seconds = {}, {}
        for label, device in both_devices(args):
            folder = work / f"train_{run_name}_{label}"
            folder.mkdir()
            cmd = [str(ROOT / "main.py"), *flags.split(), "--seed", str(args.seed), "--device", device]
            cmd += ["--checkpoint", "m.pt", "--log-dir", "logs"]
            cmd += [] if run_name.startswith("go") else ["--no-progress"]
            started = time.monotonic()
            done = run(cmd, folder)
            seconds[label] = time.monotonic() - started
            if done.returncode != 0:
                failures.append(f"train {run_name} on {device}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
                continue
            losses[label] = last_loss(folder / "logs" / "metrics.json")
            problem = loads_on_cpu(folder / "m.pt", run_name)
            if problem:
                failures.append(f"train {run_name} on {device}: {problem}")
        if len(losses) < 2:
            continue
        a, b = losses["checked"], losses["cpu"]
        finite = all(math.isfinite(x) for x in (a, b))
        agree = finite and (run_name not in SAME_DATA or abs(a - b) <= LOSS_REL_TOL * max(abs(b), 1e-12))
        say(
            f"train {run_name:9s} last loss {args.device} {a:.6f}  cpu {b:.6f}  {'ok' if agree else 'DIFFERS'}  "
            f"({seconds['checked']:.0f} s and {seconds['cpu']:.0f} s, process start included)"
        )
        if not agree:
            failures.append(f"train {run_name}: loss {a} on {args.device} against {b} on cpu")
    return failures


def last_loss(path: Path) -> float:
    """The last logged total loss of a run's ``metrics.json`` (a list per metric, the cube's and Go's)."""
    losses = json.loads(path.read_text()).get("losses") or [math.nan]
    return float(losses[-1])


def loads_on_cpu(path: Path, run_name: str) -> str | None:
    """``None`` when the checkpoint loads on the CPU with finite outputs, else what went wrong."""
    try:
        if run_name.startswith("go"):
            from go.Go_Net import load_go_model

            load_go_model(str(path), device="cpu")
        else:
            from cube.Cube_Checkpoints import load_model

            load_model(str(path), "cpu", puzzle="3x3" if run_name == "3x3" else None)
    except Exception as exc:  # noqa: BLE001 (any failure is the finding)
        return f"its checkpoint does not load on the cpu: {exc}"
    return None


# --------------------------------------------------------------------------- networks
def check_networks(work: Path, args, say) -> list[str]:
    if "networks" in args.skip:
        return []
    import numpy as np
    import torch

    from cube.Cube_Checkpoints import load_model
    from go.Go_Net import load_go_model

    rng = np.random.default_rng(args.seed)
    failures = []
    models = {
        "2x2": load_model(str(ROOT / "pretrained" / "rubik_policy_value.pt"), "cpu"),
        "3x3": load_model(str(ROOT / "pretrained" / "rubik3x3_policy_value.pt"), "cpu", puzzle="3x3"),
        "go5": load_go_model(str(ROOT / "pretrained" / "go5_policy_value.pt"), device="cpu"),
    }
    for name, model in models.items():
        inputs = network_inputs(name, rng)
        outs = {}
        for label, device in both_devices(args):
            device = Cli.resolve_device(device)  # the project's device set-up: float32 convolutions on CUDA
            with torch.inference_mode():
                got = model.to(device).eval()(inputs.to(device))
            outs[label] = torch.cat([t.float().reshape(len(inputs), -1).cpu() for t in got], 1)
        model.to("cpu")
        diff = float((outs["checked"] - outs["cpu"]).abs().max())
        ok = diff <= OUTPUT_ABS_TOL
        say(f"network {name}: largest |{args.device} - cpu| over 4,096 inputs {diff:.2e}  {'ok' if ok else 'DIFFERS'}")
        if not ok:
            failures.append(f"network {name}: outputs differ by {diff:.3g}")
    return failures


def network_inputs(name: str, rng):
    """4,096 inputs the network was trained on: random-walk cubes, or Go positions from random play."""
    import numpy as np
    import torch

    if name == "go5":
        from go.Go_Game import go_game

        game = go_game(5)
        states = game.initial_state(4096)
        for _ in range(12):  # random moves, a pass only where nothing else is legal
            legal = game.legal_mask(states)
            legal[:, -1] &= ~legal[:, :-1].any(axis=1)
            live = np.flatnonzero(~game.is_terminal(states))
            actions = (rng.random(legal.shape) * legal).argmax(1)[live]
            moved = game.step({k: v[live] for k, v in states.items()}, actions)
            for key in states:
                states[key][live] = moved[key]
        return torch.from_numpy(game.encode(game.eval_input(states)))
    from cube.Puzzles import get_puzzle

    puzzle = get_puzzle(name)
    cubes, _ = puzzle.scramble(rng, 4096, 20)
    return torch.from_numpy(puzzle.encode(cubes))


# --------------------------------------------------------------------------- solvers
def check_solvers(work: Path, args, say) -> list[str]:
    if "solvers" in args.skip:
        return []
    failures = []
    scrambles = work / "scrambles3x3.txt"
    scrambles.write_text("\n".join(SCRAMBLES_3X3) + "\n")
    cases = {
        "2x2 greedy": ["--by-distance", "--runs", "20", "--solver", "greedy"],
        "2x2 mcts": ["--by-distance", "--runs", "4", "--max-dist", "8", "--sims", "200"],
        # --target-seconds 0: the same search on both devices (a faster device would otherwise search wider)
        "3x3 beam": ["--puzzle", "3x3", "--scrambles", str(scrambles), "--time-limit", "60"]
        + ["--target-seconds", "0", "--out", "out.json"],
    }
    for name, flags in cases.items():
        summary = {}
        for label, device in both_devices(args):
            folder = work / f"solve_{name.replace(' ', '_')}_{label}"
            folder.mkdir()
            cmd = [str(ROOT / "evaluate.py"), *flags, "--seed", str(args.seed), "--device", device]
            cmd += ["--log-dir", "logs", "--no-progress"]
            done = run(cmd, folder)
            if done.returncode != 0:
                failures.append(f"{name} on {device}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
                continue
            summary[label] = solve_summary(folder)
        if len(summary) < 2:
            continue
        (ra, la), (rb, lb) = summary["checked"], summary["cpu"]
        ok = ra == rb and abs(la - lb) <= LENGTH_TOL
        verdict = "ok" if ok else "DIFFERS"
        say(f"solve {name:10s} solved {ra} / mean {la:.2f} on {args.device}, {rb} / {lb:.2f} on cpu  {verdict}")
        if not ok:
            failures.append(f"{name}: {ra} solved, {la:.2f} moves on {args.device} against {rb}, {lb:.2f} on cpu")
    return failures


def solve_summary(folder: Path) -> tuple[int, float]:
    """(cubes solved, mean length of the solved) from evaluate.py's output in ``folder``."""
    out = folder / "out.json"
    if out.is_file():  # --scrambles: one row per line
        rows = json.loads(out.read_text())
        lengths = [r["length"] for r in rows if r["solved"]]
        return len(lengths), (sum(lengths) / len(lengths) if lengths else math.nan)
    overall = json.loads((folder / "logs" / "eval_by_distance.json").read_text())["overall"]
    return int(overall["solved"]), float(overall["mean_length"])


# --------------------------------------------------------------------------- Go
def check_go(work: Path, args, say) -> list[str]:
    if "go" in args.skip:
        return []
    failures = []
    wins = {}
    for label, device in both_devices(args):
        folder = work / f"go_{label}"
        cmd = [str(ROOT / "evaluate.py"), "--game", "go5", "--opponent", "random", "--games", "6", "--sims", "50"]
        cmd += ["--seed", str(args.seed), "--device", device, "--out-dir", str(folder)]
        done = run(cmd, work)
        if done.returncode != 0:
            failures.append(f"go5 match on {device}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
            continue
        wins[label] = count_wins(json.loads((folder / "results.json").read_text()))
    if len(wins) == 2:
        ok = abs(wins["checked"] - wins["cpu"]) <= 1
        verdict = "ok" if ok else "DIFFERS"
        say(f"go5 match against random: {wins['checked']}/6 wins on {args.device}, {wins['cpu']}/6 on cpu  {verdict}")
        if not ok:
            failures.append(f"go5 match: {wins['checked']} wins on {args.device} against {wins['cpu']} on cpu")
    return failures


def count_wins(results) -> int:
    """The agent's wins in a match's ``results.json``: a list with one summary per checkpoint."""
    first = results[0] if isinstance(results, list) else results
    return int(first["all"]["wins"])


# --------------------------------------------------------------------------- speed
def check_speed(work: Path, args, say) -> list[str]:
    if "speed" in args.skip:
        return []
    import numpy as np
    import torch

    from cube.Cube_Checkpoints import load_model
    from go.Go_Net import load_go_model

    models = {
        "3x3": load_model(str(ROOT / "pretrained" / "rubik3x3_policy_value.pt"), "cpu", puzzle="3x3"),
        "go5": load_go_model(str(ROOT / "pretrained" / "go5_policy_value.pt"), device="cpu"),
    }
    for name, model in models.items():
        inputs = network_inputs(name, np.random.default_rng(args.seed))
        rates = {}
        for label, device in both_devices(args):
            device = str(Cli.resolve_device(device))
            model.to(device).eval()
            x = inputs.to(device)
            with torch.inference_mode():
                model(x)  # warm-up: kernels chosen, memory allocated
                if device.startswith("cuda"):
                    torch.cuda.synchronize()
                start, rounds = time.perf_counter(), 5
                for _ in range(rounds):
                    model(x)
                if device.startswith("cuda"):
                    torch.cuda.synchronize()
            rates[label] = rounds * len(x) / (time.perf_counter() - start)
        model.to("cpu")
        say(
            f"speed: the {name} network reads {rates['checked']:,.0f} states/s on {args.device}, "
            f"{rates['cpu']:,.0f} on cpu ({rates['checked'] / rates['cpu']:.1f}x), batch 4,096"
        )
    return []


if __name__ == "__main__":
    Cli.run_script(main)

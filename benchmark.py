"""Benchmark every trainer against every solver on the same positions, scored by exact distance.

1. Train: each trainer (``--trainers``: selfplay, lookahead, adi, scramble) runs
   ``python main.py --targets T --fresh --checkpoint OUT/T.pt --log-dir OUT/T_logs --skip-eval``
   for ``--budget-minutes`` of wall time from its "Training on" line (its stop handler is in
   place then), then gets SIGTERM; main.py keeps the last completed
   iteration. Its output goes to ``OUT/T_train.log``. Ctrl-C or SIGTERM to benchmark.py stops the
   trainer the same way before it ends, and a trainer ends with benchmark.py even when that is
   killed outright (``kill -9``). Or skip training with ``--checkpoints name=path,...`` (models
   already trained).
2. Positions: ``--positions-per-distance`` N cubes drawn uniformly at each true distance 1..14
   (distinct where there are enough; only 276 positions are 14 moves out) and ``--uniform`` M
   drawn uniformly from all 3,674,160 positions, all from ``--seed``.
3. Solve: every solver (``--solvers``: mcts, greedy, beam (value rank), beam_policy (policy
   rank), astar, bestfirst, and gumbel when ``Solvers.SOLVERS`` has it) with every model on the
   same positions, under the per-cube budgets below. bestfirst uses no network: it runs once,
   as model "none". A model without a value (scramble-trained; ``--policy-only``) is only run
   by beam_policy: the solvers that read a value record "n/a" for it.
4. Report: ``OUT/benchmark.md`` (tables), ``OUT/benchmark.json`` (everything, per distance)
   and ``OUT/benchmark.png`` (solve rate by distance, one panel per solver). Per (model,
   solver): solve rate (by-distance positions, and the uniform ones), moves / optimal (mean
   over solved cubes of solution length / true distance), states generated and seconds per
   cube, and the trainer's wall time and iterations.

Every solve is verified by replaying its moves (``Solvers``); the true distances come from
the optimal solver's table (``Optimal_Solver``, built on first use).
"""

from __future__ import annotations

if __name__ == "__main__":  # first: a signal during the slow imports below ends the script as at any moment
    from run import Process_Signals

    Process_Signals.start_script()

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import time

import numpy as np
import torch

from cube.Cube_Checkpoints import load_model
from cube.Seed_System_Targets import VALUE_SCALES
from cube.Solvers import SOLVERS, SolverOptions, solve_cubes
from Optimal_Solver import MAX_DISTANCE, get_solver
from run import Cli, Process_Signals
from run.Cli import DeviceError, HelpFormatter, add_device_flag, fail, int_in, positive_float, resolve_device
from run.Input_Echo import shown
from run.Run_IO import CheckpointError, OutputError, atomic_write, check_writable

ROOT = os.path.dirname(os.path.abspath(__file__))
TRAINERS = ("selfplay", "lookahead", "adi", "scramble")
#: main.py flags each trainer gets by default (``--train-args`` replaces them): the original
#: recipe as it is; the value-trained targets with a value weight that makes 0.03 per move
#: count in the loss and one Adam for the whole run (README, docs/experiments.md).
DEFAULT_TRAIN_ARGS = {
    "selfplay": "",
    "lookahead": "--value-weight 300 --keep-optimizer",
    "adi": "--value-weight 300 --keep-optimizer",
    "scramble": "--keep-optimizer",
}
DEFAULTS_TEXT = "; ".join(f"{k}: {v or 'none'}" for k, v in DEFAULT_TRAIN_ARGS.items())
STOP_GRACE_S = 600  # how long a trainer may take to save and exit after SIGTERM
TRAINING_STARTED = "Training on "  # main.py's line once its stop handler is installed


def bench_solvers() -> dict[str, tuple[str, dict, str]]:
    """``benchmark name -> (Solvers name, option overrides, what it needs)``; needs is
    ``value`` (a value head), ``policy`` or ``none`` (no network)."""
    table = {
        "mcts": ("mcts", {}, "value"),
        "greedy": ("greedy", {}, "value"),
        "beam": ("beam", {"beam_rank": "value"}, "value"),
        "beam_policy": ("beam", {"beam_rank": "policy"}, "policy"),
        "astar": ("astar", {}, "value"),
        "bestfirst": ("bestfirst", {}, "none"),
    }
    if "gumbel" in SOLVERS:
        table["gumbel"] = ("gumbel", {}, "value")
    return table


# --------------------------------------------------------------------------- arguments
def parse_checkpoints(text: str) -> dict[str, str]:
    out = {}
    for item in text.split(","):
        name, sep, path = item.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise argparse.ArgumentTypeError(f"expected name=path[,name=path...], got {shown(item)}")
        out[name.strip()] = path.strip()
    return out


def build_parser(solvers: dict) -> argparse.ArgumentParser:
    """The command line's flags in their ``--help`` groups (``solvers``: ``bench_solvers()``)."""
    d = SolverOptions()
    p = Cli.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    g = p.add_argument_group("models")
    g.add_argument("--trainers", default=",".join(TRAINERS), help="comma-separated trainers to train and benchmark")
    g.add_argument("--budget-minutes", type=positive_float, default=15.0, help="training wall time per trainer")
    g.add_argument(
        "--train-args",
        action="append",
        default=[],
        metavar="TRAINER=FLAGS",
        help=f"extra main.py flags for one trainer, replacing its defaults ({DEFAULTS_TEXT}); repeatable",
    )
    g.add_argument(
        "--checkpoints",
        type=parse_checkpoints,
        default=None,
        metavar="NAME=PATH,...",
        help="benchmark these models instead of training (--trainers and --budget-minutes are then unused)",
    )
    g.add_argument(
        "--policy-only",
        default="scramble",
        help="comma-separated model names whose value head is untrained: only beam_policy runs them",
    )
    g = p.add_argument_group("positions")
    g.add_argument(
        "--positions-per-distance", type=Cli.episodes, default=20, help="positions at each true distance 1..14"
    )
    g.add_argument(
        "--uniform", type=int_in(0, Cli.MAX_EPISODES), default=100, help="positions drawn uniformly from all positions"
    )
    g = p.add_argument_group("solvers and their per-cube budgets")
    g.add_argument("--solvers", default=",".join(solvers), help=f"comma-separated, from: {', '.join(solvers)}")
    g.add_argument("--sims", type=Cli.simulations, default=d.sims, help="MCTS (and gumbel) simulations per move")
    g.add_argument(
        "--max-moves", type=Cli.move_limit, default=d.max_moves, help="moves per cube (mcts, greedy, beam depth)"
    )
    g.add_argument(
        "--max-nodes", type=int_in(1), default=d.max_nodes, help="states generated per cube (beam, astar, bestfirst)"
    )  # noqa: E501
    g.add_argument("--beam-width", type=int_in(1), default=d.beam_width, help="states kept per depth by beam")
    g.add_argument("--astar-lambda", type=Cli.fraction, default=d.astar_lambda, help="A* weight of the path length")
    g.add_argument("--astar-batch", type=int_in(1), default=d.astar_batch, help="A* nodes expanded per step")
    g.add_argument(
        "--time-limit", type=positive_float, default=30.0, help="seconds per cube for beam, astar and bestfirst"
    )
    g = p.add_argument_group("run")
    add_device_flag(g)
    g.add_argument("--seed", type=Cli.seed, default=0, help="seed of the positions and of every training run")
    g.add_argument(
        "--out-dir",
        type=Cli.nonempty_path,
        default=os.path.join("docs", "benchmark"),
        help="where models, logs and reports go",
    )
    return p


def parse_args(argv=None) -> argparse.Namespace:
    """The parsed flags with their comma lists split and checked (a bad one: ``p.error``, exit 2)."""
    solvers = bench_solvers()
    p = build_parser(solvers)
    args = p.parse_args(argv)
    args.trainers = [t.strip() for t in args.trainers.split(",") if t.strip()]
    args.solvers = [s.strip() for s in args.solvers.split(",") if s.strip()]
    args.policy_only = {s.strip() for s in args.policy_only.split(",") if s.strip()}
    for flag, names, known in (("--trainers", args.trainers, TRAINERS), ("--solvers", args.solvers, solvers)):
        unknown = [n for n in names if n not in known]
        if unknown or not names:
            what = f"unknown {shown(unknown[0])}" if unknown else "none given"
            p.error(f"{flag}: {what}; choose from {', '.join(known)}")
    extra = dict(DEFAULT_TRAIN_ARGS)
    for item in args.train_args:
        name, sep, flags = item.partition("=")
        if not sep or name not in TRAINERS:
            p.error(f"--train-args: expected TRAINER=FLAGS, TRAINER one of {', '.join(TRAINERS)}, got {shown(item)}")
        extra[name] = flags
    args.train_args = {k: shlex.split(v) for k, v in extra.items()}
    if args.checkpoints:
        missing = [f"{n}={p_}" for n, p_ in args.checkpoints.items() if not os.path.isfile(p_)]
        if missing:
            p.error(f"--checkpoints: no such file: {', '.join(missing)}")
    return args


# --------------------------------------------------------------------------- training
def wait_for_line(proc: subprocess.Popen, log_path: str, prefix: str, timeout: float) -> None:
    """Until a line of ``log_path`` starts with ``prefix``, ``proc`` ends or ``timeout`` seconds pass."""
    deadline = time.perf_counter() + timeout
    while proc.poll() is None and time.perf_counter() < deadline:
        with open(log_path, errors="replace") as f:
            if any(line.startswith(prefix) for line in f):
                return
        time.sleep(0.2)


# Long by design: one trainer's run as a supervisor sees it (start, budget, SIGTERM, grace, SIGKILL, the facts),
# with the clean-up of the child in its own finally.
def train(trainer: str, args, out_dir: str, device: str) -> dict:
    """Run main.py for ``trainer`` until ``--budget-minutes`` have passed (or it ends), then
    SIGTERM; returns the checkpoint path (None if no iteration completed) and the run's facts."""
    ckpt = os.path.join(out_dir, f"{trainer}.pt")
    logs = os.path.join(out_dir, f"{trainer}_logs")
    cmd = [
        sys.executable,
        "-u",
        os.path.join(ROOT, "main.py"),
        "--targets",
        trainer,
        "--fresh",
        "--checkpoint",
        ckpt,
        "--log-dir",
        logs,
        "--skip-eval",
        "--no-progress",
        "--num-iters",
        "1000000",
        "--seed",
        str(args.seed),
        "--device",
        device,
        *args.train_args[trainer],
    ]
    for stale in (ckpt, os.path.splitext(ckpt)[0] + ".train_state.pt"):
        if os.path.exists(stale):
            os.remove(stale)  # an unfinished run must not leave an older model in its place
    budget = args.budget_minutes * 60
    log_path = os.path.join(out_dir, f"{trainer}_train.log")
    print(f"[train] {trainer}: {budget:.0f}s budget; log {log_path}", flush=True)
    with open(log_path, "w") as log:
        # Its own process group: a Ctrl-C at the terminal reaches this script alone, which stops the trainer
        # as after its budget; child_env: a kill -9 of this script stops it too (Process_Signals).
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env=Process_Signals.child_env(),
            process_group=0,
        )
        try:
            # The budget counts from main.py's "Training on" line, printed once its SIGTERM handler is in
            # place: a signal before it would kill the run unsaved (on a loaded machine, imports take a while).
            wait_for_line(proc, log_path, TRAINING_STARTED, STOP_GRACE_S)
            start = time.perf_counter()
            next_report = 60.0
            while proc.poll() is None and time.perf_counter() - start < budget:
                time.sleep(min(1.0, max(budget - (time.perf_counter() - start), 0.01)))
                if time.perf_counter() - start >= next_report:
                    print(
                        f"[train] {trainer}: {time.perf_counter() - start:.0f}s | {last_iter_line(log_path)}",
                        flush=True,
                    )
                    next_report += 60.0
            stopped = proc.poll() is None
        finally:  # the budget spent, or this script interrupted: no trainer runs on into --out-dir
            stop_trainer(proc)
    seconds = time.perf_counter() - start
    metrics_path = os.path.join(logs, "metrics.json")
    metrics = json.load(open(metrics_path)) if os.path.isfile(metrics_path) else {}
    iterations = metrics.get("iterations", [])
    info = {
        "command": shlex.join(cmd),
        "train_seconds": seconds,
        "stopped_by_budget": stopped,
        "exit_code": proc.returncode,
        "iterations": iterations[-1] if iterations else 0,
        "final_scramble_len": metrics.get("scramble_lengths", [None])[-1] if iterations else None,
        "last_greedy_solve_rate": metrics.get("solve_rates", [None])[-1] if iterations else None,
    }
    path = ckpt if os.path.isfile(ckpt) else None
    print(
        f"[train] {trainer}: done in {seconds:.0f}s, {info['iterations']} trained iterations, exit {proc.returncode}"
        + ("" if path else " -- no checkpoint: its results are n/a"),
        flush=True,
    )
    return {"path": path, **info}


def stop_trainer(proc: subprocess.Popen) -> None:
    """SIGTERM to a trainer still running (main.py keeps its last completed iteration), and wait for it to
    end: SIGKILL after ``STOP_GRACE_S``, or at once when this script is interrupted meanwhile."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    except BaseException:  # a second Ctrl-C or SIGTERM to this script: no more waiting
        proc.kill()
        proc.wait()
        raise


def last_iter_line(log_path: str) -> str:
    try:
        lines = [line for line in open(log_path).read().splitlines() if line.startswith("iter ")]
    except OSError:
        return ""
    return lines[-1][:110] if lines else "(no iteration finished yet)"


# --------------------------------------------------------------------------- solving
def draw_positions(seed: int, per_distance: int, uniform: int) -> dict[str, np.ndarray]:
    """``{"1": cubes, ..., "14": cubes, "uniform": cubes}`` and their true distances."""
    solver = get_solver()
    rng = np.random.default_rng(seed)
    groups = {}
    for d in range(1, MAX_DISTANCE + 1):
        replace = per_distance > solver.count_at_distance(d)
        groups[str(d)] = solver.random_cubes_at_distance(rng, d, per_distance, replace=replace)
    if uniform:
        groups["uniform"] = solver.random_cubes(rng, uniform)
    return {k: (c, solver.batch_distance(c)) for k, c in groups.items()}


def score(results, distances) -> dict:
    solved = np.array([r.solved for r in results])
    lengths = np.array([len(r.moves) for r in results])
    ratio = [len(r.moves) / d for r, d in zip(results, distances) if r.solved and d > 0]
    return {
        "n": len(results),
        "solved": int(solved.sum()),
        "solve_rate": float(solved.mean()) if len(results) else None,
        "moves_over_optimal": float(np.mean(ratio)) if ratio else None,
        "mean_moves_solved": float(lengths[solved].mean()) if solved.any() else None,
        "nodes_per_cube": float(np.mean([r.nodes for r in results])) if len(results) else None,
        "seconds_per_cube": float(np.mean([r.seconds for r in results])) if len(results) else None,
    }


def run_solver(bench_name, model, positions, options, device) -> dict:
    """Solve every group with one solver; totals over the by-distance positions, and per group."""
    name, overrides, _ = bench_solvers()[bench_name]
    per_group, all_results, all_dist = {}, [], []
    for key, (cubes, dist) in positions.items():
        results = solve_cubes(name, cubes, model=model, options=options, device=device, **overrides)
        per_group[key] = score(results, dist)
        if key != "uniform":
            all_results += results
            all_dist += dist.tolist()
    return {"total": score(all_results, all_dist), "groups": per_group}


# --------------------------------------------------------------------------- report
def fmt(value, spec: str, suffix: str = "") -> str:
    return "n/a" if value is None else f"{value:{spec}}{suffix}"


def write_reports(report: dict, out_dir: str) -> list[str]:
    order = {name: i for i, name in enumerate([*report["models"], "none"])}
    rows = sorted(report["results"], key=lambda r: order.get(r["model"], len(order)))  # by model, solvers in order
    lines = [
        "# Trainers x solvers benchmark",
        "",
        f"Seed {report['settings']['seed']}; {report['settings']['positions_per_distance']} positions at each true "
        f"distance 1..14 and {report['settings']['uniform']} uniform positions; budgets per cube: "
        + ", ".join(f"{k} {v}" for k, v in report["settings"]["solver_options"].items())
        + ".",
        "Solve rate and the per-cube columns are over the by-distance positions; moves/optimal is the mean of "
        "solution length / true distance over solved cubes. n/a: the solver needs a value the model lacks, "
        "or no model.",
        "",
        "| model | solver | solve rate | uniform solve rate | moves/optimal | nodes/cube | s/cube | train time | "
        "iterations | value scale |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        t, m = r.get("total") or {}, report["models"].get(r["model"], {})
        u = (r.get("groups") or {}).get("uniform", {})
        train_s = m.get("train_seconds")
        lines.append(
            f"| {r['model']} | {r['solver']} | {fmt(t.get('solve_rate'), '.1%')} | {fmt(u.get('solve_rate'), '.1%')} | "
            f"{fmt(t.get('moves_over_optimal'), '.3f')} | {fmt(t.get('nodes_per_cube'), ',.0f')} | "
            f"{fmt(t.get('seconds_per_cube'), '.3f')} | {fmt(train_s / 60 if train_s else None, '.1f', ' min')} | "
            f"{m.get('iterations', 'n/a')} | {m.get('value_scale', 'n/a')} |"
        )
    lines += [
        "",
        "## Solve rate by true distance",
        "",
        "| model | solver | " + " | ".join(str(d) for d in range(1, MAX_DISTANCE + 1)) + " |",
        "|---|---|" + "---|" * MAX_DISTANCE,
    ]
    for r in rows:
        groups = r.get("groups") or {}
        cells = [fmt(groups.get(str(d), {}).get("solve_rate"), ".0%") for d in range(1, MAX_DISTANCE + 1)]
        lines.append(f"| {r['model']} | {r['solver']} | " + " | ".join(cells) + " |")
    lines += ["", "Training commands:", ""]
    lines += [f"- {n}: `{m['command']}`" for n, m in report["models"].items() if m.get("command")]
    md = os.path.join(out_dir, "benchmark.md")
    js = os.path.join(out_dir, "benchmark.json")
    atomic_write(md, lambda f: f.write("\n".join(lines) + "\n"), mode="w")
    atomic_write(js, lambda f: json.dump(report, f, indent=1), mode="w")
    return [md, js, plot(report, out_dir)]


def plot(report: dict, out_dir: str) -> str:
    import matplotlib  # here, not at the top: only the plot needs it, and its import is slow

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    solvers = list(dict.fromkeys(r["solver"] for r in report["results"]))
    cols = min(3, len(solvers))
    rows = -(-len(solvers) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.6 * rows), squeeze=False, sharey=True)
    distances = list(range(1, MAX_DISTANCE + 1))
    for ax, solver in zip(axes.flat, solvers):
        for r in report["results"]:
            if r["solver"] != solver or not r.get("groups"):
                continue
            rates = [r["groups"][str(d)]["solve_rate"] for d in distances]
            ax.plot(distances, [100 * x for x in rates], marker="o", ms=3, label=r["model"])
        ax.set_title(solver)
        ax.set_xlabel("true distance (moves)")
        ax.set_ylim(-3, 103)
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=8)
    for ax in axes[:, 0]:
        ax.set_ylabel("solved (%)")
    for ax in list(axes.flat)[len(solvers) :]:
        ax.axis("off")
    fig.tight_layout()
    path = os.path.join(out_dir, "benchmark.png")
    atomic_write(path, lambda f: fig.savefig(f, format="png", dpi=110))
    plt.close(fig)
    return path


# --------------------------------------------------------------------------- main
def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        device = resolve_device(args.device)
        check_writable(args.out_dir, folder=True)  # before hours of training, not after
    except (DeviceError, OutputError) as exc:
        return fail(exc)
    out_dir = args.out_dir
    os.makedirs(out_dir, exist_ok=True)
    models = gather_models(args, out_dir)
    loaded = {}
    for name, m in models.items():
        if m["path"] is None:
            continue
        try:
            loaded[name] = load_model(m["path"], device, "2x2")  # the positions are the 2x2's
        except CheckpointError as exc:
            return fail(exc)

    options = SolverOptions(
        max_moves=args.max_moves,
        max_nodes=args.max_nodes,
        beam_width=args.beam_width,
        astar_batch=args.astar_batch,
        astar_lambda=args.astar_lambda,
        sims=args.sims,
        seconds=args.time_limit,
        seed=args.seed,
    )
    print(f"[positions] drawing {args.positions_per_distance} per distance + {args.uniform} uniform", flush=True)
    positions = draw_positions(args.seed, args.positions_per_distance, args.uniform)
    with torch.no_grad():
        results = solve_all(args.solvers, models, loaded, positions, options, device)
    report = {"settings": run_settings(args, device, argv), "models": models, "results": results}
    paths = write_reports(report, out_dir)
    print("Wrote " + ", ".join(paths), flush=True)
    return 0


def gather_models(args, out_dir: str) -> dict[str, dict]:
    """The models to benchmark by name: ``--checkpoints``, or one trained per ``--trainers``
    entry (``train``); each with ``has_value`` and its ``value_scale``."""
    models: dict[str, dict] = {}
    if args.checkpoints:
        for name, path in args.checkpoints.items():
            models[name] = {"path": path, "command": None, "train_seconds": None, "iterations": "n/a"}
    else:
        for trainer in args.trainers:
            models[trainer] = train(trainer, args, out_dir, args.device)
    for name, m in models.items():
        m["has_value"] = name not in args.policy_only
        m["value_scale"] = VALUE_SCALES.get(name, "1 - 0.03 d (assumed)" if m["has_value"] else "none (policy only)")
    return models


def solve_all(solver_names, models: dict, loaded: dict, positions, options, device) -> list[dict]:
    """One result row per solver and model it runs with (one row for a solver that needs no
    model), printing each as it ends; a row that cannot run says why in ``skipped``."""
    solvers = bench_solvers()
    results = []
    start = time.perf_counter()
    for solver in solver_names:
        needs = solvers[solver][2]
        targets = {"none": None} if needs == "none" else models
        for name in targets:
            row = {"model": name, "solver": solver, "total": None, "groups": None, "skipped": None}
            model = loaded.get(name) if needs != "none" else None
            if needs != "none" and model is None:
                row["skipped"] = "no model (training finished no iteration)"
            elif needs == "value" and not models[name]["has_value"]:
                row["skipped"] = "needs a value; this model has none"
            else:
                t0 = time.perf_counter()
                row.update(run_solver(solver, model, positions, options, device))
                t = row["total"]
                print(
                    f"[solve] {solver:11s} x {name:10s}: {t['solve_rate']:6.1%} solved, moves/optimal "
                    f"{fmt(t['moves_over_optimal'], '.3f')}, {time.perf_counter() - t0:6.1f}s "
                    f"(total {time.perf_counter() - start:.0f}s)",
                    flush=True,
                )
            if row["skipped"]:
                print(f"[solve] {solver:11s} x {name:10s}: n/a ({row['skipped']})", flush=True)
            results.append(row)
    return results


def run_settings(args, device, argv) -> dict:
    """The report's record of the run: seed, positions, device, budget, solver options, command."""
    return {
        "seed": args.seed,
        "positions_per_distance": args.positions_per_distance,
        "uniform": args.uniform,
        "device": str(device),
        "budget_minutes": None if args.checkpoints else args.budget_minutes,
        "solver_options": {
            "sims": args.sims,
            "max_moves": args.max_moves,
            "max_nodes": args.max_nodes,
            "beam_width": args.beam_width,
            "astar_lambda": args.astar_lambda,
            "astar_batch": args.astar_batch,
            "time_limit_s": args.time_limit,
        },
        "command": shlex.join([sys.executable, *sys.argv]) if argv is None else shlex.join(["benchmark.py", *argv]),
    }


if __name__ == "__main__":
    Cli.run_script(main)

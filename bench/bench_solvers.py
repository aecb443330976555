"""The search solvers against MCTS at 200 simulations, side by side on the same cubes.

Two position sets, both from ``--seed``: ``--per-distance`` distinct positions at every true
distance 1..14 (as ``evaluate.py --by-distance``), and ``--uniform`` positions drawn uniformly
from all 3,674,160. Every configuration solves every set through ``Solvers.solve_cubes`` (all
cubes of a set in lockstep, as ``evaluate.py`` runs them); each round runs the configurations
interleaved, so load on the machine hits them alike: compare the ratios, not the milliseconds.
Per configuration and set: solved, moves / optimal (sum of solution lengths over the sum of the
optimal lengths, solved cubes), nodes per cube, ms per cube (median over rounds) and the ratio
of MCTS-200's ms per cube to its own (above 1: faster than MCTS).
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

import common  # noqa: F401  (import paths)
from common import Cli, timed
from cube import Solvers as S
from cube.Cube_Checkpoints import load_model
from Optimal_Solver import get_solver
from run.Run_IO import CheckpointError

MCTS = "mcts 200 sims"
CONFIGS = {
    MCTS: ("mcts", S.SolverOptions(sims=200)),
    "astar batch 1, lambda 0.6": ("astar", S.SolverOptions(astar_batch=1, astar_lambda=0.6)),
    "astar batch 10, lambda 0.6": ("astar", S.SolverOptions(astar_batch=10, astar_lambda=0.6)),
    "beam width 2 (value)": ("beam", S.SolverOptions(beam_width=2)),
    "beam width 8 (value)": ("beam", S.SolverOptions(beam_width=8)),
    "beam width 16 (policy)": ("beam", S.SolverOptions(beam_width=16, beam_rank="policy")),
    "greedy": ("greedy", S.SolverOptions()),
}


def position_sets(per_distance: int, uniform: int, seed: int) -> dict[str, np.ndarray]:
    solver, rng = get_solver(), np.random.default_rng(seed)
    by_distance = [
        solver.random_cubes_at_distance(rng, d, min(per_distance, solver.count_at_distance(d))) for d in range(1, 15)
    ]
    return {
        f"{per_distance} per distance 1-14": np.concatenate(by_distance),
        f"{uniform} uniform": solver.random_cubes(rng, uniform),
    }


def summary(results: list[S.SolveResult], optimal: np.ndarray) -> tuple[str, float]:
    solved = np.array([r.solved for r in results])
    lengths = np.array([len(r.moves) for r in results])
    ratio = lengths[solved].sum() / max(optimal[solved].sum(), 1)
    nodes = np.mean([r.nodes for r in results])
    return f"solved {solved.sum()}/{len(results)}, moves/optimal {ratio:.3f}, nodes/cube {nodes:,.0f}", solved.mean()


def main(argv=None) -> int:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--per-distance", type=Cli.episodes, default=100, help="positions at each true distance 1..14")
    p.add_argument("--uniform", type=Cli.episodes, default=1000, help="uniformly drawn positions")
    p.add_argument("--rounds", type=Cli.rounds, default=1, help="interleaved measurement rounds (medians reported)")
    p.add_argument("--seed", type=Cli.seed, default=0, help="seed of the positions")
    p.add_argument("--threads", type=Cli.int_in(1, 1024, "torch threads"), default=2, help="torch threads")
    p.add_argument(
        "--model", type=Cli.nonempty_path, default="pretrained/rubik_policy_value.pt", help="the checkpoint that solves"
    )
    p.add_argument(
        "--only",
        default="",
        help=f"configuration names to run besides {MCTS!r}, separated by ';' (names hold commas; default: all)",
    )
    args = p.parse_args(argv)
    only = [name.strip() for name in args.only.split(";") if name.strip()]
    unknown = [name for name in only if name not in CONFIGS]
    if unknown:
        p.error(f"--only: unknown configuration {unknown[0]!r}; choose from {', '.join(map(repr, CONFIGS))}")

    try:
        model = load_model(args.model, puzzle="2x2")
    except CheckpointError as exc:
        return Cli.fail(exc)
    torch.set_num_threads(args.threads)
    configs = {k: v for k, v in CONFIGS.items() if not only or k in only or k == MCTS}
    sets = position_sets(args.per_distance, args.uniform, args.seed)
    optimal = {name: get_solver().batch_distance(cubes) for name, cubes in sets.items()}
    ms: dict[tuple[str, str], list[float]] = {}
    info: dict[tuple[str, str], str] = {}
    for _ in range(args.rounds):
        for set_name, cubes in sets.items():
            for label, (solver, opts) in configs.items():
                res, t = timed(lambda: S.solve_cubes(solver, cubes, model=model, options=opts))  # noqa: B023
                ms.setdefault((set_name, label), []).append(1000 * t / len(cubes))
                info[set_name, label] = summary(res, optimal[set_name])[0]
    for set_name in sets:
        print(f"# {set_name} (model {args.model}, {args.threads} torch threads, {args.rounds} round(s))")
        base = np.median(ms[set_name, MCTS])
        for label in configs:
            t = np.median(ms[set_name, label])
            print(f"{label:<28} {t:8.2f} ms/cube  x{base / t:5.2f} vs MCTS   ({info[set_name, label]})", flush=True)
    return 0


if __name__ == "__main__":
    Cli.run_script(main)

"""How close are Gumbel self-play's value targets to the true distance?

    python docs/value_target_quality.py CHECKPOINT [--episodes 200] [--sims 32] [--scramble-len 16]

Plays ``--episodes`` episodes of ``main.py --search gumbel`` self-play with the network (Gumbel
noise 1, from random scrambles of ``--scramble-len`` moves, as a training iteration at the
curriculum's last length does), then reads every searched state's value target as moves,
``(1 - z) / 0.03``, beside its true distance from the optimal solver. Each row is one way to
make the target (``main.py --value-target`` and ``--search-value``; the depth bound on, as in
training); each cell is ``bias / mean |error|`` in moves at one true distance, and the last
column the mean |error| over all searched states. The targets of one run are read from the same
episodes, so the rows differ only in how they are made.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from cube.Cube_Checkpoints import load_model  # noqa: E402
from cube.Puzzles import value_as_moves  # noqa: E402
from engine.Gumbel_Self_Play import gumbel_self_play  # noqa: E402
from Optimal_Solver import MAX_DISTANCE, get_solver  # noqa: E402
from run import Cli  # noqa: E402
from run.Run_IO import CheckpointError  # noqa: E402

#: (row name, --search-value, --value-target, --bootstrap-steps)
TARGETS = [
    *((f"best, bootstrap {n}", "best", "bootstrap", n) for n in (0, 1, 2, 4, 8)),
    *((f"mean, bootstrap {n}", "mean", "bootstrap", n) for n in (0, 4)),
    *((f"best, bootstrap-max {n}", "best", "bootstrap-max", n) for n in (1, 2, 4, 8)),
]


def target_errors(results, true_distance: np.ndarray, search_value: str, value_target: str, steps: int):
    """Per searched state, the target (as training makes it) read as moves minus its true distance."""
    return value_as_moves(np.concatenate(results.state_values(value_target, steps, search_value))) - true_distance


def main(argv=None) -> int:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", type=Cli.nonempty_path, help="a 2x2 model file")
    p.add_argument("--episodes", type=Cli.episodes, default=200, help="self-play episodes")
    p.add_argument("--sims", type=Cli.simulations, default=32, help="simulations per move")
    p.add_argument(
        "--scramble-len",
        type=Cli.int_in(1, Cli.MAX_SCRAMBLE_LEN, "moves"),
        default=16,
        help="scramble length of the episodes",
    )
    p.add_argument("--seed", type=Cli.seed, default=0, help="seed of the scrambles and the Gumbel noise")
    args = p.parse_args(argv)
    try:
        model = load_model(args.checkpoint, puzzle="2x2")
    except CheckpointError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rng = np.random.default_rng(args.seed)
    results = gumbel_self_play(model, args.episodes, Cli.MAX_MOVES, args.sims, args.scramble_len, rng)
    solver = get_solver()
    true = np.concatenate([solver.batch_distance(s) for s in results.states]).astype(np.float64)
    distances = range(1, MAX_DISTANCE + 1)
    print(f"{len(true)} searched states, {100 * np.mean(results.solved):.1f}% of the episodes solved")
    print("| target | " + " | ".join(f"d {d}" for d in distances) + " | all |")
    print("| --- |" + " ---: |" * (MAX_DISTANCE + 1))
    print("| states | " + " | ".join(str(int((true == d).sum())) for d in distances) + f" | {len(true)} |")
    for name, search_value, value_target, steps in TARGETS:
        err = target_errors(results, true, search_value, value_target, steps)
        cells = [
            f"{err[true == d].mean():+.2f} / {np.abs(err[true == d]).mean():.2f}" if (true == d).any() else ""
            for d in distances
        ]
        print(f"| {name} | " + " | ".join(cells) + f" | {np.abs(err).mean():.3f} |")
    return 0


if __name__ == "__main__":
    Cli.run_script(main)

"""Greedy MCTS from every position where the network's policy could lead it astray.

    python docs/mcts_weak_spots.py pretrained/rubik_policy_value.pt [--ratio 0.7] [--sims 200]

With a value exact to a fraction of a move, greedy MCTS on the 2x2 fails in one way: it follows
its prior. The subtree means of a move one closer and of one further differ by 0.03-0.06 of
value, while PUCT's exploration term (1.3 x prior x sqrt(N) / (1 + n)) is several times that at
50-200 simulations, so the most-visited move is about the most likely one under the policy
(``docs/exact_recipe.md`` traces the failures). A position whose policy gives every move that is
not one closer much less than its best closer move is therefore safe; this script plays every
position where some such move gets at least ``--ratio`` of the best closer move's probability.

It finds them over all 77,802 classes of positions up to symmetry (a network with
``--canonical-symmetry`` gives every position of a class the same policy, the moves renamed by
the symmetry) and plays every position of those classes, as ``evaluate.py`` plays them (no
move history, same seed and c_puct). It prints per true distance the positions played, solved
and solved optimally; ``--failures FILE`` writes the unsolved ones (JSON lines). A screen, not a
proof: positions below the ratio are not played (``evaluate.py --all-positions`` samples them).
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
from value_by_distance import class_distances, class_outputs, print_table  # noqa: E402

from cube.Cube_Checkpoints import load_model  # noqa: E402
from cube.Puzzles import C_PUCT  # noqa: E402
from Optimal_Solver import MAX_DISTANCE, get_solver  # noqa: E402
from run import Cli  # noqa: E402
from run.Run_IO import CheckpointError, OutputError, check_writable  # noqa: E402


def prior_ratio(policy: np.ndarray, closer: np.ndarray) -> np.ndarray:
    """Per row: the largest probability of a move that is not one closer over the largest of a
    move that is (inf with no closer move, as at the solved cube; 0 when every move is closer)."""
    best_closer = np.where(closer, policy, 0.0).max(axis=1)
    best_other = np.where(closer, 0.0, policy).max(axis=1)
    return np.divide(best_other, best_closer, out=np.full_like(best_other, np.inf), where=best_closer > 0)


def weak_positions(ratio: np.ndarray, dist: np.ndarray, class_of: np.ndarray, threshold: float) -> np.ndarray:
    """Sorted indices of every position (``class_of``: its class) whose class is unsolved and
    has a ``ratio`` of at least ``threshold``."""
    weak = np.flatnonzero((ratio >= threshold) & (dist > 0))
    return np.flatnonzero(np.isin(class_of, weak))


def main(argv=None) -> int:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", type=Cli.nonempty_path, help="model file (bare state_dict, --canonical-symmetry)")
    p.add_argument("--ratio", type=Cli.positive_float, default=0.7, help="play positions at or above this prior ratio")
    p.add_argument("--sims", type=Cli.simulations, default=200, help="MCTS simulations per move")
    p.add_argument("--seed", type=Cli.seed, default=0, help="the search's seed, as evaluate.py's")
    p.add_argument(
        "--failures", type=Cli.nonempty_path, default=None, help="write the unsolved positions here (JSON lines)"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    try:
        if args.failures:
            check_writable(args.failures)  # before the run, not after it
        model = load_model(args.checkpoint, puzzle="2x2")
    except (CheckpointError, OutputError) as exc:
        return Cli.fail(exc)
    if not model.symmetric:
        return Cli.fail(f"this check needs a network with --canonical-symmetry; {args.checkpoint} has none.")
    import torch

    from cube.All_Positions import cubes_at
    from cube.Evaluation_All_Positions import failure_records, write_jsonl
    from cube.Value_Sweep import Sweeper  # the class tables: built once, about a minute
    from Self_Play import play_greedy

    sweeper, table = Sweeper(), get_solver().table
    _, policy = class_outputs(model, sweeper)
    dist, closer = class_distances(table, sweeper)
    ratio = prior_ratio(policy, closer)
    index = weak_positions(ratio, dist, sweeper.class_of, args.ratio)
    print(f"{args.checkpoint}: {len(index):,} positions with a prior ratio of at least {args.ratio};", end=" ")
    print(f"greedy MCTS, {args.sims} simulations")
    run = play_greedy(
        model,
        cubes_at(index),
        args.sims,
        Cli.MAX_MOVES,
        device=torch.device("cpu"),
        seed=args.seed,
        c_puct=C_PUCT,
        progress=Cli.show_progress(not args.no_progress),
        desc="weak spots",
    )
    optimal = table[index].astype(np.int64)
    lengths = np.array([len(a) for a in run.actions])
    at = [optimal == d for d in range(1, MAX_DISTANCE + 1)]
    print_table(
        "positions played, solved, solved in the optimal number of moves",
        ("played", [f"{a.sum():,}" for a in at]),
        ("solved", [f"{run.solved[a].sum():,}" for a in at]),
        ("optimal", [f"{(run.solved & (lengths == optimal))[a].sum():,}" for a in at]),
    )
    print(f"\n{run.solved.sum():,} of {len(index):,} solved; {(~run.solved).sum():,} not.")
    if args.failures:
        fail = ~run.solved
        write_jsonl(args.failures, failure_records(index[fail], [run.actions[i] for i in np.flatnonzero(fail)]))
        print(f"Wrote {args.failures}.")
    return 0


if __name__ == "__main__":
    Cli.run_script(main)

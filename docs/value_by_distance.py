"""What a trained network knows about distance: for positions at each true distance, the
distance its value head implies and how often its policy alone (no search) solves them.

    python docs/value_by_distance.py pretrained/rubik_policy_value.pt [more checkpoints ...]

Value ``v`` is read as ``(1 - v) / 0.03`` moves, the inverse of the targets' ``1 - 0.03 n``
(an episode solved in n moves; with ``--value-target remaining`` or ``--targets lookahead``,
n moves still to go). A head that knows distance reads d at distance d; the original
recipe's reads about the same everywhere. The greedy solve rate plays the policy's most
likely legal move for at most 40 moves; the optimal-move mass is the policy's probability
summed over the moves that bring the cube one move closer (what MCTS at few simulations
follows, since Q differs by only 0.03 per move). Positions: ``--runs`` uniform draws (with
replacement) per distance from the optimal solver, the same for every checkpoint.

``--classes`` (a network with ``--canonical-symmetry``) reads instead every one of the 77,802
classes of positions up to symmetry once and weighs it by its number of positions: such a
network gives every position of a class the same value and the same policy mass on the moves
one closer (a symmetry keeps distances and renames the moves), so these are the figures over
all 3,674,160 positions. It prints the share of positions whose value reads within half a move
of the true distance and the policy mass; with many checkpoints (``snap/*.pt``) it shows when
a run became exact.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from cube.Cube_Checkpoints import load_model  # noqa: E402
from cube.Lookahead_Targets import greedy_policy_solve_rate  # noqa: E402
from cube.Puzzles import VALUE_PER_MOVE, value_as_moves  # noqa: E402
from Optimal_Solver import MAX_DISTANCE, get_solver  # noqa: E402
from Rubik2x2Env import MAX_MOVES, NUM_ACTIONS, batch_apply_moves, batch_onehot  # noqa: E402
from run import Cli  # noqa: E402
from run.Run_IO import CheckpointError  # noqa: E402


def probe(model, solver, runs: int, seed: int) -> list[tuple[int, float, float, float, float]]:
    """Per distance: ``(d, mean moves read from the value, their std, greedy solve rate,
    mean policy mass on the moves one closer)``."""
    rows = []
    for d in range(1, MAX_DISTANCE + 1):
        cubes = solver.random_cubes_at_distance(np.random.default_rng([seed, d]), d, runs, replace=True)
        with torch.no_grad():
            logits, value = model(torch.from_numpy(batch_onehot(cubes)))
        moves = (1.0 - value.squeeze(-1).numpy()) / VALUE_PER_MOVE
        children = batch_apply_moves(np.repeat(cubes, NUM_ACTIONS, axis=0), np.tile(np.arange(NUM_ACTIONS), len(cubes)))
        closer = solver.table[solver.index(children)].reshape(len(cubes), NUM_ACTIONS) < d
        mass = float((torch.softmax(logits, dim=-1).numpy() * closer).sum(axis=1).mean())
        rows.append(
            (d, float(moves.mean()), float(moves.std()), greedy_policy_solve_rate(model, cubes, MAX_MOVES), mass)
        )
    return rows


def class_outputs(model, sweeper) -> tuple[np.ndarray, np.ndarray]:
    """The network on every class's representative: ``(value read as moves (n,), policy (n, 12))``."""
    with torch.no_grad():
        outs = [model(torch.from_numpy(sweeper.inputs[lo : lo + 16384])) for lo in range(0, len(sweeper.reps), 16384)]
    moves = value_as_moves(torch.cat([v for _, v in outs]).squeeze(-1).double().numpy())
    return moves, torch.cat([torch.softmax(p, dim=-1) for p, _ in outs]).numpy()


def class_distances(table: np.ndarray, sweeper) -> tuple[np.ndarray, np.ndarray]:
    """Every class's true distance ``(n,)`` and which of its 12 moves bring it one closer ``(n, 12)``."""
    dist = table[sweeper.reps].astype(np.int64)
    return dist, dist[sweeper.child_class] < dist[:, None]


def probe_classes(model, solver, sweeper) -> list[tuple[int, float, float]]:
    """Per distance 1-14 over every position (via its class): ``(d, share whose value reads
    within half a move, mean policy mass on the moves one closer)``."""
    moves, policy = class_outputs(model, sweeper)
    dist, closer = class_distances(solver.table, sweeper)
    mass = (policy * closer).sum(axis=1)
    size = np.bincount(sweeper.class_of, minlength=len(sweeper.reps)).astype(np.float64)
    exact = np.abs(moves - dist) <= 0.5

    def share(values: np.ndarray, d: int) -> float:
        at = dist == d
        return float(np.average(values[at], weights=size[at])) if at.any() else float("nan")

    return [(d, share(exact, d), share(mass, d)) for d in range(1, MAX_DISTANCE + 1)]


def print_table(title: str, *rows: tuple[str, list[str]]) -> None:
    """One markdown table: a column per distance 1-14, a row per measure."""
    print(f"\n{title}")
    print("| distance | " + " | ".join(str(d) for d in range(1, MAX_DISTANCE + 1)) + " |")
    print("| --- |" + " ---: |" * MAX_DISTANCE)
    for name, cells in rows:
        print(f"| {name} | " + " | ".join(cells) + " |")


def main(argv=None) -> int:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoints", type=Cli.nonempty_path, nargs="+", help="model files (bare state_dicts)")
    p.add_argument("--runs", type=Cli.episodes, default=200, help="positions per distance")
    p.add_argument("--seed", type=Cli.seed, default=0, help="seed of the sampled positions")
    p.add_argument(
        "--classes",
        action="store_true",
        help="every position, through its symmetry class (networks with --canonical-symmetry only)",
    )
    args = p.parse_args(argv)
    if args.runs < 1:
        p.error("--runs must be at least 1")
    models = []
    for path in args.checkpoints:  # every model checked before the distance table loads
        try:
            models.append((path, load_model(path, puzzle="2x2")))
        except CheckpointError as exc:
            return Cli.fail(exc)
    solver = get_solver()
    sweeper = None
    for path, model in models:
        if args.classes:
            if not model.symmetric:
                print(f"error: --classes needs a network with --canonical-symmetry; {path} has none.", file=sys.stderr)
                return 2
            if sweeper is None:
                from cube.Value_Sweep import Sweeper  # the class tables: built once, about a minute

                sweeper = Sweeper()
            rows = probe_classes(model, solver, sweeper)
            print_table(
                f"{path}: every position, through its symmetry class",
                ("value within half a move", [f"{100 * e:.1f}%" for _, e, _ in rows]),
                ("policy mass on optimal moves", [f"{100 * w:.1f}%" for *_, w in rows]),
            )
            continue
        rows = probe(model, solver, args.runs, args.seed)
        print_table(
            f"{path}: value read as moves (mean +- std) and greedy policy solve rate, {args.runs} positions per distance",  # noqa: E501
            ("value reads", [f"{m:.1f}±{s:.1f}" for _, m, s, *_ in rows]),
            ("greedy policy solves", [f"{100 * g:.0f}%" for *_, g, _ in rows]),
            ("policy mass on optimal moves", [f"{100 * w:.0f}%" for *_, w in rows]),
        )
    return 0


if __name__ == "__main__":
    Cli.run_script(main)

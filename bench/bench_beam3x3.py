"""The 3x3 beam with the shipped model: its speed before and after issue 29, and quality against time.

Speed (``--rounds``): the beam of ``--speed-width`` from ``--speed-cubes`` uniformly random positions,
solved by the reference (the beam and value function as they were before issue 29, frozen below:
record keys sorted and merged with ``np.union1d`` each depth, the network's full forward under
``no_grad`` on each request's one-hot rows, after an exact ``np.unique`` of the request) and by
``Solvers.solve_cubes("beam")`` as it is now, interleaved round by round so that load on the
machine hits both alike. States a second = children generated (each scored once) per second of
search; the ratio is the median of per-round ratios. The mixed rank (the policy proposes 4 children
per beam place, the value picks among them) runs beside them at the same width, and so does the
mixed rank with the network's products in bfloat16 (``--precision bf16``, Precision.py).

Quality (``--widths``): ``--cubes`` uniformly random positions from ``--seed`` solved by the beam of
each width and each of ``--ranks`` (value, mixed, policy), and by the widening beam
(``--beam-widen``) under each ``--time-limits``: solved,
mean length against the optimal mean of uniform positions (20.66 quarter turns, Rokicki's 3
million optimally solved positions) and against kociemba's two-phase solutions in quarter
turns, seconds a cube (mean and maximum; a fixed width solves all cubes in lockstep, so each
gets the mean); the network's products at ``--precision``. Every beam searches at most
``Puzzle.default_max_moves`` (100) deep and generates at most 2,000 states per unit of width (the
scripts' 2,000,000 for a beam of 1,000).
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

import common  # noqa: F401  (import paths)
from common import Cli, load_3x3_model, timed
from cube import Solvers as S
from cube.Cube_Model import NO_ACTION
from cube.Kociemba_Solver import solution_lengths
from cube.Puzzles import get_puzzle
from cube.Solver_Base import SolveResult, evaluate_once, verify
from engine import Precision

P3 = get_puzzle("3x3")
OPTIMAL_MEAN = P3.uniform_optimal_mean  # quarter turns: the mean optimal length of a uniformly random position
DEPTH = P3.default_max_moves  # the scripts' --max-steps of the 3x3: the beam's step cap


# --------------------------------------------------------------------------- the reference (before issue 29)
def reference_value_fn(model):
    """The value function ``Solvers.solve_cubes`` built before issue 29: ``evaluate_once`` over the
    puzzle's exact (record) keys, then the whole network (both heads) on the one-hot rows."""

    def value_fn(cubes: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return model(torch.from_numpy(P3.encode(cubes)))[1].reshape(-1).numpy()

    return evaluate_once(value_fn, P3)


def reference_beam(cube, value_fn, beam_width: int, max_depth: int, max_nodes: int) -> SolveResult:
    """The value-ranked beam of one cube before issue 29 (``Tree_Searches._beam_search``): the
    same rule, on the puzzle's record keys, every held state merged in with ``np.union1d``."""
    root = np.asarray(cube, dtype=np.int8).reshape(1, P3.num_stickers)
    states, lasts, counts = root, np.array([NO_ACTION]), np.zeros(1, np.intp)
    paths, expanded, nodes = np.zeros((1, 0), np.intp), P3.state_keys(root), 0
    for _ in range(max_depth):
        legal = P3.legal_action_mask(lasts, counts)
        if nodes + int(legal.sum()) > max_nodes:
            break
        parent, action = np.nonzero(legal)
        children = P3.apply(states[parent], action)
        nodes += len(children)
        solved = np.flatnonzero(P3.is_solved(children))
        if len(solved):
            moves = paths[parent[solved[0]]].tolist() + [int(action[solved[0]])]
            return SolveResult(moves, verify(root, moves, P3), nodes, 0.0)
        keys = P3.state_keys(children)
        order = np.sort(np.unique(keys, return_index=True)[1])
        at = np.minimum(np.searchsorted(expanded, keys[order]), len(expanded) - 1)
        order = order[expanded[at] != keys[order]]
        score = np.full(len(children), -np.inf)
        if len(order):
            score[order] = value_fn(children[order])
        keep = order[np.argsort(-score[order], kind="stable")][:beam_width]
        if not len(keep):
            break
        expanded = np.union1d(expanded, keys[keep])
        states, paths = children[keep], np.column_stack([paths[parent[keep]], action[keep]])
        counts = P3.next_face_count(lasts[parent[keep]], counts[parent[keep]], action[keep])
        lasts = action[keep]
    return SolveResult([], False, nodes, 0.0)


# --------------------------------------------------------------------------- measurements
def speed(model, cubes: np.ndarray, width: int, rounds: int) -> None:
    """Print states a second of the reference and of the beam now, and their ratio."""
    value_fn = reference_value_fn(model)
    rates: dict[str, list[float]] = {"before": [], "after": [], "mixed": [], "mixed16": []}
    for _ in range(rounds):
        before, t_before = timed(lambda: [reference_beam(c, value_fn, width, DEPTH, 2_000_000) for c in cubes])  # noqa: B023
        rates["before"].append(sum(r.nodes for r in before) / t_before)
        for rank, precision, label in (
            ("value", "fp32", "after"),
            ("mixed", "fp32", "mixed"),
            ("mixed", "bf16", "mixed16"),
        ):
            res, t = timed(
                lambda: S.solve_cubes(
                    "beam", cubes, model=model, puzzle=P3, beam_width=width, max_nodes=2_000_000, max_moves=DEPTH,
                    beam_rank=rank, precision=precision,  # noqa: B023
                )
            )  # fmt: skip
            rates[label].append(sum(r.nodes for r in res) / t)
    print(f"# speed: beam {width}, {len(cubes)} uniform positions, {rounds} round(s), states generated a second")
    print("# (after: value rank, every new child read; mixed: 4 children read per beam place, one forward each;")
    print("#  mixed16: the mixed beam with the network's products in bfloat16, --precision bf16)")
    for label, rate in rates.items():
        print(f"{label:<8} {np.median(rate):10,.0f} states/s   (rounds: {', '.join(f'{r:,.0f}' for r in rate)})")
    for label, base in (("after", "before"), ("mixed", "before"), ("mixed16", "before"), ("mixed16", "mixed")):
        ratio = np.median(np.array(rates[label]) / np.array(rates[base]))
        print(f"ratio    {ratio:10.2f}x  ({label} / {base})", flush=True)


def quality_row(label: str, results: list[SolveResult], kociemba: np.ndarray) -> str:
    solved = np.array([r.solved for r in results])
    lengths = np.array([len(r.moves) for r in results], dtype=float)
    seconds = np.array([r.seconds for r in results])
    mean = lengths[solved].mean() if solved.any() else float("nan")
    ref = kociemba[solved].mean() if solved.any() else float("nan")
    return (
        f"| {label} | {solved.sum()}/{len(results)} | {mean:.2f} | {mean / OPTIMAL_MEAN:.3f} | {ref:.2f} | "
        f"{seconds.mean():.2f} | {seconds.max():.2f} |"
    )


def quality(
    model, cubes: np.ndarray, widths: list[int], limits: list[float], start_width: int, ranks, precision: str
) -> None:
    """Print the quality-vs-time table (markdown) of fixed widths and of widening beams, each rank."""
    kociemba = solution_lengths(cubes)
    print(f"# quality: {len(cubes)} uniform positions; optimal mean {OPTIMAL_MEAN}, kociemba's {kociemba.mean():.2f}")
    print("| beam | solved | mean length | / optimal mean | kociemba (same cubes) | s a cube | at most s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for rank in ranks:
        for width in widths:
            res = S.solve_cubes(
                "beam", cubes, model=model, puzzle=P3, beam_width=width, max_nodes=2000 * width, max_moves=DEPTH,
                beam_rank=rank, precision=precision,
            )  # fmt: skip
            print(quality_row(f"{rank}, width {width:,}", res, kociemba), flush=True)
        for limit in limits:
            res = S.solve_cubes(
                "beam", cubes, model=model, puzzle=P3, beam_width=start_width, max_nodes=2000 * start_width,
                max_moves=DEPTH, beam_widen=True, seconds=limit, beam_rank=rank, precision=precision,
            )  # fmt: skip
            print(quality_row(f"{rank}, widening from {start_width:,}, {limit:g} s", res, kociemba), flush=True)


def _int_list(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be integers separated by commas, got {text!r}") from None
    if any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"every value must be at least 1, got {text!r}")
    return values


def _rank_list(text: str) -> list[str]:
    ranks = [v.strip() for v in text.split(",") if v.strip()]
    if not ranks or any(r not in S.BEAM_RANKS for r in ranks):
        raise argparse.ArgumentTypeError(
            f"must be ranks from {', '.join(S.BEAM_RANKS)} separated by commas, got {text!r}"
        )
    return ranks


def _float_list(text: str) -> list[float]:
    return [Cli.positive_float(v) for v in text.split(",") if v.strip()]


def main(argv=None) -> int:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", type=Cli.nonempty_path, default="pretrained/rubik3x3_policy_value.pt", help="3x3 model")
    p.add_argument("--threads", type=Cli.int_in(1, 1024, "torch threads"), default=1, help="torch threads")
    p.add_argument(
        "--rounds", type=Cli.int_in(0, 1000, "rounds"), default=3, help="interleaved speed rounds (0: no speed test)"
    )
    p.add_argument("--speed-width", type=Cli.int_in(1, 100_000, "beam width"), default=1000, help="speed: beam width")
    p.add_argument("--speed-cubes", type=Cli.episodes, default=2, help="speed: uniform positions a round")
    p.add_argument("--cubes", type=Cli.int_in(0, 10_000, "positions"), default=20, help="quality: positions (0: none)")
    p.add_argument("--widths", type=_int_list, default=[100, 300, 1000], help="quality: beam widths, e.g. 100,1000")
    p.add_argument("--time-limits", type=_float_list, default=[], help="quality: widening beams' seconds, e.g. 10,30")
    p.add_argument("--start-width", type=Cli.int_in(1, 100_000, "beam width"), default=256, help="widening: first")
    p.add_argument("--seed", type=Cli.seed, default=0, help="seed of the positions")
    p.add_argument("--ranks", type=_rank_list, default=["value"], help="quality: beam ranks, e.g. value,mixed")
    p.add_argument("--precision", choices=Precision.PRECISIONS, default="fp32", help="quality: the network's products")
    args = p.parse_args(argv)
    model = load_3x3_model(args.model, args.threads)
    # The positions of ``evaluate.py --puzzle 3x3 --uniform N --seed S`` (their first ones for speed).
    if args.rounds:
        cubes = P3.random_states(np.random.default_rng(args.seed), args.speed_cubes)
        speed(model, cubes, args.speed_width, args.rounds)
    if args.cubes:
        cubes = P3.random_states(np.random.default_rng(args.seed), args.cubes)
        quality(model, cubes, args.widths, args.time_limits, args.start_width, args.ranks, args.precision)
    return 0


if __name__ == "__main__":
    Cli.run_script(main)

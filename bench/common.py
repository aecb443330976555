"""Shared bits of the benchmarks: import paths, a seeded random-weight net, timing helpers."""

from __future__ import annotations

import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]

import numpy as np  # noqa: E402
import torch  # noqa: E402

from cube.Cube_Checkpoints import load_model  # noqa: E402
from Policy_Value_Net import PolicyValueNet  # noqa: E402
from Rubik2x2Env import batch_onehot  # noqa: E402
from run import Cli  # noqa: E402, F401  (the scripts' flag types and run_script: ``from common import Cli``)
from run.Run_IO import CheckpointError  # noqa: E402


def load_3x3_model(path: str, threads: int) -> PolicyValueNet:
    """The 3x3 model at ``path`` in eval mode, torch on ``threads`` threads; a missing or bad file ends
    the script with one sentence and exit status 2."""
    try:
        model = load_model(path, puzzle="3x3").eval()
    except CheckpointError as exc:
        raise SystemExit(Cli.fail(exc)) from None
    torch.set_num_threads(threads)
    return model


def walk_states(puzzle, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` cube states, each a random walk of 1..26 moves from solved (an even mix of lengths)."""
    lengths = rng.integers(1, 27, n)
    return np.concatenate([puzzle.scramble(rng, int((lengths == k).sum()), k)[0] for k in range(1, 27)])


def print_rates(rates: dict[str, list[float]], over: tuple[str, str] = ("bf16", "fp32"), unit: str = "states") -> None:
    """Each setting's ``unit`` a second (median over rounds, and every round), then ``over[0]``'s over
    ``over[1]``'s: the median of the per-round ratios, so that load on the machine, which hits both alike,
    cancels."""
    for p, r in rates.items():
        print(f"{p:<10} {np.median(r):12,.0f} {unit}/s   (rounds: {', '.join(f'{x:,.0f}' for x in r)})")
    print_ratio(rates, *over)


def print_ratio(rates: dict[str, list[float]], top: str, bottom: str) -> None:
    """``top``'s states a second over ``bottom``'s: the median of the per-round ratios."""
    ratio = np.median(np.array(rates[top]) / np.array(rates[bottom]))
    print(f"{'ratio':<10} {ratio:12.2f}x  ({top} / {bottom})")


def random_net(seed: int = 0) -> PolicyValueNet:
    torch.manual_seed(seed)
    return PolicyValueNet().eval()


def one_state_evaluator(model):
    """Batch-1 network calls, no cache, as the original search evaluates a leaf: its stored
    observation as a tensor, ``model.predict``, results back to numpy."""
    device = next(model.parameters()).device

    def evaluate(cube, obs):
        obs_t = torch.tensor(obs, dtype=torch.float32).unsqueeze(0).to(device)
        policy, value = model.predict(obs_t)
        return policy.squeeze(0).cpu().numpy(), float(value.reshape(-1)[0])

    return evaluate


@torch.no_grad()
def network_rate(model, cubes: np.ndarray, seconds: float = 1.0) -> float:
    """Raw forward passes (one-hot included) per second at batch ``len(cubes)``."""
    x = torch.from_numpy(batch_onehot(cubes))
    model(x)
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        model(torch.from_numpy(batch_onehot(cubes)))
        n += len(cubes)
    return n / (time.perf_counter() - start)


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def default_3x3_options(**changes):
    """The ``SolverOptions`` the scripts solve a 3x3 with when no solver flag is given (``resolve_solver``: the
    3x3's ``default_solver_options`` and depth), with ``changes``."""
    import dataclasses

    from cube.Puzzles import get_puzzle
    from cube.Solvers import SolverOptions

    p3 = get_puzzle("3x3")
    base = SolverOptions(max_moves=p3.default_max_moves)
    return dataclasses.replace(base, **{**p3.default_solver_options, **changes})


def default_3x3_side_by_side(argv, doc: str, variants: dict[str, dict], same_moves: bool) -> int:
    """The 3x3's default solver (``Puzzle.default_solver_options``: views, width, budgets, precision) in two
    variants, cube by cube on ``--cubes`` uniformly random positions, each cube with the first variant and
    then the second, so that load on the machine hits both alike. ``variants``: label -> ``SolverOptions``
    fields to change and ``stops_views`` (``Solver_Views.solve_from_views``). Prints per cube each one's
    length, states and seconds, then the totals and the ratios second / first; ``same_moves``: the two
    must find the same solutions (else the script ends with status 1)."""
    import argparse
    import dataclasses

    from cube.Puzzles import get_puzzle
    from cube.Solver_Base import network_fns
    from cube.Solver_Views import solve_from_views
    from cube.Solvers import SOLVERS, Solving

    p3 = get_puzzle("3x3")
    p = Cli.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", default="pretrained/rubik3x3_policy_value.pt", help="a 3x3 model")
    p.add_argument("--cubes", type=Cli.int_in(1, 10_000), default=5, help="uniformly random positions")
    p.add_argument("--beam-width", type=Cli.int_in(1, 1_000_000), default=None, help="(default: the 3x3's)")
    p.add_argument("--threads", type=Cli.int_in(1, 1024, "torch threads"), default=2, help="torch threads")
    p.add_argument("--seed", type=Cli.seed, default=0, help="draws the positions")
    args = p.parse_args(argv)
    model = load_3x3_model(args.checkpoint, threads=args.threads)
    base = default_3x3_options() if args.beam_width is None else default_3x3_options(beam_width=args.beam_width)
    value_fn, policy_fn = network_fns(model, puzzle=p3, precision=base.precision)
    runs = {label: (dataclasses.replace(base, **change), stops) for label, (change, stops) in variants.items()}
    print(f"# {args.cubes} uniform positions (seed {args.seed}), {base.views} views of {base.beam_width}, "
          f"{base.precision}, {args.threads} thread(s); {' | '.join(runs)}")  # fmt: skip
    totals, shorter = np.zeros((2, 3)), [0, 0]  # [first, second] x [moves, states, seconds]
    for i, cube in enumerate(p3.random_states(np.random.default_rng(args.seed), args.cubes)):
        pair = [
            solve_from_views(
                SOLVERS["beam"].run,
                cube[None],
                None,
                None,
                opts,
                p3,
                Solving(model, value_fn, policy_fn, "cpu", p3),
                stops_views=stops,
            )[0]  # fmt: skip
            for opts, stops in runs.values()
        ]
        lengths = [len(r.moves) if r.solved else np.inf for r in pair]
        if same_moves and pair[0].moves != pair[1].moves:
            raise SystemExit(f"cube {i}: the solutions differ ({lengths[0]} and {lengths[1]} moves)")
        shorter[0] += lengths[0] < lengths[1]
        shorter[1] += lengths[1] < lengths[0]
        totals += [[len(r.moves), r.nodes, r.seconds] for r in pair]
        cells = (
            f"{label}: {lengths[k]} moves, {pair[k].nodes:,} states {pair[k].seconds:.1f} s"
            for k, label in enumerate(runs)
        )
        print(f"cube {i}: " + " | ".join(cells), flush=True)
    (first, second), n = runs, args.cubes
    print(f"mean: {first} {totals[0, 0] / n:.2f} moves {totals[0, 2] / n:.1f} s | {second} {totals[1, 0] / n:.2f} "
          f"moves {totals[1, 2] / n:.1f} s; shorter: {first} on {shorter[0]}, {second} on {shorter[1]}")  # fmt: skip
    states, seconds = totals[1, 1:] / totals[0, 1:]
    print(f"{second} / {first}: {states:.2f}x the states, {seconds:.2f}x the seconds")
    return 0

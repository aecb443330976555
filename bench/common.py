"""Shared bits of the benchmarks: import paths, a seeded random-weight net, timing helpers."""

from __future__ import annotations

import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]

import numpy as np  # noqa: E402
import torch  # noqa: E402

import Cli  # noqa: E402, F401  (the scripts' flag types and run_script: ``from common import Cli``)
from Policy_Value_Net import CheckpointError, PolicyValueNet, load_model  # noqa: E402
from Rubik2x2Env import batch_onehot  # noqa: E402


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


def print_rates(rates: dict[str, list[float]], over: tuple[str, str] = ("bf16", "fp32")) -> None:
    """Each setting's states a second (median over rounds, and every round), then ``over[0]``'s over
    ``over[1]``'s: the median of the per-round ratios, so that load on the machine, which hits both alike,
    cancels."""
    for p, r in rates.items():
        print(f"{p:<10} {np.median(r):12,.0f} states/s   (rounds: {', '.join(f'{x:,.0f}' for x in r)})")
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

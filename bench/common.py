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

"""bfloat16 products (``Precision.py``, ``--precision``): what the network reads and how it trains stay
close to float32, float32 stays exactly the arithmetic it was, and a bad name is refused."""

import numpy as np
import pytest
import torch

from cube import Solver_Base as B
from cube.Puzzles import get_puzzle
from cube.Solvers import SolverOptions, add_solver_arguments, options_from_args, solve_cubes
from engine import Precision
from Policy_Value_Net import PolicyValueNet
from Train_Network import train_on_targets


def test_resolve_names_the_precision_and_refuses_others():
    assert Precision.resolve("fp32", "cpu") == "fp32"
    assert Precision.resolve("bf16", "cpu") == "bf16"
    assert Precision.resolve("auto", "cpu") == ("bf16" if Precision.bf16_native("cpu") else "fp32")
    assert Precision.resolve("auto", "meta") == "fp32"  # nothing native to a device without arithmetic
    with pytest.raises(ValueError, match="unknown precision 'fp16'"):
        Precision.resolve("fp16", "cpu")
    with pytest.raises(ValueError, match="precision"):
        B.network_fns(PolicyValueNet(), precision="half")


def test_bf16_reads_close_to_fp32_and_fp32_is_the_plain_network():
    """bf16 rounds the products only: values within a few hundredths of a move, logits close, the
    outputs float32; fp32 gives exactly what the network gave before the option existed."""
    puzzle = get_puzzle("3x3")
    torch.manual_seed(0)
    net = PolicyValueNet(obs_dim=puzzle.obs_dim, hidden_sizes=(256, 128))
    cubes, _ = puzzle.scramble(np.random.default_rng(0), 64, 20)
    plain_value, plain_policy = B.network_fns(net, puzzle=puzzle)
    fp32_value, _ = B.network_fns(net, puzzle=puzzle, precision="fp32")
    np.testing.assert_array_equal(fp32_value(cubes), plain_value(cubes))
    with torch.inference_mode():
        obs = torch.from_numpy(puzzle.encode(cubes))
        np.testing.assert_array_equal(plain_value(cubes), net(obs)[1].reshape(-1).numpy())
    bf_value, bf_policy = B.network_fns(net, puzzle=puzzle, precision="bf16")
    values, logits = bf_value(cubes), bf_policy(cubes)
    assert values.dtype == np.float32 and logits.dtype == np.float32
    assert not np.array_equal(values, plain_value(cubes))  # it did round
    np.testing.assert_allclose(values, plain_value(cubes), atol=0.03 * 0.5)
    np.testing.assert_allclose(logits, plain_policy(cubes), atol=0.1)


def test_bf16_beam_solves_and_the_flag_reaches_the_solver():
    """The beam with bf16 solves short scrambles, every solution replayed; ``--precision`` parses into
    the options (and a bad choice is argparse's exit status 2)."""
    import argparse

    puzzle = get_puzzle("3x3")
    cubes, _ = puzzle.scramble(np.random.default_rng(1), 4, 3)
    torch.manual_seed(0)
    net = PolicyValueNet(obs_dim=puzzle.obs_dim, hidden_sizes=(64,))
    results = solve_cubes(
        "beam", cubes, model=net, puzzle=puzzle, beam_width=400, beam_rank="mixed", max_nodes=200_000, precision="bf16"
    )
    assert all(r.solved for r in results)
    for cube, r in zip(cubes, results):
        assert puzzle.is_solved(puzzle.replay(cube, r.moves)[None]).all()
    parser = argparse.ArgumentParser()
    add_solver_arguments(parser)
    assert options_from_args(parser.parse_args(["--precision", "bf16"])).precision == "bf16"
    assert options_from_args(parser.parse_args([])).precision == SolverOptions().precision == "fp32"
    with pytest.raises(SystemExit) as exit_info:
        parser.parse_args(["--precision", "fp8"])
    assert exit_info.value.code == 2


@pytest.mark.slow
def test_bf16_training_learns_and_fp32_training_is_unchanged():
    """Training under bf16 autocast lowers the loss as fp32 does (float32 weights and losses); the fp32
    path (the default) runs every forward without autocast, as before the flag, and bf16 every one under it."""
    rng = np.random.default_rng(0)
    states = get_puzzle("2x2").encode(rng.integers(0, 6, (512, 24)).astype(np.int8))
    pis = np.eye(12, dtype=np.float32)[rng.integers(0, 12, 512)]
    zs = rng.uniform(-1, 1, 512).astype(np.float32)
    data = (states, pis, zs)
    runs, autocast = {}, {}
    for precision in ("fp32", "bf16", None):
        torch.manual_seed(0)
        net = PolicyValueNet()
        seen = autocast[precision] = []
        net.register_forward_hook(lambda *_: seen.append(torch.is_autocast_enabled("cpu")))
        kw = {} if precision is None else {"precision": precision}
        _, first, _, _ = train_on_targets(net, data, batch_size=64, epochs=1, lr=1e-3, seed=0, **kw)
        _, last, _, _ = train_on_targets(net, data, batch_size=64, epochs=6, lr=1e-3, seed=0, **kw)
        assert last < first
        assert all(p.dtype == torch.float32 for p in net.parameters())
        runs[precision] = [p.detach().clone() for p in net.parameters()]
    assert autocast[None] and not any(autocast[None]) and not any(autocast["fp32"]) and all(autocast["bf16"])
    assert any(not torch.equal(a, b) for a, b in zip(runs["fp32"], runs["bf16"]))

"""Pair_Input.CubiePairs (``main.py --input pairs``): the rows it reads against a plain loop, the cubies its
pairs name, bfloat16, checkpoints of both cubes, and a run that trains one."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from cube.Cube_Checkpoints import load_model, state_dims
from cube.Pair_Input import ROWS_PER_SLOT, CubiePairs, obs_dim_of_table, pair_slots, size_of_obs
from cube.Puzzles import get_puzzle
from cube.Solver_Base import network_fns
from engine import Precision
from Policy_Value_Net import PolicyValueNet
from run.Checkpoints import PAIR_KEY, save_checkpoint
from run.Run_IO import CheckpointError


def cubes_of(name: str, n: int, seed: int = 0) -> np.ndarray:
    """``n`` positions of the ``name`` cube: uniform (the 3x3) or random scrambles (the 2x2)."""
    puzzle, rng = get_puzzle(name), np.random.default_rng(seed)
    if puzzle.name == "3x3":
        return puzzle.random_states(rng, n)
    cubes = np.tile(puzzle.solved, (n, 1))
    for _ in range(30):
        cubes = puzzle.apply(cubes, rng.integers(0, 12, n))
    return cubes


def test_slots_are_the_corners_and_edges():
    assert pair_slots(3).shape == (20, 2) and pair_slots(2).shape == (8, 2)
    assert (size_of_obs(324), size_of_obs(144), size_of_obs(100)) == (3, 2, None)
    assert (obs_dim_of_table(20 * 36 + 1), obs_dim_of_table(8 * 36 + 1), obs_dim_of_table(20 * 36)) == (324, 144, None)


@pytest.mark.parametrize("name", ["2x2", "3x3"])
def test_each_slots_pair_names_one_of_24_cubie_placements(name):
    """A corner slot holds one of 8 corners turned 3 ways, an edge slot one of 12 edges flipped 2 ways: 24
    placements either way, and two stickers tell them all apart."""
    cubes = cubes_of(name, 3000)
    for first, second in pair_slots(get_puzzle(name).size):
        assert len(set(zip(cubes[:, first].tolist(), cubes[:, second].tolist()))) == 24


@pytest.mark.parametrize("name", ["2x2", "3x3"])
def test_the_layer_sums_the_rows_a_plain_loop_picks(name):
    puzzle = get_puzzle(name)
    torch.manual_seed(0)
    layer = CubiePairs(puzzle.obs_dim, 16)
    with torch.no_grad():
        layer.table.normal_()  # the bias row too
    cubes = cubes_of(name, 50, seed=1).astype(np.intp)
    got = layer(torch.as_tensor(puzzle.encode(cubes), dtype=torch.float32))
    table = layer.table.detach().numpy().astype(np.float64)
    slots = pair_slots(puzzle.size)
    rows = [[s * ROWS_PER_SLOT + 6 * cube[a] + cube[b] for s, (a, b) in enumerate(slots)] for cube in cubes]
    want = np.array([table[-1] + sum(table[r] for r in picked) for picked in rows])
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-5, atol=1e-5)
    # The colours themselves (what a search hands it) pick the same rows.
    assert torch.equal(layer(torch.from_numpy(cubes.astype(np.int8))), got)


@pytest.mark.parametrize("name", ["2x2", "3x3"])
def test_a_search_hands_a_pair_network_colours_and_reads_the_one_hots_numbers(name, monkeypatch):
    puzzle = get_puzzle(name)
    torch.manual_seed(0)
    model = PolicyValueNet(puzzle.obs_dim, puzzle.num_actions, hidden_sizes=(32, 16), pair_input=True).eval()
    assert model.reads_colours and not PolicyValueNet(puzzle.obs_dim, hidden_sizes=(8,)).reads_colours
    cubes = cubes_of(name, 40, seed=2)
    with torch.no_grad():
        logits, value = model(torch.from_numpy(puzzle.encode(cubes)))
    seen = []
    monkeypatch.setattr(model, "forward", lambda x: seen.append(x.dtype) or PolicyValueNet.forward(model, x))
    read = network_fns(model, "cpu", puzzle=puzzle)[1].with_value(cubes)
    assert seen == [torch.int8]
    np.testing.assert_array_equal(read, torch.cat([value, logits], 1).numpy())


def test_under_bfloat16_it_sums_in_float32_and_hands_on_bfloat16():
    puzzle = get_puzzle("3x3")
    layer = CubiePairs(puzzle.obs_dim, 32)
    x = torch.as_tensor(puzzle.encode(cubes_of("3x3", 20)), dtype=torch.float32)
    exact = layer(x)
    with Precision.autocast("bf16", "cpu"):
        rounded = layer(x)
    assert exact.dtype == torch.float32 and rounded.dtype == torch.bfloat16
    assert torch.equal(rounded, exact.to(torch.bfloat16))


def test_only_a_cubes_stickers_have_pairs():
    with pytest.raises(ValueError, match="cubie pairs read a 2x2's or a 3x3's one-hot stickers, not 9 inputs"):
        PolicyValueNet(9, 9, pair_input=True)


@pytest.mark.parametrize("name", ["2x2", "3x3"])
def test_a_pair_network_is_saved_and_loaded_as_it_is(tmp_path, name):
    puzzle = get_puzzle(name)
    torch.manual_seed(0)
    net = PolicyValueNet(puzzle.obs_dim, distance_classes=27, hidden_sizes=(48, 16), pair_input=True).eval()
    save_checkpoint(net, str(tmp_path / "net.pt"))
    state = torch.load(tmp_path / "net.pt", weights_only=True)
    assert PAIR_KEY in state and "body.0.weight" not in state and state_dims(state) == (puzzle.obs_dim, 12)
    back = load_model(str(tmp_path / "net.pt"), puzzle=name)
    assert (back.hidden_sizes, back.distance_classes, isinstance(back.body[0], CubiePairs)) == ((48, 16), 27, True)
    x = torch.as_tensor(puzzle.encode(cubes_of(name, 10)), dtype=torch.float32)
    assert torch.equal(net(x)[0], back(x)[0]) and torch.equal(net(x)[1], back(x)[1])
    other = "2x2" if name == "3x3" else "3x3"
    with pytest.raises(CheckpointError, match=f"is a network for the {name}, not the {other}"):
        load_model(str(tmp_path / "net.pt"), puzzle=other)


@pytest.mark.slow
def test_the_3x3_recipe_trains_a_pair_network_and_a_run_keeps_its_own(tmp_path):
    from test_main_3x3 import TINY_3X3, run_main

    out = run_main(tmp_path, *TINY_3X3, "--num-iters", "1", "--skip-eval")
    assert out.returncode == 0, out.stderr
    assert isinstance(load_model(str(tmp_path / "m.pt"), puzzle="3x3").body[0], CubiePairs)
    (tmp_path / "m.train_state.pt").unlink()  # continued from the weights alone, asked for stickers
    again = run_main(tmp_path, *TINY_3X3, "--input", "stickers", "--num-iters", "1", "--skip-eval")
    assert again.returncode == 0, again.stderr
    assert isinstance(load_model(str(tmp_path / "m.pt"), puzzle="3x3").body[0], CubiePairs)

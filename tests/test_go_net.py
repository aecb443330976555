"""Go_Net: the seed's network shapes, checkpoints that load back bit for bit, and a Go checkpoint and a
cube checkpoint each refused by the other's loader with one sentence."""

from __future__ import annotations

import pytest
import torch

from conftest import make_checkpoint
from cube.Cube_Checkpoints import load_model
from go.Go_Game import go_game
from go.Go_Net import GoNet, load_go_model
from run.Checkpoints import save_checkpoint
from run.Run_IO import CheckpointError

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def test_shapes_follow_the_board_and_the_game_planes():
    game = go_game(7, history=2)
    net = GoNet(7, in_planes=game.obs_shape[0], filters=16, blocks=2).eval()
    obs = torch.from_numpy(game.encode(game.eval_input(game.initial_state(3))))
    logits, value = net(obs)
    assert logits.shape == (3, 50) and value.shape == (3, 1) and bool((value.abs() <= 1).all())
    assert net.history == 2 and sum(isinstance(m, torch.nn.GroupNorm) for m in net.modules()) == 2 * 2 + 3


def test_checkpoint_round_trip_keeps_size_shape_and_outputs(tmp_path):
    torch.manual_seed(0)
    net = GoNet(5, in_planes=5, filters=8, blocks=3).eval()
    path = str(tmp_path / "go5.pt")
    save_checkpoint(net, path)
    loaded = load_go_model(path, size=5)
    assert (loaded.size, loaded.in_planes, loaded.filters, loaded.num_blocks) == (5, 5, 8, 3)
    x = torch.randn(4, 5, 5, 5)
    for a, b in zip(net(x), loaded(x)):
        assert torch.equal(a, b)


def test_go_and_cube_checkpoints_are_refused_by_each_other(tmp_path):
    go_path = str(tmp_path / "go7.pt")
    save_checkpoint(GoNet(7, filters=8, blocks=1), go_path)
    with pytest.raises(CheckpointError, match=r"is a Go network for 7x7, not 5x5\.$"):
        load_go_model(go_path, size=5)
    for puzzle in (None, "2x2", "3x3"):
        with pytest.raises(CheckpointError, match=r"is a Go network for 7x7, not a cube's\.$"):
            load_model(go_path, puzzle=puzzle)
    cube_path = str(make_checkpoint(tmp_path / "cube.pt"))
    with pytest.raises(CheckpointError, match=r"is a cube network, not a Go one\.$"):
        load_go_model(cube_path, size=5)


def test_a_checkpoint_whose_finite_weights_give_nan_is_refused_at_load(tmp_path):
    torch.manual_seed(0)
    net = GoNet(5)  # the shipped size: its 64 filters overflow float32 where a tiny net stays finite
    with torch.no_grad():
        net.stem[0].weight.mul_(1e30)  # finite weights, every output NaN
    assert all(bool(torch.isfinite(t).all()) for t in net.state_dict().values())
    save_checkpoint(net, str(tmp_path / "nan.pt"))
    with pytest.raises(CheckpointError, match=r"is damaged: its network gives NaN or infinite outputs\.$"):
        load_go_model(str(tmp_path / "nan.pt"), 5)

"""Seed_System_Targets (ADI, scramble) and the per-sample loss weights of Train_Network."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from cube.Lookahead_Targets import scramble_path_states
from cube.Puzzles import VALUE_PER_MOVE
from cube.Seed_System_Targets import adi_targets, adi_to_net, net_to_adi, scramble_targets, seed_training_sample
from Policy_Value_Net import PolicyValueNet
from Rubik2x2Env import (
    NUM_ACTIONS,
    SOLVED_STICKERS,
    batch_apply_moves,
    batch_is_solved,
    batch_state_keys,
    parse_moves,
)
from Train_Network import POLICY_WEIGHT, alphazero_loss, train_on_targets

pytestmark = pytest.mark.usefixtures("isolated_solver_cache", "torch_one_thread")


def cubes_of(x: torch.Tensor) -> np.ndarray:
    return x.reshape(len(x), 24, 6).argmax(-1).numpy().astype(np.int8)


class TableNet(torch.nn.Module):
    """Value ``table[state key]`` for the cubes in ``table``, ``default`` for all others."""

    def __init__(self, table: dict[int, float], default: float):
        super().__init__()
        self.table, self.default = table, default
        self.dummy = torch.nn.Parameter(torch.zeros(1))

    def forward(self, x):
        keys = batch_state_keys(cubes_of(x)).tolist()
        v = torch.tensor([self.table.get(k, self.default) for k in keys], dtype=torch.float32)
        return torch.zeros(len(x), NUM_ACTIONS), v[:, None]


class ExactNet(torch.nn.Module):
    """The exact value ``1 - 0.03 d`` from the optimal solver's table."""

    def __init__(self):
        super().__init__()
        from Optimal_Solver import get_solver

        self.solver = get_solver()
        self.dummy = torch.nn.Parameter(torch.zeros(1))

    def forward(self, x):
        d = self.solver.batch_distance(cubes_of(x)).astype(np.float32)
        return torch.zeros(len(x), NUM_ACTIONS), torch.from_numpy(1.0 - VALUE_PER_MOVE * d)[:, None]


def cube(moves: str) -> np.ndarray:
    out = SOLVED_STICKERS.copy()[None]
    for a in parse_moves(moves):
        out = batch_apply_moves(out, np.array([a]))
    return out


# ---------------------------------------------------------------- ADI
def test_scale_map_sends_adi_2_minus_d_to_1_minus_003_d():
    d = np.arange(0, 15)
    assert adi_to_net(2 - d) == pytest.approx(1 - 0.03 * d)
    assert net_to_adi(1 - 0.03 * d) == pytest.approx(2 - d)


def test_adi_targets_by_hand():
    one, two = cube("R"), cube("R U")
    # Every cube is worth 0.5 (ADI units: 2 - 0.5/0.03 = -14.667) except one child of ``two``.
    child = batch_apply_moves(two, np.array([parse_moves("U'")[0]]))  # = one
    special = batch_apply_moves(two, np.array([parse_moves("F")[0]]))
    net = TableNet({int(batch_state_keys(special)[0]): 0.97}, 0.5)  # 0.97 is ADI's 1
    z, pi, w = adi_targets(net, np.concatenate([one, two, SOLVED_STICKERS[None]]), np.array([1, 2, 3]))
    # ``one``: R' solves it, R(solved) + 0 = 1 beats -1 + (-14.667); ADI's 1 is 1 - 0.03.
    assert z[0] == pytest.approx(0.97) and pi[0].argmax() == parse_moves("R'")[0] and pi[0].sum() == 1
    # ``two``: U' reaches ``one`` (worth 0.5 to this net, -15.667), F reaches the 0.97 child: -1 + 1 = 0.
    assert net_to_adi(0.5) == pytest.approx(2 - 0.5 / 0.03)
    assert z[1] == pytest.approx(adi_to_net(0.0)) and z[1] == pytest.approx(0.94)
    assert pi[1].argmax() == parse_moves("F")[0]
    assert np.array_equal(batch_state_keys(child), batch_state_keys(one))
    # The solved cube: target 1, no policy loss; weights 1/D.
    assert z[2] == 1.0
    assert w == pytest.approx(np.array([[1.0, 1.0], [0.5, 0.5], [0.0, 1 / 3]]))


def test_adi_targets_with_a_constant_net_back_up_one_step():
    cubes, depth, _ = scramble_path_states(np.random.default_rng(0), 40, 4)
    z, pi, w = adi_targets(TableNet({}, 0.2), cubes, depth)
    near = np.array([batch_is_solved(batch_apply_moves(cubes, np.full(len(cubes), a))) for a in range(12)]).any(0)
    solved = batch_is_solved(cubes)  # a path can come back (R R R R): target 1
    assert z[near] == pytest.approx(0.97) and (z[solved] == 1).all()
    assert z[~near & ~solved] == pytest.approx(0.2 - VALUE_PER_MOVE, abs=1e-6)  # -1 + v in ADI units = v - 0.03 here
    assert w[:, 1] == pytest.approx(1.0 / depth)


def test_adi_targets_with_an_exact_evaluator_are_exact_and_reduce_the_distance():
    from Optimal_Solver import get_solver

    solver = get_solver()
    rng = np.random.default_rng(1)
    cubes = np.concatenate([solver.random_cubes_at_distance(rng, d, 4, replace=True) for d in range(1, 15)])
    dist = solver.batch_distance(cubes)
    z, pi, w = adi_targets(ExactNet(), cubes, np.maximum(dist, 1))
    assert z == pytest.approx(1.0 - VALUE_PER_MOVE * dist, abs=1e-5)
    moved = batch_apply_moves(cubes, pi.argmax(axis=1))
    assert np.array_equal(solver.batch_distance(moved), dist - 1)


# ---------------------------------------------------------------- scramble
def test_scramble_targets_undo_the_last_move():
    cubes, pi, z, w = scramble_targets(np.random.default_rng(3), 100, 6)
    paths = 17  # ceil(100 / 6)
    assert cubes.shape == (paths * 6, 24) and (pi.sum(axis=1) == 1).all() and (z == 0).all()
    back = batch_apply_moves(cubes, pi.argmax(axis=1))  # the target move steps back along the path
    assert np.array_equal(back[paths:], cubes[:-paths]) and batch_is_solved(back[:paths]).all()
    _, _, last = scramble_path_states(np.random.default_rng(3), 100, 6)
    assert np.array_equal(pi.argmax(axis=1), last ^ 1)
    assert (w[:, 1] == 0).all() and (w[:, 0] == ~batch_is_solved(cubes)).all()


def test_scramble_training_never_moves_the_value_head():
    torch.manual_seed(0)
    net = PolicyValueNet()
    before = [p.detach().clone() for p in net.value_head.parameters()]
    body = net.body[0].weight.detach().clone()
    sample = seed_training_sample("scramble", net, np.random.default_rng(0), 64, 3)
    _, loss, ploss, vloss = train_on_targets(net, sample, batch_size=16, epochs=2, seed=0)
    assert vloss == 0.0 and loss == pytest.approx(POLICY_WEIGHT * ploss)
    assert all(torch.equal(a, b) for a, b in zip(before, net.value_head.parameters()))
    assert not torch.equal(body, net.body[0].weight)


def test_seed_training_sample_shapes_and_unknown_kind():
    net = PolicyValueNet()
    states, pis, zs, w = seed_training_sample("adi", net, np.random.default_rng(0), 30, 3)
    assert states.shape == (30, 144) and pis.shape == (30, 12) and zs.shape == (30,) and w.shape == (30, 2)
    with pytest.raises(ValueError, match="unknown"):
        seed_training_sample("nope", net, np.random.default_rng(0), 30, 3)


# ---------------------------------------------------------------- sample weights
def batch(n=32, seed=0):
    g = torch.Generator().manual_seed(seed)
    logits, value = torch.randn(n, 12, generator=g), torch.tanh(torch.randn(n, 1, generator=g))
    pi = torch.softmax(torch.randn(n, 12, generator=g), -1)
    z = torch.rand(n, generator=g) * 2 - 1
    return logits, value, pi, z


def test_default_loss_is_bit_identical_to_the_original_formula():
    logits, value, pi, z = batch()
    loss, ploss, vloss = alphazero_loss(logits, value, pi, z, 3.0)
    v_orig = F.mse_loss(value.squeeze(-1), z)
    p_orig = -(pi * F.log_softmax(logits, dim=-1)).sum(dim=-1).mean()
    assert torch.equal(vloss, v_orig) and torch.equal(ploss, p_orig)
    assert torch.equal(loss, 3.0 * v_orig + POLICY_WEIGHT * p_orig)


def test_weighted_loss_by_hand():
    logits, value, pi, z = batch(8)
    w = torch.arange(1, 9, dtype=torch.float32)
    _, ploss, vloss = alphazero_loss(logits, value, pi, z, sample_weights=w)
    ce = -(pi * F.log_softmax(logits, dim=-1)).sum(dim=-1)
    assert ploss.item() == pytest.approx((w * ce).sum().item() / 8, rel=1e-6)
    assert vloss.item() == pytest.approx((w * (value.squeeze(-1) - z) ** 2).sum().item() / 8, rel=1e-6)
    both = alphazero_loss(logits, value, pi, z, sample_weights=torch.stack([w, w], 1))
    assert torch.allclose(torch.stack(both), torch.stack(alphazero_loss(logits, value, pi, z, sample_weights=w)))
    ones = alphazero_loss(logits, value, pi, z, sample_weights=torch.ones(8))
    assert torch.allclose(torch.stack(ones), torch.stack(alphazero_loss(logits, value, pi, z)))
    _, _, v0 = alphazero_loss(logits, value, pi, z, sample_weights=torch.stack([w, torch.zeros(8)], 1))
    assert v0.item() == 0.0


def trained(dataset, **kw):
    torch.manual_seed(0)
    net = PolicyValueNet()
    _, *losses = train_on_targets(net, dataset, batch_size=16, epochs=2, seed=1, **kw)
    return net, losses


def test_weights_of_one_train_as_no_weights_and_a_fourth_array_equals_the_keyword():
    rng = np.random.default_rng(0)
    states = np.eye(6, dtype=np.float32)[rng.integers(0, 6, (40, 24))].reshape(40, 144)
    pis = np.eye(12, dtype=np.float32)[rng.integers(0, 12, 40)]
    zs = rng.uniform(-1, 1, 40).astype(np.float32)
    w = rng.uniform(0, 1, (40, 2)).astype(np.float32)
    a, la = trained((states, pis, zs))
    b, lb = trained((states, pis, zs), sample_weights=np.ones((40, 2), np.float32))  # the weighted loss's path
    np.testing.assert_allclose(la, lb, rtol=1e-5)
    assert all(torch.allclose(x, y, atol=1e-5) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    c, lc = trained((states, pis, zs, w))
    d, ld = trained((states, pis, zs), sample_weights=w)
    assert lc == ld and all(torch.equal(x, y) for x, y in zip(c.state_dict().values(), d.state_dict().values()))
    assert lc != la

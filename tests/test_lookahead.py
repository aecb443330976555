"""Lookahead_Targets: scramble-path states, one-ply targets against an exact oracle, the
two solver-free bounds, and the greedy solve rate."""

import numpy as np
import pytest
import torch

from cube.Lookahead_Targets import greedy_policy_solve_rate, lookahead_targets, scramble_path_states
from cube.Puzzles import VALUE_PER_MOVE
from Rubik2x2Env import NUM_ACTIONS, SOLVED_STICKERS, batch_apply_moves, batch_is_solved

pytestmark = pytest.mark.usefixtures("isolated_solver_cache", "torch_one_thread")


class OracleNet(torch.nn.Module):
    """Reads the cube back from the one-hot input and answers from the exact solver: value
    ``1 - 0.03 d`` and logits that put all mass on one distance-reducing move."""

    def __init__(self):
        super().__init__()
        from Optimal_Solver import get_solver

        self.solver = get_solver()
        self.dummy = torch.nn.Parameter(torch.zeros(1))  # gives the module a device

    def forward(self, x):
        cubes = x.reshape(len(x), 24, 6).argmax(-1).numpy().astype(np.int8)
        dist = self.solver.batch_distance(cubes)
        kid_dist = np.stack(
            [self.solver.batch_distance(batch_apply_moves(cubes, np.full(len(cubes), a))) for a in range(NUM_ACTIONS)],
            axis=1,
        )
        logits = np.full((len(x), NUM_ACTIONS), -20.0, dtype=np.float32)
        logits[np.arange(len(x)), (kid_dist < dist[:, None]).argmax(axis=1)] = 20.0
        return torch.from_numpy(logits), torch.from_numpy(1.0 - VALUE_PER_MOVE * dist.astype(np.float32))[:, None]


class ConstantNet(torch.nn.Module):
    def __init__(self, value: float):
        super().__init__()
        self.value = torch.nn.Parameter(torch.tensor(value))

    def forward(self, x):
        return torch.zeros(len(x), NUM_ACTIONS), self.value.expand(len(x), 1)


def test_scramble_paths_cover_every_depth_and_undo_steps_back():
    cubes, depth, last = scramble_path_states(np.random.default_rng(0), 100, 7)
    paths = 15  # ceil(100 / 7)
    assert cubes.shape == (paths * 7, 24) and cubes.dtype == np.int8
    assert np.bincount(depth).tolist() == [0] + [paths] * 7
    # Undoing the last scramble move of a depth-k state gives the same path's depth-(k-1) state.
    back = batch_apply_moves(cubes, last ^ 1)
    assert np.array_equal(back[paths:], cubes[:-paths])
    assert batch_is_solved(back[:paths]).all()


def test_scramble_paths_are_reproducible():
    a = scramble_path_states(np.random.default_rng(3), 50, 5)
    b = scramble_path_states(np.random.default_rng(3), 50, 5)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_targets_with_an_exact_value_network_are_exact():
    from Optimal_Solver import get_solver

    solver = get_solver()
    rng = np.random.default_rng(1)
    cubes = np.concatenate([solver.random_cubes_at_distance(rng, d, 5, replace=True) for d in range(1, 15)])
    cubes = np.concatenate([cubes, SOLVED_STICKERS[None]])
    z, pi = lookahead_targets(OracleNet(), cubes)
    dist = solver.batch_distance(cubes)
    assert z == pytest.approx(1.0 - VALUE_PER_MOVE * dist, abs=1e-6)
    assert (pi.sum(axis=1) == 1).all()
    moved = batch_apply_moves(cubes[:-1], pi[:-1].argmax(axis=1))
    assert np.array_equal(solver.batch_distance(moved), dist[:-1] - 1)  # every best move gets one closer


def test_pessimistic_network_is_lifted_by_the_scramble_bound():
    cubes, depth, last = scramble_path_states(np.random.default_rng(2), 60, 6)
    z, pi = lookahead_targets(ConstantNet(-1.0), cubes, depth, last)
    assert (z >= 1.0 - VALUE_PER_MOVE * depth - 1e-6).all()
    # The policy target undoes the last scramble move, or plays one that solves at once.
    from Optimal_Solver import get_solver

    assert (get_solver().batch_distance(batch_apply_moves(cubes, pi.argmax(axis=1))) <= depth - 1).all()
    # Without the bound, a state with no solved child only gets the network's -1 back.
    z_free, _ = lookahead_targets(ConstantNet(-1.0), cubes[depth == 6])
    assert (z_free < 0).all()


def test_optimistic_network_is_capped_below_solved():
    cubes, depth, _ = scramble_path_states(np.random.default_rng(4), 40, 4)
    z, _ = lookahead_targets(ConstantNet(1.0), cubes)
    one_move = depth == 1  # a child of these is solved
    assert z[one_move] == pytest.approx(1.0 - VALUE_PER_MOVE)
    far = ~one_move & ~batch_is_solved(cubes)
    from Optimal_Solver import get_solver

    far &= get_solver().batch_distance(cubes) > 1
    assert z[far] == pytest.approx(1.0 - 2 * VALUE_PER_MOVE)


def test_targets_of_3x3_cubes_read_the_3x3s_moves():
    """``puzzle="3x3"``: the children are the 3x3's, so a cube one move out has exactly one solved child (its
    value 1, every other capped at 1 - 0.03): the target is one move from solved and undoes the scramble; with
    a pessimistic network the depth bound lifts every state, as on the 2x2."""
    from cube.Puzzles import get_puzzle

    P3 = get_puzzle("3x3")
    cubes, depth, last = scramble_path_states(np.random.default_rng(6), 60, 3, P3)
    assert cubes.shape == (60, 54)
    z, pi = lookahead_targets(ConstantNet(1.0), cubes, puzzle="3x3")
    one_move = depth == 1
    assert z[one_move] == pytest.approx(1.0 - VALUE_PER_MOVE)
    assert np.array_equal(pi[one_move].argmax(axis=1), last[one_move] ^ 1)
    assert P3.is_solved(P3.apply(cubes[one_move], pi[one_move].argmax(axis=1))).all()
    z_low, _ = lookahead_targets(ConstantNet(-1.0), cubes, depth, last, puzzle=P3)
    assert (z_low >= 1.0 - VALUE_PER_MOVE * depth - 1e-6).all()
    assert z_low[one_move] == pytest.approx(1.0 - VALUE_PER_MOVE)


def test_greedy_solve_rate_follows_the_policy():
    from Optimal_Solver import get_solver

    cubes = get_solver().random_cubes_at_distance(np.random.default_rng(5), 5, 20, replace=True)
    oracle = OracleNet()
    assert greedy_policy_solve_rate(oracle, cubes, 5) == 1.0
    assert greedy_policy_solve_rate(oracle, cubes, 4) == 0.0
    assert greedy_policy_solve_rate(oracle, np.tile(SOLVED_STICKERS, (3, 1)), 1) == 1.0


class NoisyOracleNet(OracleNet):
    """The exact value plus an error of about one move that depends on the exact sticker
    array, so each orientation of a position gets its own error, as a trained net's."""

    def forward(self, x):
        logits, value = super().forward(x)
        cubes = x.reshape(len(x), 24, 6).argmax(-1).numpy().astype(np.int8)
        from Rubik2x2Env import batch_state_keys

        noise = np.array([np.random.default_rng(int(k) % (2**32)).standard_normal() for k in batch_state_keys(cubes)])
        return logits, value + torch.from_numpy(VALUE_PER_MOVE * noise.astype(np.float32))[:, None]


def test_double_estimate_removes_the_upward_bias_of_the_max():
    from Optimal_Solver import get_solver

    solver = get_solver()
    cubes = solver.random_cubes_at_distance(np.random.default_rng(7), 8, 300, replace=True)
    z_max, pi = lookahead_targets(NoisyOracleNet(), cubes)
    z_double, pi_double = lookahead_targets(NoisyOracleNet(), cubes, rng=np.random.default_rng(0))
    assert np.array_equal(pi, pi_double)  # the same move is chosen; only its value is read again
    assert (z_max - (1.0 - VALUE_PER_MOVE * 8)).mean() > 0.5 * VALUE_PER_MOVE  # the max picks overrated children
    # The second reading is an unbiased value of the chosen child (one move closer, or one
    # further when the noise chose badly): no optimism is left, errors average out.
    chosen = solver.batch_distance(batch_apply_moves(cubes, pi.argmax(axis=1)))
    error = z_double - (1.0 - VALUE_PER_MOVE * (chosen + 1))
    assert abs(error.mean()) < 3 * VALUE_PER_MOVE / np.sqrt(len(cubes))


class CanonicalNoisyOracleNet(OracleNet):
    """As NoisyOracleNet, but every orientation of a position shares one error, as in a
    network with ``canonical_orientation``: only the mirror image is read afresh."""

    canonical = True

    def forward(self, x):
        from Rubik2x2Env import batch_rotate, batch_state_keys, canonical_rotation

        logits, value = super().forward(x)
        cubes = x.reshape(len(x), 24, 6).argmax(-1).numpy().astype(np.int8)
        keys = batch_state_keys(batch_rotate(cubes, canonical_rotation(cubes)))
        noise = np.array([np.random.default_rng(int(k) % (2**32)).standard_normal() for k in keys])
        return logits, value + torch.from_numpy(VALUE_PER_MOVE * noise.astype(np.float32))[:, None]


def test_double_estimate_of_a_canonical_network_reads_the_mirror_image():
    from Optimal_Solver import get_solver

    solver = get_solver()
    cubes = solver.random_cubes_at_distance(np.random.default_rng(8), 8, 300, replace=True)
    net = CanonicalNoisyOracleNet()
    z_double, pi = lookahead_targets(net, cubes, rng=np.random.default_rng(0))
    target = 1.0 - VALUE_PER_MOVE * (solver.batch_distance(batch_apply_moves(cubes, pi.argmax(axis=1))) + 1)
    assert abs((z_double - target).mean()) < 3 * VALUE_PER_MOVE / np.sqrt(len(cubes))
    net.canonical = False  # a turned copy is no new reading for this net: the bias stays
    z_turned, _ = lookahead_targets(net, cubes, rng=np.random.default_rng(0))
    assert (z_turned - target).mean() > 0.5 * VALUE_PER_MOVE


def test_soft_policy_targets_share_the_mass_between_equally_good_moves():
    from Optimal_Solver import get_solver

    solver = get_solver()
    cubes = solver.random_cubes_at_distance(np.random.default_rng(9), 6, 40, replace=True)
    z_hard, pi_hard = lookahead_targets(OracleNet(), cubes)
    z_soft, pi_soft = lookahead_targets(OracleNet(), cubes, policy_temperature=0.5)
    assert np.array_equal(z_hard, z_soft) and pi_soft.sum(axis=1) == pytest.approx(1.0)
    kids = np.stack(
        [solver.batch_distance(batch_apply_moves(cubes, np.full(len(cubes), a))) for a in range(NUM_ACTIONS)], axis=1
    )
    closer = kids < 6
    # Every move one closer gets the same share; each of the others e^-4 as much (2 moves worse, T = 0.5).
    share = pi_soft[closer].reshape(-1)
    rows = np.arange(len(cubes))
    good = pi_soft[rows, pi_hard.argmax(axis=1)]
    assert np.allclose(pi_soft * closer, good[:, None] * closer, rtol=1e-5)
    assert np.allclose(pi_soft * ~closer, good[:, None] * np.exp(-4.0) * ~closer, rtol=1e-4)
    assert share.min() > 0.1 and (pi_hard[closer].sum() == len(cubes))

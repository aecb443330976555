"""--targets diffusion (Seed_System_Targets.py): CayleyPy's random-walk lengths as value targets, the walk
that never takes an obvious way back, and the no-search trainers on the 3x3."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import Rubik2x2Env as E2
from cube import Rubik3x3Env as E3
from cube.Cube_Model import MOVE_NAMES
from cube.Lookahead_Targets import scramble_path_states
from cube.Puzzles import PUZZLES
from cube.Seed_System_Targets import (
    COMMUTING_ORDER_MASK,
    SEED_TARGETS,
    VALUE_SCALES,
    diffusion_targets,
    diffusion_walks,
    seed_training_sample,
)
from Policy_Value_Net import PolicyValueNet

P3 = PUZZLES["3x3"]
OPPOSITE_PAIRS = {(0, 5), (1, 3), (2, 4)}  # action pairs U R F L B D: U-D, R-L, F-B


def test_commuting_order_mask_by_hand():
    """After L, L', B, B', D or D' the opposite face (R, F, U) is not turned: of two opposite
    faces in a row only the order U..D, R..L, F..B is walked. Nothing else is masked."""
    banned = {MOVE_NAMES[last]: [MOVE_NAMES[a] for a in range(12) if not COMMUTING_ORDER_MASK[last + 1, a]]
              for last in range(12)}  # fmt: skip
    assert banned == {
        "U": [], "U'": [], "R": [], "R'": [], "F": [], "F'": [],
        "L": ["R", "R'"], "L'": ["R", "R'"], "B": ["F", "F'"], "B'": ["F", "F'"], "D": ["U", "U'"], "D'": ["U", "U'"],
    }  # fmt: skip
    assert COMMUTING_ORDER_MASK[0].all()  # before the first move: any


def test_walks_never_undo_themselves_and_use_every_allowed_move():
    moves = diffusion_walks(np.random.default_rng(1), 4000, 12)
    assert moves.shape == (4000, 12) and moves.min() >= 0 and moves.max() < 12
    a, b, c = moves[:, :-2], moves[:, 1:-1], moves[:, 2:]
    assert not (moves[:, 1:] == moves[:, :-1] ^ 1).any()  # never the inverse of the last move
    assert not ((a == b) & (b == c)).any()  # never a third turn of one face (the inverse is out already)
    pairs = {(int(x), int(y)) for x, y in zip(moves[:, :-1].ravel() // 2, moves[:, 1:].ravel() // 2)}
    assert not {(hi, lo) for lo, hi in OPPOSITE_PAIRS} & pairs  # opposite faces in one order only
    assert {(lo, hi) for lo, hi in OPPOSITE_PAIRS} <= pairs
    first = np.bincount(moves[:, 0], minlength=12)
    assert first.min() > 4000 / 12 * 0.8  # the first move: uniform over all 12


def test_diffusion_targets_by_hand():
    """Every prefix of each walk, ordered depth by depth; value 1 - 0.03 k; policy: undo the last move."""
    walks = diffusion_walks(np.random.default_rng(7), 2, 3)
    cubes, pi, z, weights = diffusion_targets(np.random.default_rng(7), 6, 3, "3x3")
    assert cubes.shape == (6, 54) and pi.shape == (6, 12) and weights.shape == (6, 2)
    for k in range(3):
        for p in range(2):
            row = 2 * k + p
            assert np.array_equal(cubes[row], E3.apply_moves(E3.SOLVED_STICKERS, walks[p, : k + 1]))
            assert pi[row].tolist() == [float(a == walks[p, k] ^ 1) for a in range(12)]
    assert z.dtype == np.float32 and z.tolist() == pytest.approx([0.97, 0.97, 0.94, 0.94, 0.91, 0.91])
    assert (weights == 1).all()


def _bfs_distances(depth: int) -> dict[bytes, int]:
    """Exact distances of every 3x3 position within ``depth`` quarter turns (breadth-first)."""
    seen = {E3.SOLVED_STICKERS.tobytes(): 0}
    frontier = [E3.SOLVED_STICKERS]
    for d in range(1, depth + 1):
        children = np.stack(frontier)[:, E3.MOVE_PERMS].reshape(-1, 54)
        frontier = []
        for child in children:
            if child.tobytes() not in seen:
                seen[child.tobytes()] = d
                frontier.append(child)
    return seen


def test_short_walks_reach_exactly_their_length_where_scrambles_fall_short():
    """What the walk rules buy: within 4 moves a walk's length is the position's distance (its
    value target exact); a scramble (no move followed by its inverse, the seed rule) can turn
    one face three times, U U U = U', and so ends nearer than its length."""
    dist = _bfs_distances(4)
    assert np.bincount(list(dist.values())).tolist() == [1, 12, 114, 1068, 10011]
    rng = np.random.default_rng(3)
    cubes, _, z, _ = diffusion_targets(rng, 8000, 4, "3x3")
    walk_length = np.rint((1 - z) / P3.value_per_move)
    assert (np.array([dist[c.tobytes()] for c in cubes]) == walk_length).all()
    cubes, depth, _ = scramble_path_states(rng, 8000, 4, P3)
    assert (np.array([dist[c.tobytes()] for c in cubes]) < depth).any()


def test_a_walk_back_at_solved_is_worth_1_with_no_policy_loss():
    """On the 2x2, U then D' turns the whole cube: solved again after two moves."""
    cubes, _, z, weights = diffusion_targets(np.random.default_rng(0), 20000, 2)
    back = E2.batch_is_solved(cubes)
    assert back.any() and (z[back] == 1.0).all() and (weights[back, 0] == 0).all() and (weights[back, 1] == 1).all()
    assert (weights[~back] == 1).all() and np.allclose(sorted(set(z[~back].tolist())), [0.94, 0.97])


@pytest.mark.parametrize("kind", SEED_TARGETS)
def test_every_no_search_trainer_makes_3x3_samples(kind):
    torch.manual_seed(0)
    net = PolicyValueNet(P3.obs_dim, hidden_sizes=(32, 16))
    x, pi, z, weights = seed_training_sample(kind, net, np.random.default_rng(0), 40, 5, "cpu", P3)
    assert x.shape == (40, 324) and pi.shape == (40, 12) and z.shape == (40,) and weights.shape == (40, 2)
    assert x.dtype == np.float32 and (x.reshape(40, 54, 6).sum(axis=2) == 1).all()
    assert np.allclose(pi.sum(axis=1), 1.0) and kind in VALUE_SCALES


def test_the_2x2_samples_are_the_same_with_or_without_the_puzzle():
    for kind in ("scramble", "diffusion"):
        a = seed_training_sample(kind, None, np.random.default_rng(4), 30, 3)
        b = seed_training_sample(kind, None, np.random.default_rng(4), 30, 3, puzzle="2x2")
        assert all(np.array_equal(u, v) for u, v in zip(a, b)) and a[0].shape == (30, 144)

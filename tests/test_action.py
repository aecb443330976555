"""Choosing a move from visit counts: greedy, sampling with temperature, the batched form."""

from __future__ import annotations

import numpy as np
import pytest

from Action_MCTS import pick_action_from_mcts, pick_actions_batch, visit_probabilities

COUNTS = np.array([10, 0, 5, 30, 1, 0, 0, 20, 2, 0, 7, 25], dtype=np.float32)
DRAWS = 20_000


def expected_probs(counts, temperature):
    p = np.asarray(counts, np.float64) ** (1.0 / temperature)
    return p / p.sum()


def frequencies(actions, n=12):
    return np.bincount(np.asarray(actions), minlength=n) / len(actions)


# --------------------------------------------------------------------------- greedy
def test_greedy_is_argmax():
    assert pick_action_from_mcts(COUNTS, mode="greedy") == 3
    assert pick_action_from_mcts(COUNTS) == 3  # greedy is the default
    assert pick_action_from_mcts(COUNTS.tolist(), "greedy", temperature=0.1) == 3
    for a in range(12):
        counts = np.zeros(12)
        counts[a] = 1
        assert pick_action_from_mcts(counts, "greedy") == a


def test_greedy_ties_go_to_the_lowest_index():
    assert pick_action_from_mcts([0, 5, 5, 1, 5, 0, 0, 0, 0, 0, 0, 5], "greedy") == 1
    assert pick_action_from_mcts([3] * 12, "greedy") == 0
    assert pick_action_from_mcts([0] * 11 + [2], "greedy", rng=np.random.default_rng(0)) == 11


def test_returns_a_python_int():
    assert type(pick_action_from_mcts(COUNTS, "greedy")) is int
    assert type(pick_action_from_mcts(COUNTS, "sample", rng=np.random.default_rng(0))) is int


# --------------------------------------------------------------------------- sampling
@pytest.mark.slow
@pytest.mark.parametrize("temperature", [1.0, 0.5])
def test_sample_follows_counts_to_the_power_one_over_t(temperature):
    rng = np.random.default_rng(100)
    draws = [pick_action_from_mcts(COUNTS, "sample", temperature, rng) for _ in range(DRAWS)]
    freq = frequencies(draws)
    expected = expected_probs(COUNTS, temperature)
    assert np.abs(freq - expected).max() < 0.01, (freq.round(3), expected.round(3))
    assert freq[COUNTS == 0].sum() == 0  # unvisited actions are never drawn


def test_visit_probabilities():
    for t in (1.0, 0.5, 2.0, 0.2):
        np.testing.assert_allclose(visit_probabilities(COUNTS, t), expected_probs(COUNTS, t), rtol=1e-12)
    # Small temperatures with large counts do not overflow (800**100 is inf in float64).
    p = visit_probabilities(np.array([800.0, 790.0, 0, 3]), 0.01)
    assert np.isfinite(p).all() and abs(p.sum() - 1) < 1e-12
    ratio = (790 / 800) ** 100
    np.testing.assert_allclose(p[:2], [1 / (1 + ratio), ratio / (1 + ratio)], rtol=1e-9)
    np.testing.assert_allclose(visit_probabilities(np.zeros(12)), np.full(12, 1 / 12))
    batch = visit_probabilities(np.stack([COUNTS, np.zeros(12), COUNTS * 3]), 0.5)
    np.testing.assert_allclose(
        batch, np.stack([expected_probs(COUNTS, 0.5), np.full(12, 1 / 12), expected_probs(COUNTS, 0.5)])
    )
    with pytest.raises(ValueError):
        visit_probabilities(COUNTS, 0.0)


def test_sample_uses_numpy_global_random_by_default():
    np.random.seed(7)
    a = [pick_action_from_mcts(COUNTS, "sample") for _ in range(50)]
    np.random.seed(7)
    b = [pick_action_from_mcts(COUNTS, "sample") for _ in range(50)]
    assert a == b and len(set(a)) > 1


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["greedy", "sample"])
def test_all_zero_visits_give_a_uniform_choice(mode):
    rng = np.random.default_rng(200)
    draws = [pick_action_from_mcts(np.zeros(12), mode, 1.0, rng) for _ in range(12_000)]
    assert np.abs(frequencies(draws) - 1 / 12).max() < 0.012
    # Also without a generator (numpy's global one).
    np.random.seed(3)
    assert len({pick_action_from_mcts(np.zeros(12), mode) for _ in range(200)}) == 12


def test_invalid_mode_or_temperature():
    with pytest.raises(ValueError):
        pick_action_from_mcts(COUNTS, mode="best")
    with pytest.raises(ValueError):
        pick_action_from_mcts(COUNTS, "sample", temperature=0.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError):
        pick_actions_batch(COUNTS[None], "argmax", 1.0, np.random.default_rng(0))


# --------------------------------------------------------------------------- batched
def test_batch_greedy_is_rowwise_argmax():
    rng = np.random.default_rng(300)
    counts = rng.integers(0, 6, size=(500, 12)).astype(np.float32)  # many ties
    out = pick_actions_batch(counts, "greedy", 1.0, rng)
    assert out.shape == (500,)
    assert out.tolist() == [pick_action_from_mcts(c, "greedy") for c in counts]


@pytest.mark.parametrize("temperature", [1.0, 0.5])
def test_batch_sample_has_the_same_distribution(temperature):
    rng = np.random.default_rng(400)
    out = pick_actions_batch(np.tile(COUNTS, (DRAWS, 1)), "sample", temperature, rng)
    assert out.shape == (DRAWS,) and out.min() >= 0 and out.max() < 12
    freq = frequencies(out)
    assert np.abs(freq - expected_probs(COUNTS, temperature)).max() < 0.01
    assert freq[COUNTS == 0].sum() == 0


@pytest.mark.parametrize("mode", ["greedy", "sample"])
def test_batch_all_zero_rows_are_uniform(mode):
    rng = np.random.default_rng(500)
    counts = np.zeros((12_000, 12))
    counts[::2, 5] = 4  # interleaved non-empty rows must not disturb the empty ones
    out = pick_actions_batch(counts, mode, 1.0, rng)
    assert (out[::2] == 5).all()
    assert np.abs(frequencies(out[1::2]) - 1 / 12).max() < 0.015


def test_batch_rows_are_independent():
    rng = np.random.default_rng(600)
    counts = np.stack([COUNTS, COUNTS[::-1]] * 5000)
    out = pick_actions_batch(counts, "sample", 1.0, rng)
    np.testing.assert_allclose(frequencies(out[0::2]), expected_probs(COUNTS, 1.0), atol=0.015)
    np.testing.assert_allclose(frequencies(out[1::2]), expected_probs(COUNTS[::-1], 1.0), atol=0.015)

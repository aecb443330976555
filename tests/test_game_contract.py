"""The ``Games.Game`` protocol, one contract for every registered game: the 2x2 and 3x3 cubes, Go on 5x5, 7x7
and 9x9, and the tests' tic-tac-toe. Each game plays a batch of random legal games from its start through
the protocol alone, and every function answers as the engine expects (shapes, dtypes, purity, keys,
symmetries, terminal values)."""

from __future__ import annotations

import numpy as np
import pytest

from engine import Games
from toy_games import TICTACTOE

GAME_NAMES = (*Games.BUILT_IN, TICTACTOE.name)
BATCH, PLIES = 16, 12


def game_and_start(name: str):
    """The game and ``BATCH`` start positions in its own array form."""
    if name == TICTACTOE.name:
        return TICTACTOE, np.zeros((BATCH, 9), np.int8)
    game = Games.get_game(name)
    if hasattr(game, "scramble"):  # a puzzle: scrambled cubes (a solved one is finished)
        return game, game.scramble(np.random.default_rng(1), BATCH, 20)[0]
    return game, np.zeros((BATCH, game.rules.num_points), np.int8)  # Go: the empty board


def copy_state(state: dict) -> dict:
    return {k: v.copy() for k, v in state.items()}


def assert_same_state(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_every_game_keeps_the_protocol_through_random_play(name):
    game, start = game_and_start(name)
    assert game.name == name and game.discount in (1.0, -1.0) and game.num_actions >= 2
    assert isinstance(game.leaf_quirk, bool) and np.isfinite(game.move_cost)
    rng = np.random.default_rng(0)
    state = game.new_states(start)
    assert all(len(v) == BATCH for v in state.values()) and not game.is_terminal(state).any()
    plies = 0
    for _ in range(PLIES):
        legal = game.legal_mask(state)
        assert legal.shape == (BATCH, game.num_actions) and legal.dtype == bool
        terminal = game.is_terminal(state)
        assert terminal.shape == (BATCH,) and terminal.dtype == bool
        assert legal[~terminal].any(axis=1).all()  # a game that goes on has a move
        if terminal.all():
            break
        inputs = game.eval_input(state)
        obs = game.encode(inputs)
        assert obs.shape == (BATCH, *game.obs_shape) and obs.dtype == np.float32
        check_keys(game, inputs)
        check_symmetries(game, inputs, legal)
        actions = np.where(legal, rng.random(legal.shape), -1.0).argmax(axis=1)
        live = np.flatnonzero(~terminal)  # a finished game's row stays as it was
        playing = {k: v[live] for k, v in state.items()}
        before = copy_state(playing)
        after = game.step(playing, actions[live])
        assert_same_state(playing, before)  # step is pure: the input batch is unchanged
        assert_same_state(after, game.step(before, actions[live]))  # and deterministic
        reward = np.asarray(game.reward(playing, actions[live], after))
        assert reward.shape == (len(live),) and np.isfinite(reward).all()
        for key in state:
            state[key][live] = after[key]
        plies += 1
    assert plies >= 2
    done = game.is_terminal(state)
    if done.any():
        values = np.asarray(game.terminal_value(state))[done]
        assert np.isfinite(values).all() and (np.abs(values) <= 1.0).all()


def check_keys(game, inputs: np.ndarray) -> None:
    """Equal rows have equal keys and different rows different ones."""
    keys = game.state_keys(inputs)
    assert len(keys) == len(inputs)
    rows = [np.asarray(r).tobytes() for r in inputs]
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            assert (keys[i] == keys[j]) == (rows[i] == rows[j])


def check_symmetries(game, inputs: np.ndarray, legal: np.ndarray) -> None:
    """The given batch first, then images of the same shapes whose policies are the same numbers moved."""
    policies = legal / legal.sum(axis=1, keepdims=True).clip(1)
    pairs = game.symmetries(inputs, policies)
    assert len(pairs) >= 1
    np.testing.assert_array_equal(pairs[0][0], inputs)
    np.testing.assert_array_equal(pairs[0][1], policies)
    for images, moved in pairs:
        assert np.shape(images) == np.shape(inputs) and np.shape(moved) == policies.shape
        np.testing.assert_allclose(np.sort(moved, axis=1), np.sort(policies, axis=1))


@pytest.mark.parametrize("name", GAME_NAMES)
def test_every_game_values_known_finished_games_exactly(name):
    """Random play rarely finishes a game in a few plies, so each game's ``terminal_value`` is checked on
    finished positions whose value is known: a solved cube (+1, the puzzles' only terminal state); on an
    empty Go board two passes (White wins by komi: -1 for Black, to move); a line of three in tic-tac-toe
    (-1 for the loser, to move) and a full board without one (a draw, 0)."""
    game, _ = game_and_start(name)
    if hasattr(game, "scramble"):
        state, expected = game.new_states(np.stack([game.solved, game.solved])), [1.0, 1.0]
    elif name == TICTACTOE.name:
        won = [1, 1, 1, -1, -1, 0, 0, 0, 0]  # X's top row, O to move
        drawn = [1, -1, 1, 1, -1, -1, -1, 1, 1]  # full, no line
        state, expected = game.new_states(np.array([won, drawn])), [-1.0, 0.0]
    else:
        state = game.new_states(np.zeros((2, game.rules.num_points), np.int8))
        passes = np.full(2, game.num_actions - 1)
        state = game.step(game.step(state, passes), passes)
        expected = [-1.0, -1.0]
    assert game.is_terminal(state).all()
    np.testing.assert_array_equal(np.asarray(game.terminal_value(state), dtype=np.float64), expected)

"""Go as a game of the engine (Go_Game): the registry entries, the evaluator rows and their symmetries,
and the PUCT search on go5 against the plain negamax reference, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from engine import Games
from engine.Search_Tree import N_ROW, W_ROW
from go.Go_Board import board_from_text, parse_vertex
from go.Go_Game import GO_GAMES, go_game
from MCTS_Core import MCTS
from reference_mcts import ReferenceGameMCTS

GO5 = Games.get_game("go5")


def hashed_evaluator(inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pseudo-random priors (float32, sum 1) and values in (-1, 1) that depend only on each row's key."""
    priors, values = [], []
    for key in GO5.state_keys(inputs).tolist():
        rng = np.random.default_rng(list(key))
        priors.append(rng.dirichlet(np.ones(GO5.num_actions)).astype(np.float32))
        values.append(np.float32(rng.uniform(-0.9, 0.9)))
    return np.array(priors), np.array(values)


def played(game, moves: list[str], state=None) -> dict:
    """The one-state batch after ``moves`` (Go coordinates) from ``state`` (default: the empty board)."""
    state = game.initial_state(1) if state is None else state
    for move in moves:
        state = game.step(state, np.array([parse_vertex(move, game.size)]))
    return state


def test_registry_has_go_boards_and_names_other_rules():
    assert {"go5", "go7", "go9"} <= set(Games.GAMES) and GO_GAMES["go7"].komi == 8.5
    assert GO5.discount == -1.0 and GO5.num_actions == 26 and GO5.obs_shape == (17, 5, 5)
    assert go_game(5, komi=25.5).name == "go5-komi25.5" and go_game(13).num_actions == 170
    assert go_game(5, max_moves=12, history=1).name == "go5-moves12-history1"


def test_eval_rows_encode_as_the_board_does_and_key_exactly():
    state = played(GO5, ["C3", "B3", "pass"])
    rows = GO5.eval_input(state)
    np.testing.assert_array_equal(GO5.encode(rows), GO5.rules.encode(state))
    other = GO5.eval_input(played(GO5, ["C3", "B3"]))  # same board, other player to move
    assert GO5.state_keys(rows)[0] != GO5.state_keys(other)[0]


def test_symmetries_move_the_stones_and_the_policy_together():
    state = played(GO5, ["A5", "B3"])
    policy = np.zeros((1, 26), np.float32)
    policy[0, parse_vertex("A5", 5)] = policy[0, 25] = 0.5
    pairs = GO5.symmetries(GO5.eval_input(state), policy)
    assert len(pairs) == 8 and np.array_equal(pairs[0][0], GO5.eval_input(state))
    for rows, moved in pairs:
        corner = int(np.flatnonzero(moved[0, :25])[0])
        # The policy's point is where the A5 stone went, on the board and on the board before B3.
        assert rows[0, corner] == rows[0, 25 + corner] == 1 and moved[0, 25] == 0.5
        assert (rows[0, :25] != 0).sum() == 2 and (rows[0, 25:50] != 0).sum() == 1


@pytest.mark.slow
@pytest.mark.parametrize("sims", [2, 20, 120])
def test_puct_search_on_go5_matches_negamax_reference(sims):
    """Positions with captures, a pass that lets the next pass end the game, and a short move cap, so
    the trees meet terminal states of both signs."""
    game = go_game(5, max_moves=10)
    atari = game.new_states(board_from_text(["..X..", ".XOX.", ".....", ".....", "....."]))
    roots = [game.initial_state(1), played(game, ["C3", "pass"]), played(game, ["C3", "C2", "D2", "B2"]), atari]
    reference = ReferenceGameMCTS(game, lambda row: tuple(a[0] for a in hashed_evaluator(row[None])), 1.3, sims)
    search = MCTS(None, num_simulations=sims, evaluator=hashed_evaluator, game=game, c_puct=1.3)
    for state in roots:
        stats = search.search(state).root_stats()[0]
        ref_visits, ref_q = reference.run(state)
        np.testing.assert_array_equal(stats[N_ROW], ref_visits)
        np.testing.assert_array_equal(stats[W_ROW] / np.maximum(stats[N_ROW], 1.0), ref_q)
        assert stats[N_ROW].sum() == sims - 1


def test_search_finds_the_winning_pass():
    """After Black's opening pass at komi 24.5, White's pass ends the game and wins: the search, with no
    network, finds it (the terminal value is negated to White's side)."""

    def uniform(inputs):
        return np.full((len(inputs), 26), 1 / 26, np.float32), np.zeros(len(inputs), np.float32)

    search = MCTS(None, num_simulations=400, evaluator=uniform, game=GO5, c_puct=1.3)
    after_pass = played(GO5, ["pass"])
    assert search.run_batch(after_pass).argmax() == 25

"""Go_Board: hand-made positions (captures, snapback, ko, superko, suicide, seki, scoring with komi), batching,
encoding, keys, symmetries, and agreement with GNU Go over GTP (skipped without it)."""

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import REPO
from go.Go_Board import BLACK, EMPTY, WHITE, GoBoard, board_from_text, format_vertex, parse_vertex
from go.GTP_Client import GNUGO_PATH, GTPClient, gnugo_command

ROOT = str(REPO)

CHECK_SCRIPT = os.path.join(ROOT, "docs", "go_rules_check.py")
needs_gnugo = pytest.mark.skipif(not os.access(GNUGO_PATH, os.X_OK), reason="GNU Go is not installed")

RULES = GoBoard(5)

# The seki below: Black A4 and White's B column share the liberties A5 and A3; neither can fill one.
SEKI = ". O X . .|X O X . .|. O X . .|X X X . .|. . . . .".split("|")


def at(vertex: str) -> int:
    return parse_vertex(vertex, 5)


def position(rows: list[str], to_play: int = BLACK, rules: GoBoard = RULES):
    return rules.state_from_board(board_from_text(rows), to_play)


def play(state, *vertices: str, rules: GoBoard = RULES):
    for vertex in vertices:
        state = rules.step(state, [parse_vertex(vertex, rules.size)])
    return state


def legal(state, vertex: str, rules: GoBoard = RULES) -> bool:
    return bool(rules.legal_mask(state)[0, parse_vertex(vertex, rules.size)])


def stone(state, vertex: str) -> int:
    return int(state["board"][0, at(vertex)])


def random_states(rules: GoBoard, batch: int, moves: int, seed: int):
    """A batch after ``moves`` random legal moves (points preferred over the pass), and the actions."""
    rng = np.random.default_rng(seed)
    state, actions = rules.initial_state(batch), []
    for _ in range(moves):
        weights = rules.legal_mask(state) * rng.random((batch, rules.num_actions))
        weights[:, -1] *= 0.01
        actions.append(weights.argmax(axis=1))
        state = rules.step(state, actions[-1])
    return state, actions


# --------------------------------------------------------------------------- coordinates
def test_coordinates_are_written_as_go_players_write_them():
    assert at("A1") == 20 and at("a5") == 0 and at("E1") == 24 and at("pass") == 25
    assert format_vertex(20, 5) == "A1" and format_vertex(25, 5) == "pass"
    assert parse_vertex("J1", 9) == 72 + 8 and format_vertex(8, 9) == "J9"  # no I
    assert parse_vertex("T19", 19) == 18 and format_vertex(360, 19) == "T1"
    assert all(parse_vertex(format_vertex(a, 7), 7) == a for a in range(50))
    for bad in ("I3", "F1", "A6", "A0", "C", "3C", ""):
        with pytest.raises(ValueError):
            parse_vertex(bad, 5)


def test_bad_sizes_and_boards_are_refused():
    for size in (4, 20):
        with pytest.raises(ValueError, match="board size"):
            GoBoard(size)
    with pytest.raises(ValueError, match="rows"):
        board_from_text(["X O .", ". . ."])
    with pytest.raises(ValueError, match="rows"):
        board_from_text(["X Z .", ". . .", ". . ."])
    with pytest.raises(ValueError, match="actions"):
        RULES.step(RULES.initial_state(2), [26, 0])


# --------------------------------------------------------------------------- captures and suicide
def test_a_corner_stone_and_an_edge_group_are_captured():
    state = play(position(["X O . . .", ". . . . .", ". . . . .", ". . . . .", ". . . . ."], WHITE), "A4")
    assert stone(state, "A5") == EMPTY and stone(state, "A4") == WHITE
    state = play(position(["X X O . .", "O . . . .", ". . . . .", ". . . . .", ". . . . ."], WHITE), "B4")
    assert stone(state, "A5") == stone(state, "B5") == EMPTY and (state["board"] == WHITE).sum() == 3


def test_one_move_captures_two_chains_at_once():
    rows = [". O X O .", "O X . . .", ". O . . .", ". . . . .", ". . . . ."]
    state = play(position(rows, WHITE), "C4")  # C4 is the last liberty of both C5 and B4
    assert stone(state, "B4") == stone(state, "C5") == EMPTY and (state["board"] == BLACK).sum() == 0
    rows = [". X O X .", ". O . O .", ". X O X .", ". . X . .", ". . . . ."]
    state = play(position(rows, BLACK), "C4")
    assert stone(state, "C5") == stone(state, "C3") == EMPTY and stone(state, "B4") == WHITE


def test_suicide_is_illegal_unless_it_captures():
    state = position(["X . O . .", "O O . . .", ". . . . .", ". . . . .", ". . . . ."])
    assert not legal(state, "B5")  # A5-B5 would have no liberty
    assert legal(position(["X . O X .", "O O X . .", ". . . . .", ". . . . .", ". . . . ."]), "B5")
    state = position([". O . . .", "O . . . .", ". . . . .", ". . . . .", ". . . . ."])
    assert not legal(state, "A5")
    with pytest.raises(ValueError, match="illegal move A5"):
        RULES.step(state, [at("A5")])
    with pytest.raises(ValueError, match="illegal"):
        RULES.step(state, [at("B5")])  # occupied


def test_snapback_retakes_three_stones_at_the_point_just_captured():
    state = position([". O X . .", ". O X . .", "X X . . .", ". . . . .", ". . . . ."])
    state = play(state, "A5")  # a throw-in: White's chain is left with A4 only
    assert stone(state, "A5") == BLACK
    state = play(state, "A4")  # White captures the stone, filling its own last outside liberty
    assert stone(state, "A5") == EMPTY and legal(state, "A5")
    state = play(state, "A5")
    assert (state["board"][0] == WHITE).sum() == 0 and stone(state, "A5") == BLACK


# --------------------------------------------------------------------------- ko and superko
KO = [". . . . .", ". . . . .", ". X O . .", "X O . O .", ". X O . ."]


def test_ko_cannot_be_retaken_at_once_but_after_an_exchange_elsewhere():
    state = play(position(KO), "C2")
    assert stone(state, "B2") == EMPTY
    assert not legal(state, "B2")
    state = play(state, "E5", "E4")  # a ko threat and its answer change the board
    assert legal(state, "B2")
    assert stone(play(state, "B2"), "C2") == EMPTY


def test_positional_superko_forbids_any_earlier_position_not_only_the_last_but_one():
    state = play(position(KO), "E5", "E4")
    assert legal(state, "C2")
    # Record the position after Black's capture at C2 as the game's first one: from here it is three
    # positions back, so only a whole-history check can forbid it.
    recreated = play(state, "C2")["hash_history"][0, 3]
    state["hash_history"][0, 0] = recreated
    assert not legal(state, "C2") and legal(state, "A1")
    playable, superko, _ = RULES.point_moves(state)
    assert playable[0, at("C2")] and superko[0].sum() == 1


# A random game (docs/go_rules_check.py's seed 1, pass probability 0.3) in which Black's D1 would, without
# capturing anything, recreate the position after move 28 (four moves back): a repeat that a simple ko rule allows.
LONG_CYCLE = "C2 E4 pass C4 E1 A4 A5 B5 D4 E5 D1 A1 A2 C1 D3 C5 D5 D2 E3 B4 B2 E2 pass A5 pass B3 D1 A3 E1 E2 pass D2"


def test_superko_forbids_a_quiet_move_that_recreates_a_position_four_moves_back():
    state = play(RULES.initial_state(1), *LONG_CYCLE.split())
    assert state["to_play"][0] == BLACK and not legal(state, "D1") and legal(state, "B1")
    playable, superko, new_hash = RULES.point_moves(state)
    assert playable[0, at("D1")] and superko[0, at("D1")]
    assert new_hash[0, at("D1")] == state["hash_history"][0, 28] != state["hash_history"][0, 31]


@needs_gnugo
def test_gnugo_agrees_on_the_long_cycle():
    with GTPClient(gnugo_command(1)) as client:
        client.setup(5, RULES.komi)
        colour = BLACK
        for vertex in LONG_CYCLE.split():
            client.play(colour, at(vertex), 5)
            colour = -colour
        assert client.send("is_legal black D1") == "0" and client.send("is_legal black B1") == "1"


def test_a_pass_never_breaks_superko_and_is_always_legal():
    state = play(position(KO), "C2", "pass")
    assert RULES.legal_mask(state)[0, -1] and legal(state, "E5")
    assert stone(state, "C2") == BLACK and state["passes"][0] == 1


# --------------------------------------------------------------------------- scoring and the end
def test_seki_points_are_legal_and_score_for_neither():
    state = position(SEKI)
    assert legal(state, "A5") and legal(state, "A3")
    after = play(state, "A5", "A3")  # Black fills a shared liberty: White captures both stones
    assert stone(after, "A4") == EMPTY and stone(after, "A5") == EMPTY
    black, white = RULES.area(state["board"])
    assert (black[0], white[0]) == (7 + 13, 3)  # A5 and A3 touch both colours
    assert RULES.score(state)[0] == 20 - 3 - 24.5


def test_two_passes_end_the_game_and_the_value_is_for_the_player_to_move():
    state = play(position(SEKI), "pass", "pass")
    assert RULES.is_terminal(state)[0] and state["to_play"][0] == BLACK
    assert RULES.terminal_value(state)[0] == -1.0  # Black is 7.5 short of komi
    assert not RULES.legal_mask(state).any()
    with pytest.raises(ValueError, match="finished"):
        RULES.step(state, [RULES.pass_action])
    draw = GoBoard(5, komi=17.0)
    assert draw.terminal_value(play(position(SEKI, rules=draw), "pass", "pass", rules=draw))[0] == 0.0
    generous = GoBoard(5, komi=16.5)
    assert generous.terminal_value(play(position(SEKI, rules=generous), "pass", "pass", rules=generous))[0] == 1.0


def test_the_empty_board_is_nobodys_area_and_one_stone_owns_it():
    state = RULES.initial_state(1)
    assert [int(x[0]) for x in RULES.area(state["board"])] == [0, 0]
    assert [int(x[0]) for x in RULES.area(play(state, "C3")["board"])] == [25, 0]


def test_a_move_resets_the_passes_and_the_move_cap_ends_the_game():
    state = play(RULES.initial_state(1), "pass", "C3")
    assert state["passes"][0] == 0 and not RULES.is_terminal(state)[0]
    capped = GoBoard(5, max_moves=3)
    state = play(capped.initial_state(1), "C3", "pass", "D3", rules=capped)
    assert capped.is_terminal(state)[0] and state["move_count"][0] == 3
    assert GoBoard(7).max_moves == 98 and GoBoard(7).komi == 8.5 and GoBoard(9).komi == 7.5


def test_the_area_agrees_with_the_plain_reference_count_on_random_boards():
    spec = importlib.util.spec_from_file_location("go_rules_check", CHECK_SCRIPT)
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    boards = np.random.default_rng(1).choice(np.array([BLACK, WHITE, EMPTY, EMPTY], dtype=np.int8), (300, 49))
    black, white = GoBoard(7).area(boards)
    assert [check.reference_area(board, 7) for board in boards] == list(zip(black.tolist(), white.tolist()))


# --------------------------------------------------------------------------- batching and the interface
def test_a_batch_steps_like_its_states_one_by_one():
    rules = GoBoard(5)
    batch, actions = random_states(rules, 8, 30, seed=2)
    for b in range(8):
        alone = rules.initial_state(1)
        for action in actions:
            alone = rules.step(alone, [action[b]])
        for key, value in alone.items():
            assert np.array_equal(value[0], batch[key][b]), key
        assert np.array_equal(rules.legal_mask(alone)[0], rules.legal_mask(batch)[b])


def test_encode_gives_own_opponent_and_side_planes_with_history():
    rules = GoBoard(5, history=2)
    state = play(rules.initial_state(1), "C3", "D3", rules=rules)
    planes = rules.encode(state)
    assert planes.shape == (1, *rules.obs_shape) == (1, 5, 5, 5) and planes.dtype == np.float32
    own, theirs, past_own, past_theirs, side = planes[0]
    assert own[2, 2] == 1 and theirs[2, 3] == 1 and own.sum() == 1 and theirs.sum() == 1  # Black to move
    assert past_own[2, 2] == 1 and past_theirs.sum() == 0 and side.min() == 1
    white = play(state, "B2", rules=rules)
    assert rules.encode(white)[0, -1].max() == 0 and rules.encode(white)[0, 0, 2, 3] == 1


def test_state_keys_are_equal_exactly_for_equal_states():
    state = RULES.initial_state(3)
    state = RULES.step(state, [at("C3"), at("C3"), at("pass")])
    keys = RULES.state_keys(state)
    assert keys[0] == keys[1] and keys[0] != keys[2] and len({keys[0], keys[1], keys[2]}) == 2
    other = RULES.step(state, [at("D3"), at("pass"), at("pass")])
    assert len(set(RULES.state_keys(other))) == 3


def test_the_eight_symmetries_move_stones_and_policy_together_and_keep_the_pass():
    state = play(RULES.initial_state(1), "A1", "B1", "A2")
    policy = np.zeros((1, 26))
    policy[0, at("B1")], policy[0, 25] = 0.75, 0.25
    pairs = RULES.symmetries(state, policy)
    assert len(pairs) == 8 and np.array_equal(pairs[0][0]["board"], state["board"])
    assert len({pair[0]["board"].tobytes() for pair in pairs}) == 8
    for new_state, new_policy in pairs:
        assert new_policy[0, 25] == 0.25 and new_policy[0, :25][new_state["board"][0] == WHITE].sum() == 0.75
        corner = {at("A1"), at("A5"), at("E1"), at("E5")}
        assert set(np.flatnonzero(new_state["board"][0] == BLACK).tolist()) & corner  # A1 stays a corner


def test_legal_masks_commute_with_the_symmetries():
    rules = GoBoard(7)
    state, _ = random_states(rules, 4, 25, seed=3)
    mask = rules.legal_mask(state).astype(float)
    for new_state, new_mask in rules.symmetries(state, mask):
        assert np.array_equal(rules.legal_mask(new_state), new_mask.astype(bool))


# --------------------------------------------------------------------------- against GNU Go
@pytest.mark.slow
@needs_gnugo
@pytest.mark.parametrize("size, moves", [(5, 300), (7, 200)])
def test_rules_agree_with_gnugo_on_random_games(size, moves):
    out = subprocess.run(
        [sys.executable, CHECK_SCRIPT, "--size", str(size), "--moves", str(moves), "--seed", "5"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert f"{moves} moves, {moves * size * size} legality checks" in out.stdout and "all agree" in out.stdout


def test_the_rules_check_explains_its_flags():
    out = subprocess.run([sys.executable, CHECK_SCRIPT, "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and all(flag in out.stdout for flag in ("--seed", "--moves", "--size"))


@pytest.mark.slow
def test_the_rules_check_refuses_bad_input_with_one_sentence():
    for args in (["--size", "4"], ["--moves", "0"], ["--gnugo", "/nonexistent/gnugo"]):
        out = subprocess.run([sys.executable, CHECK_SCRIPT, *args], capture_output=True, text=True, timeout=60)
        assert out.returncode == 2 and "Traceback" not in out.stderr and out.stderr.count("\n") == 1

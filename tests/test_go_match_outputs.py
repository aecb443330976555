"""evaluate.py --game go5's outputs (Go_Match): SGF folders unique per model, an earlier run's extra games
moved aside, SGF names escaped, every output checked before the first game, JSON without NaN, a match of
no game played an error, flags that contradict each other refused, and matches from a given opening."""

from __future__ import annotations

import json
import os
import shlex
import sys

import numpy as np
import pytest
import torch
from sgfmill import sgf

import evaluate
from go.Go_Net import GoNet
from run.Checkpoints import save_checkpoint

pytestmark = pytest.mark.usefixtures("torch_one_thread")
needs_gnugo = pytest.mark.skipif(not os.access("/usr/games/gnugo", os.X_OK), reason="GNU Go is not installed")
FAKE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_gtp.py")


def tiny_model(path, size: int = 5) -> str:
    torch.manual_seed(0)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_checkpoint(GoNet(size, filters=8, blocks=1), str(path))
    return str(path)


def match(out, *flags) -> int:
    argv = ["--game", "go5", "--opponent", "random", "--sims", "2", "--no-symmetric", "--out-dir", str(out)]
    return evaluate.main([*argv, *flags])


def refuse(constant: str):
    raise ValueError(f"{constant} is no JSON")


def one_sentence(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    return err


def test_two_models_of_one_file_name_write_their_own_games(tmp_path):
    a, b = tiny_model(tmp_path / "run_a" / "x.pt"), tiny_model(tmp_path / "run_b" / "x.pt")
    assert match(tmp_path / "out", "--games", "2", "--checkpoints", a, b) == 0
    for folder in ("01_x", "02_x"):
        assert sorted(os.listdir(tmp_path / "out" / "sgf" / folder)) == ["game_0001.sgf", "game_0002.sgf", "match.json"]
    assert match(tmp_path / "out2", "--games", "1", "--checkpoints", a, b, "--sgf-dir", str(tmp_path / "s")) == 0
    assert sorted(os.listdir(tmp_path / "s")) == ["01_x", "02_x"]


def test_a_rerun_of_fewer_games_moves_the_earlier_extra_games_aside(tmp_path, capsys):
    model = tiny_model(tmp_path / "m.pt")
    assert match(tmp_path / "out", "--games", "3", "--checkpoint", model) == 0
    assert match(tmp_path / "out", "--games", "1", "--checkpoint", model, "--device", "cpu") == 0
    folder = tmp_path / "out" / "sgf" / "m"
    assert sorted(p.name for p in folder.glob("*.sgf")) == ["game_0001.sgf"]
    (archive,) = folder.glob("replaced-*")
    assert sorted(p.name for p in archive.iterdir()) == [*(f"game_{i:04d}.sgf" for i in (1, 2, 3)), "match.json"]
    assert "moved to" in capsys.readouterr().out


def test_player_names_are_escaped_in_the_sgf(tmp_path):
    model = tiny_model(tmp_path / "x]y\\z.pt")
    assert match(tmp_path / "out", "--games", "2", "--checkpoints", model, "--opponent", "checkpoint",
                 "--opponent-checkpoint", model) == 0  # fmt: skip
    (folder,) = (tmp_path / "out" / "sgf").iterdir()
    for path in folder.glob("*.sgf"):
        root = sgf.Sgf_game.from_bytes(path.read_bytes()).get_root()
        assert {root.get("PB"), root.get("PW")} == {"agent", "x]y\\z.pt"}


def test_a_stopped_match_resumed_plays_the_games_one_run_would(tmp_path, capsys):
    """3 games, then --resume to 5: the first 3 files are kept, the last 2 are those of one 5-game run (both
    players search without drawing, so that one run's games are known), and the results count all 5."""
    a, b = tiny_model(tmp_path / "a.pt"), tiny_model(tmp_path / "b.pt")
    torch.manual_seed(1)
    save_checkpoint(GoNet(5, filters=8, blocks=1), b)  # another network: the games differ by colour
    flags = ["--checkpoint", a, "--opponent", "checkpoint", "--opponent-checkpoint", b, "--sample-moves", "0"]
    assert match(tmp_path / "one", "--games", "5", *flags) == 0
    assert match(tmp_path / "two", "--games", "3", *flags) == 0
    kept = {p.name: p.read_bytes() for p in (tmp_path / "two" / "sgf" / "a").glob("*.sgf")}
    capsys.readouterr()
    assert match(tmp_path / "two", "--games", "5", "--resume", *flags) == 0
    assert "resumed: 3 games already played" in capsys.readouterr().out
    one, two = (sorted((tmp_path / run / "sgf" / "a").glob("*.sgf")) for run in ("one", "two"))
    assert [p.name for p in two] == [f"game_{i:04d}.sgf" for i in range(1, 6)]
    assert all(kept[p.name] == p.read_bytes() for p in two[:3])
    assert [p.read_bytes() for p in one] == [p.read_bytes() for p in two]
    results = [json.loads((tmp_path / run / "results.json").read_text())[0] for run in ("one", "two")]
    for what in ("all", "black", "white"):
        assert results[0][what] == results[1][what]
    assert results[1]["all"]["played"] == 5 and not list((tmp_path / "two" / "sgf" / "a").glob("replaced-*"))


def test_resume_refuses_another_matchs_games_and_keeps_them(tmp_path, capsys):
    model = tiny_model(tmp_path / "m.pt")
    assert match(tmp_path / "out", "--games", "2", "--checkpoint", model) == 0
    folder = tmp_path / "out" / "sgf" / "m"
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    capsys.readouterr()
    assert match(tmp_path / "out", "--games", "4", "--checkpoint", model, "--resume", "--sims", "3") == 2
    assert "played with sims 2, not 3" in one_sentence(capsys)
    assert match(tmp_path / "out", "--games", "1", "--checkpoint", model, "--resume") == 2
    assert "holds 2 games, more than --games 1" in one_sentence(capsys)
    (folder / "game_0001.sgf").rename(folder / "game_0003.sgf")
    assert match(tmp_path / "out", "--games", "4", "--checkpoint", model, "--resume") == 2
    assert "has no game_0001.sgf" in one_sentence(capsys)
    (folder / "game_0003.sgf").rename(folder / "game_0001.sgf")
    (folder / "match.json").unlink()
    assert match(tmp_path / "out", "--games", "4", "--checkpoint", model, "--resume") == 2
    assert "no match.json" in one_sentence(capsys)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == {k: v for k, v in before.items() if k != "match.json"}
    # In an empty (or new) folder --resume simply starts the match.
    assert match(tmp_path / "new", "--games", "1", "--checkpoint", model, "--resume") == 0


def sgf_files(out) -> list[bytes]:
    return [path.read_bytes() for path in sorted((out / "sgf" / "m").glob("*.sgf"))]


@pytest.mark.slow
@needs_gnugo
def test_a_gnugo_match_plays_the_same_games_again_and_when_resumed(tmp_path):
    """GNU Go is seeded game by game from --seed: a 4-game match run twice writes the same SGF files, byte for
    byte, and so does one stopped after 2 games and resumed to 4; another seed changes GNU Go's play. On 7x7: on
    5x5 GNU Go level 1 plays these games one of two ways, and unseeded runs often agree by chance."""
    model = tiny_model(tmp_path / "m.pt", 7)
    flags = ["--game", "go7", "--checkpoint", model, "--opponent", "gnugo", "--level", "1"]
    for out, games, seed in (("one", 4, 0), ("two", 4, 0), ("stopped", 2, 0), ("other", 2, 1)):
        assert match(tmp_path / out, "--games", str(games), "--seed", str(seed), *flags) == 0
    assert match(tmp_path / "stopped", "--games", "4", "--resume", *flags) == 0
    one = sgf_files(tmp_path / "one")
    assert len(one) == 4 and sgf_files(tmp_path / "two") == one and sgf_files(tmp_path / "stopped") == one
    assert sgf_files(tmp_path / "other") != one[:2]


@pytest.mark.slow
def test_resume_refuses_the_games_of_a_gnugo_match_played_unseeded(tmp_path, capsys):
    """A match.json without ``gnugo_seeded`` is from before GNU Go was seeded (its games drew from the clock):
    --resume adds no seeded games to it (a fake engine that passes stands in for GNU Go)."""
    model = tiny_model(tmp_path / "m.pt")
    engine = tmp_path / "engine"
    engine.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(FAKE)}\n")
    engine.chmod(0o755)
    flags = ["--checkpoint", model, "--opponent", "gnugo", "--gnugo", str(engine)]
    assert match(tmp_path / "out", "--games", "1", *flags) == 0
    settings = tmp_path / "out" / "sgf" / "m" / "match.json"
    earlier = json.loads(settings.read_text())
    assert earlier.pop("gnugo_seeded") is True
    settings.write_text(json.dumps(earlier))
    capsys.readouterr()
    assert match(tmp_path / "out", "--games", "2", "--resume", *flags) == 2
    assert "played with gnugo_seeded None, not True" in one_sentence(capsys)


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_results_file_that_cannot_be_written_stops_before_the_first_game(tmp_path, capsys, kind):
    model = tiny_model(tmp_path / "m.pt")
    out = tmp_path / "out"
    out.mkdir()
    if kind == "folder":
        (out / "results.json").mkdir()
    else:
        os.mkfifo(out / "results.json")
    assert match(out, "--games", "2", "--checkpoint", model) == 2
    assert "results.json" in one_sentence(capsys)
    assert not (out / "sgf").exists()  # no game was played


def test_a_match_of_no_game_played_fails_and_its_json_holds_null(tmp_path, capsys):
    model = tiny_model(tmp_path / "m.pt")
    engine = tmp_path / "dead_engine"
    engine.write_text("#!/bin/sh\nexit 3\n")
    engine.chmod(0o755)
    out = tmp_path / "out"
    flags = ["--games", "2", "--checkpoint", model, "--opponent", "gnugo", "--gnugo", str(engine)]
    assert match(out, *flags) == 2
    err = one_sentence(capsys)
    assert "no game of" in err and "was played" in err and "nan" not in err
    results = json.loads((out / "results.json").read_text(), parse_constant=refuse)  # no bare NaN
    assert results[0]["all"]["played"] == 0 and results[0]["all"]["win_rate"] is None


def test_checkpoint_beside_checkpoints_is_refused(tmp_path, capsys):
    model = tiny_model(tmp_path / "m.pt")
    with pytest.raises(SystemExit) as stop:
        match(tmp_path / "out", "--checkpoint", model, "--checkpoints", model)
    assert stop.value.code == 2 and "--checkpoint and --checkpoints" in one_sentence(capsys)


def test_evaluate_and_test_take_a_device(tmp_path, capsys):
    from go import Go_Match

    model = tiny_model(tmp_path / "m.pt")
    show = ["--game", "go5", "--checkpoint", model, "--sims", "2", "--opponent", "random", "--device", "cpu"]
    assert Go_Match.show_main(show) == 0 and "Result: " in capsys.readouterr().out
    with pytest.raises(SystemExit) as stop:
        match(tmp_path / "out", "--checkpoint", model, "--device", "tpu")
    assert stop.value.code == 2 and "--device" in one_sentence(capsys)


def test_distinct_games_count_identical_records_once_by_colour():
    from go.Arena import GameRecord, MatchResult
    from go.Go_Board import BLACK, WHITE
    from go.Go_Match import distinct_games

    def record(moves, score, black="agent", white="gnugo"):
        return GameRecord(black, white, moves=moves, winner=1 if score > 0 else -1, score=score)

    result = MatchResult("agent", "gnugo")
    games = [(record([12, 13, 25, 25], 0.5), BLACK)] * 3 + [(record([12, 7, 25, 25], 2.5), BLACK)]
    games += [(record([12, 13, 25, 25], 0.5, "gnugo", "agent"), WHITE)]
    games += [(GameRecord("agent", "gnugo", moves=[12], not_played="gnugo: gone"), BLACK)]
    for r, colour in games:
        result.records.append(r)
        result.agent_colours.append(colour)
    black = distinct_games(result, 5, BLACK)
    assert black == [
        {"moves": "C3 D3 pass pass", "games": 3, "result": "B+0.5"},
        {"moves": "C3 C4 pass pass", "games": 1, "result": "B+2.5"},
    ]
    assert distinct_games(result, 5, WHITE) == [{"moves": "C3 D3 pass pass", "games": 1, "result": "B+0.5"}]


def test_a_match_reports_its_distinct_games(tmp_path, capsys):
    assert match(tmp_path / "out", "--checkpoint", tiny_model(tmp_path / "m.pt"), "--games", "2") == 0
    assert "distinct game(s)" in capsys.readouterr().out
    summary = json.loads((tmp_path / "out" / "results.json").read_text())[0]
    assert sum(g["games"] for g in summary["black"]["distinct_games"] + summary["white"]["distinct_games"]) == 2


class Recorder:
    """A player that plays uniformly at random (seeded) and records what it is told it observed."""

    def __init__(self, name: str, seed: int):
        from go.Arena import RandomPlayer

        self.inner, self.name, self.seen = RandomPlayer(np.random.default_rng(seed)), name, []

    def new_game(self, game, colour):
        self.inner.new_game(game, colour)

    def genmove(self, state):
        return self.inner.genmove(state)

    def observe(self, state, action):
        self.seen.append((int(state["to_play"][0]), int(state["move_count"][0]), action))

    def close(self):
        pass


def test_a_given_opening_is_played_first_and_both_players_observe_it():
    from go.Arena import play_game
    from go.Go_Board import BLACK, WHITE
    from go.Go_Game import go_game, record_actions

    game = go_game(5)
    opening = record_actions(game, "C3 c4 pass")
    assert opening == [12, 7, 25]
    black, white = Recorder("b", 0), Recorder("w", 1)
    record = play_game(game, black, white, opening)
    assert record.moves[:3] == opening and len(record.moves) > 3 and record.not_played is None
    given = [(BLACK, 0, 12), (WHITE, 1, 7), (BLACK, 2, 25)]  # (to play, move number, action), told to both
    assert black.seen[:3] == given and white.seen[:3] == given
    assert black.seen[3][0] == WHITE and white.seen[3][0] == BLACK  # then each is told only the other's moves


def test_a_match_from_an_opening_starts_every_game_there(tmp_path, capsys):
    model = tiny_model(tmp_path / "m.pt")
    assert match(tmp_path / "out", "--checkpoint", model, "--games", "2", "--opening", " c3  C4 ") == 0
    out = capsys.readouterr().out
    assert "2 games, from the opening C3 C4:" in out and "first moves as Black" not in out  # nobody chose them
    for path in sorted((tmp_path / "out" / "sgf" / "m").glob("*.sgf")):
        nodes = sgf.Sgf_game.from_bytes(path.read_bytes()).get_main_sequence()[1:]
        assert [n.get_move() for n in nodes[:2]] == [("b", (2, 2)), ("w", (3, 2))]
    summary = json.loads((tmp_path / "out" / "results.json").read_text())[0]
    assert summary["opening"] == "C3 C4" and summary["openings"] == {}


@pytest.mark.parametrize(
    "opening, why",
    [
        ("C3 C3", "move 2: C3 is not a legal move there"),
        ("C3 Z9", "move 2: 'Z9' is not a point of a 5x5 board"),
        ("pass pass C3", "move 3: C3 comes after the game has ended"),
    ],
)
def test_a_bad_opening_is_refused_in_one_sentence(tmp_path, capsys, opening, why):
    with pytest.raises(SystemExit) as stop:
        match(tmp_path / "out", "--opening", opening)
    assert stop.value.code == 2 and why in one_sentence(capsys)
    with pytest.raises(SystemExit) as stop:
        match(tmp_path / "out", "--opening", "C3", "--empty-board", "24.5")
    assert stop.value.code == 2 and "--opening is for matches" in one_sentence(capsys)
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
@needs_gnugo
def test_gnugo_is_told_its_own_moves_of_the_opening(tmp_path, capsys):
    """GNU Go as Black is sent ``play B C3`` for the given opening's first move, then plays on from C3 C4."""
    model = tiny_model(tmp_path / "m.pt")
    flags = ["--checkpoint", model, "--games", "1", "--opponent", "gnugo", "--colors", "white", "--opening", "C3 C4"]
    assert match(tmp_path / "out", *flags) == 0
    summary = json.loads((tmp_path / "out" / "results.json").read_text())[0]
    (only,) = summary["white"]["distinct_games"]
    assert only["moves"].startswith("C3 C4 ") and summary["all"]["played"] == 1


def test_moves_drawn_from_the_visits_count_from_the_end_of_the_opening(tmp_path):
    from go import Go_Match

    model = tiny_model(tmp_path / "m.pt")
    flags = ["--game", "go5", "--opponent", "checkpoint", "--opponent-checkpoint", model, "--opening", "C3 C4"]
    args = Go_Match.parse_match_args(flags)
    assert args.opening_actions == [12, 7] and args.sample_moves == 2
    assert Go_Match.sampled_until(args) == 4  # the two moves after the opening, not the opening's own
    assert Go_Match.sampled_until(Go_Match.parse_match_args(flags[:-2])) == 2


# --------------------------------------------------------------------------- the agent's resignation
def test_the_resign_rule_needs_resign_moves_low_values_in_a_row_by_colour():
    from go.Agent_Flags import RESIGN_MOVES, ResignRule
    from go.Go_Board import BLACK, WHITE

    rule = ResignRule(-0.5)
    assert [rule.apply(BLACK, 7, v) for v in (-0.9, -0.9, 0.0)] == [7, 7, 7]  # a good move starts the count over
    assert [rule.apply(BLACK, 7, -0.9) for _ in range(RESIGN_MOVES)] == [7] * (RESIGN_MOVES - 1) + [None]
    assert rule.apply(WHITE, 3, -0.9) == 3  # each colour counts its own moves
    rule.new_game()
    assert rule.apply(BLACK, 7, -0.9) == 7 and ResignRule(None).apply(BLACK, 7, -1.0) == 7


def test_an_agent_below_its_resign_threshold_resigns_at_its_third_move(tmp_path, capsys):
    """At 0.99 every value of the tiny network is below the threshold: the agent resigns at its RESIGN_MOVES-th
    move of each game, a loss recorded as GNU Go's resignations are (RE W+R as Black, B+R as White)."""
    from go.Agent_Flags import RESIGN_MOVES

    model = tiny_model(tmp_path / "m.pt")
    assert match(tmp_path / "out", "--checkpoint", model, "--games", "2", "--resign-threshold", "0.99") == 0
    assert "the agent resigning below 0.99:" in capsys.readouterr().out
    games = [sgf.Sgf_game.from_bytes(p.read_bytes()) for p in sorted((tmp_path / "out" / "sgf" / "m").glob("*.sgf"))]
    assert [g.get_root().get("RE") for g in games] == ["W+R", "B+R"]  # the agent Black, then White
    moves = [[n.get_move()[0] for n in g.get_main_sequence()[1:]] for g in games]
    assert [m.count(agent) for m, agent in zip(moves, "bw")] == [RESIGN_MOVES - 1] * 2  # then it resigned
    assert [m[-1] for m in moves] == ["w", "b"]  # the opponent's move was the last: the agent's turn to play
    summary = json.loads((tmp_path / "out" / "results.json").read_text())[0]
    assert summary["all"]["losses"] == 2 and summary["all"]["agent_resigned"] == 2
    assert summary["all"]["mean_margin"] is None  # no game was counted out
    settings = json.loads((tmp_path / "out" / "sgf" / "m" / "match.json").read_text())
    assert settings["resign_threshold"] == 0.99


def test_by_default_the_agent_never_resigns_and_match_json_is_as_before(tmp_path):
    from go import Go_Match

    assert Go_Match.parse_match_args(["--game", "go5"]).resign_threshold is None  # off by default
    model = tiny_model(tmp_path / "m.pt")
    assert match(tmp_path / "out", "--checkpoint", model, "--games", "2") == 0
    summary = json.loads((tmp_path / "out" / "results.json").read_text())[0]
    assert summary["all"]["agent_resigned"] == 0 and summary["all"]["played"] == 2
    settings = json.loads((tmp_path / "out" / "sgf" / "m" / "match.json").read_text())
    assert "resign_threshold" not in settings  # a match without the flag writes match.json as before it


@pytest.mark.parametrize("value", ["1.5", "-2", "nan", "x"])
def test_a_resign_threshold_outside_minus_one_to_one_is_refused_in_one_sentence(tmp_path, capsys, value):
    with pytest.raises(SystemExit) as stop:
        match(tmp_path / "out", "--resign-threshold", value)
    err = one_sentence(capsys)
    assert stop.value.code == 2 and "--resign-threshold: must be a value between -1 and 1" in err
    with pytest.raises(SystemExit) as stop:
        match(tmp_path / "out", "--resign-threshold", "0.5", "--empty-board", "24.5")
    assert stop.value.code == 2 and "--resign-threshold is for matches" in one_sentence(capsys)
    assert not (tmp_path / "out").exists()


def test_resume_refuses_games_played_with_another_resign_threshold(tmp_path, capsys):
    model = tiny_model(tmp_path / "m.pt")
    flags = ["--checkpoint", model, "--games", "4", "--resume"]
    assert match(tmp_path / "with", "--games", "2", "--checkpoint", model, "--resign-threshold", "0.99") == 0
    assert match(tmp_path / "without", "--games", "2", "--checkpoint", model) == 0
    folders = {run: tmp_path / run / "sgf" / "m" for run in ("with", "without")}
    before = {run: {p.name: p.read_bytes() for p in folder.iterdir()} for run, folder in folders.items()}
    capsys.readouterr()
    refused = [
        ("with", ["--resign-threshold", "0.9"], "played with resign_threshold 0.99, not 0.9"),
        ("with", [], "played with resign_threshold 0.99, not None"),
        ("without", ["--resign-threshold", "0.99"], "played with resign_threshold None, not 0.99"),
    ]
    for run, extra, why in refused:
        assert match(tmp_path / run, *flags, *extra) == 2
        assert why in one_sentence(capsys)
    assert {run: {p.name: p.read_bytes() for p in folder.iterdir()} for run, folder in folders.items()} == before
    # The same threshold resumes, and the earlier games' resignations (read back from RE[W+R]) count.
    assert match(tmp_path / "with", *flags, "--resign-threshold", "0.99") == 0
    summary = json.loads((tmp_path / "with" / "results.json").read_text())[0]
    assert summary["all"]["played"] == 4 and summary["all"]["agent_resigned"] == 4

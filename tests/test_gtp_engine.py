"""gtp.py end to end through a subprocess: every command, `? message` on bad input with the engine going
on, undo, scoring, and bad flags or model files refused with one sentence and exit status 2."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

from conftest import REPO, make_checkpoint
from go.Go_Net import GoNet
from Policy_Value_Net import save_checkpoint


@pytest.fixture(scope="module")
def go5_checkpoint(tmp_path_factory) -> str:
    torch.manual_seed(0)
    path = str(tmp_path_factory.mktemp("gtp") / "go5.pt")
    save_checkpoint(GoNet(5, filters=8, blocks=1), path)
    return path


def run_gtp(args: list[str], commands: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / "gtp.py"), *args], input=commands, capture_output=True, text=True, timeout=120
    )


def replies(stdout: str) -> list[str]:
    """The responses, one string each (without the empty line that ends it)."""
    return [block for block in stdout.split("\n\n") if block]


@pytest.mark.slow
def test_a_session_of_every_command(go5_checkpoint):
    commands = "\n".join(
        [
            "1 protocol_version",
            "name",
            "version",
            "known_command genmove",
            "known_command fly",
            "list_commands",
            "boardsize 5",
            "komi 0.5",
            "clear_board",
            "play black C3",
            "play white C3",  # occupied: illegal, the engine goes on
            "play purple C2",
            "play white Z9",
            "frobnicate",
            "# a comment",
            "2 genmove white",
            "undo",
            "showboard",
            "final_score",
            "boardsize 7",
            "komi lots",
            "undo",
            "undo",
            "quit",
            "name",  # after quit: never answered
        ]
    )
    result = run_gtp(["--checkpoint", go5_checkpoint, "--sims", "8", "--seed", "1"], commands + "\n")
    assert result.returncode == 0, result.stderr
    out = replies(result.stdout)
    assert out[:5] == ["=1 2", "= rubik-alphazero-go", "= 1.0", "= true", "= false"]
    assert out[5].startswith("= protocol_version\nname") and "\nquit\n" in out[5] and out[5].endswith("genmove_analyze")
    assert out[6:10] == ["=", "=", "=", "="]
    assert out[10] == "? illegal move" and out[11].startswith("? syntax error") and out[12].startswith("? syntax")
    assert out[13] == "? unknown command"
    assert out[14].startswith("=2 ") and out[14][3:] not in ("C3", "")  # a legal point or pass
    assert out[15] == "="  # undo takes the generated move back
    assert out[16].startswith("=    A B C D E\n") and " 3 . . X . . 3\n" in out[16]  # Black's one stone
    assert out[17] == "= B+24.5"  # one black stone owns the empty board: 25 - 0 - komi 0.5
    assert out[18] == "? unacceptable size" and out[19] == "? komi needs one number"
    assert out[20:] == ["=", "? cannot undo", "="]


@pytest.mark.slow
def test_bad_flags_and_model_files_are_one_sentence_and_status_2(go5_checkpoint, tmp_path):
    cube = str(make_checkpoint(tmp_path / "cube.pt"))
    for args, words in (
        (["--sims", "0"], "--sims"),
        (["--game", "go4"], "--game"),
        (["--checkpoint", str(tmp_path / "none.pt")], "does not exist"),
        (["--checkpoint", cube], "is a cube network, not a Go one"),
        (["--checkpoint", go5_checkpoint, "--game", "go7"], "is a Go network for 5x5, not 7x7"),
        (["--komi", "-1e300"], "--komi: must be between -1000 and 1000, got -1e300"),  # a value, not a flag
        (["--komi", "٢٤"], "--komi: must be a number"),
        (["--c-puct", "1e308"], "--c-puct: must be at most 1e+06"),
        (["--device", "tpu"], "--device"),
    ):
        result = run_gtp(args)
        assert result.returncode == 2 and words in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""


def test_help_names_the_commands():
    result = run_gtp(["--help"])
    assert result.returncode == 0 and "final_score" in result.stdout and "--sims" in result.stdout


def test_the_agents_simulations_default_by_board_and_yield_to_the_flag():
    import gtp
    from go import Go_Match
    from gui import Go_Gui

    assert gtp.parse_args([]).sims == gtp.DEFAULT_SIMULATIONS
    assert gtp.parse_args(["--game", "go7"]).sims == gtp.LARGE_BOARD_SIMULATIONS > gtp.DEFAULT_SIMULATIONS
    assert gtp.parse_args(["--game", "go7", "--sims", "5"]).sims == 5
    assert Go_Match.parse_match_args(["--game", "go7"]).sims == gtp.LARGE_BOARD_SIMULATIONS
    assert Go_Match.parse_show_args(["--game", "go5"]).sims == gtp.DEFAULT_SIMULATIONS
    assert Go_Gui.parse_args(["--game", "go9"]).sims == gtp.LARGE_BOARD_SIMULATIONS


FIGHT = (REPO / "tests" / "data" / "go5_capture_fight.txt").read_text().splitlines()[-1].split()


@pytest.mark.slow
def test_a_game_far_past_the_self_play_cap_is_played_and_answered_to_the_end(go5_checkpoint):
    # 120 moves of a capture fight on 5x5 (self-play's cap is 50): every play accepted, genmove answers at
    # and past the cap (then taken back, to keep the record), two passes end it and it is scored by area.
    lines, probes = ["boardsize 5", "komi 24.5", "clear_board"], {49, 50, 51, len(FIGHT)}
    for index, vertex in enumerate(FIGHT):
        if index in probes:
            lines += [f"genmove {'bw'[index % 2]}", "undo"]
        lines.append(f"play {'bw'[index % 2]} {vertex}")
    lines += ["genmove b", "undo", "play b pass", "play w pass", "final_score", "quit"]
    result = run_gtp(["--checkpoint", go5_checkpoint, "--sims", "4", "--no-symmetric"], "\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    out = replies(result.stdout)
    assert len(out) == len(lines)
    for line, reply in zip(lines, out):
        if line.startswith("genmove"):
            assert reply.startswith("= ") and reply[2:] != "", line  # a move, never "? game over"
        elif line != "final_score":
            assert reply == "=", f"{line!r} answered {reply!r}"
    assert out[-2][:3] in ("= B", "= W", "= 0")


def test_the_engine_widens_its_game_as_it_goes_and_searches_past_any_width(monkeypatch):
    # Hash history room for 8 moves only: the game of 120 moves widens it (by doubling) many times, in
    # the engine's states and in every search's tree, and superko is checked over the whole game: each
    # move's legal points are those of the game replayed without any widening.
    import gtp
    from go import Go_Board
    from go.Go_Game import go_play_game
    from go.Go_Net import GoNet

    game = go_play_game(5)
    state, expected = game.initial_state(1), []
    for vertex in FIGHT:
        expected.append(game.legal_mask(state)[0])
        state = game.step(state, np.array([Go_Board.parse_vertex(vertex, 5)]))
    monkeypatch.setattr(Go_Board, "INITIAL_ROOM", 8)
    torch.manual_seed(0)
    model = GoNet(5, filters=8, blocks=1).eval()
    args = gtp.parse_args(["--sims", "3", "--no-symmetric"])
    engine = gtp.Engine(model, gtp.agent_from_args(model, args), None)
    assert engine.state["hash_history"].shape[1] == 9
    for index, vertex in enumerate(FIGHT):
        colour = "bw"[index % 2]
        assert np.array_equal(engine.game.legal_mask(engine.state)[0], expected[index]), index
        if index == 75:  # White's E2 would repeat an earlier position: positional superko
            with pytest.raises(gtp.GTPFailure, match="illegal"):
                gtp.handle(engine, "play", [colour, "E2"])
        if index % 30 == 29:
            assert gtp.handle(engine, "genmove", [colour]) != ""
            gtp.handle(engine, "undo", [])
        gtp.handle(engine, "play", [colour, vertex])
    assert engine.state["move_count"][0] == len(FIGHT) and engine.state["hash_history"].shape[1] > len(FIGHT)


def test_gtp_evaluate_and_the_gui_build_one_agent_that_plays_one_move():
    # One position through gtp.py's engine, evaluate.py's match agent against GNU Go and the GUI's agent,
    # each built from its own script's default flags: the same settings, the same game, the same move.
    import threading

    import gtp
    from go import Go_Match
    from go.Go_Board import BLACK, format_vertex
    from go.Go_Game import DEFAULT_HISTORY, go_play_game
    from go.Go_Net import GoNet
    from go.Go_Play import search_agent
    from gui import Go_Gui

    torch.manual_seed(3)
    model = GoNet(5, filters=8, blocks=1).eval()
    record = ["C3", "C2", "D2", "B3"]
    gtp_args = gtp.parse_args(["--sims", "24"])
    engine = gtp.Engine(model, gtp.agent_from_args(model, gtp_args, rng=np.random.default_rng(0)), None)
    for index, vertex in enumerate(record):
        gtp.handle(engine, "play", ["bw"[index % 2], vertex])
    state = {key: value.copy() for key, value in engine.state.items()}
    moves = {"gtp": gtp.handle(engine, "genmove", ["b"])}

    match_args = Go_Match.parse_match_args(["--game", "go5", "--opponent", "gnugo", "--sims", "24"])
    game = Go_Match.match_game(match_args, model.history, match_args.opponent)
    assert game == engine.game  # the rules of real play, no self-play cap
    agent = gtp.agent_from_args(model, match_args, sample_moves=match_args.sample_moves, rng=np.random.default_rng(0))
    agent.new_game(game, BLACK)
    moves["evaluate"] = format_vertex(agent.genmove(state), 5)

    gui_args = Go_Gui.parse_args(["--sims", "24"])
    gui_game = go_play_game(gui_args.game, gui_args.komi, DEFAULT_HISTORY)  # GoApp._game's
    player = search_agent(model, gui_args.sims, gui_args.c_puct, None, gui_args.seed, gui_args.symmetric)(
        gui_game, threading.Event()
    )
    player.new_game(gui_game, BLACK)
    moves["gui"] = format_vertex(player.genmove(state), 5)
    settings = {(p.simulations, p.c_puct, p.symmetric, p.sample_moves) for p in (engine.agent, agent, player)}
    assert len(settings) == 1 and moves["gtp"] == moves["evaluate"] == moves["gui"], moves


@pytest.mark.slow
def test_no_input_kills_the_engine_and_numbers_are_ascii(go5_checkpoint):
    lines = [
        "1 name".encode(),
        "² name".encode(),  # isdigit() but no int: a command named "²"
        b"9" * 5000 + b" name",  # int() refuses over 4,300 digits
        b"\xff\xfe name",  # not UTF-8
        "play b c٣".encode(),
        "komi ٢٤".encode(),
        b"komi 1_000",
        b"komi 1e400",
        b"komi -1e300",
        b"boardsize 5555555555555555555555",
        b"komi 6.5",
        b"2 name",
    ]
    result = subprocess.run(
        [sys.executable, str(REPO / "gtp.py"), "--checkpoint", go5_checkpoint, "--sims", "2"],
        input=b"\n".join(lines) + b"\n",
        capture_output=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    out = replies(result.stdout.decode())
    assert out[0] == "=1 rubik-alphazero-go" and out[-1] == "=2 rubik-alphazero-go" and out[-2] == "="
    assert out[1] == "? unknown command" and out[2].startswith("? command id of 5000 digits")
    assert out[3] == "? unknown command" and out[4].startswith("? syntax error: 'c٣' is not a point")
    assert out[5:9] == ["? komi needs one number"] * 4 and out[9] == "? boardsize needs one integer"
    assert len(out) == len(lines)

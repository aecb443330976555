"""gtp.py end to end through a subprocess: every command, `? message` on bad input with the engine going
on, undo, scoring, and bad flags or model files refused with one sentence and exit status 2."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import REPO, make_checkpoint
from go import Agent_Flags
from go.Go_Net import GoNet
from go.GTP_Client import GNUGO_PATH
from run.Checkpoints import save_checkpoint


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
        (["--seconds-per-move", "0"], "--seconds-per-move: must be positive"),
        (["--seconds-per-move", "1e9"], "--seconds-per-move: must be at most 86400"),
        (["--resign-threshold", "2"], "--resign-threshold: must be a value between -1 and 1"),
        (["--resign-threshold", "nan"], "--resign-threshold"),
    ):
        result = run_gtp(args)
        assert result.returncode == 2 and words in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""


def test_help_names_the_commands():
    result = run_gtp(["--help"])
    assert result.returncode == 0 and "final_score" in result.stdout and "--sims" in result.stdout
    for words in (
        "kata-analyze",
        "time_settings",
        "final_status_list",
        "loadsgf",
        "--seconds-per-move",
        "--resign-threshold",
    ):
        assert words in result.stdout


def test_the_agents_simulations_default_by_board_and_yield_to_the_flag():
    import gtp
    from go import Go_Match
    from gui import Go_Gui

    assert gtp.parse_args([]).sims == Agent_Flags.DEFAULT_SIMULATIONS
    large, small = Agent_Flags.LARGE_BOARD_SIMULATIONS, Agent_Flags.DEFAULT_SIMULATIONS
    assert gtp.parse_args(["--game", "go7"]).sims == large > small
    assert gtp.parse_args(["--game", "go7", "--sims", "5"]).sims == 5
    assert Go_Match.parse_match_args(["--game", "go7"]).sims == Agent_Flags.LARGE_BOARD_SIMULATIONS
    assert Go_Match.parse_show_args(["--game", "go5"]).sims == Agent_Flags.DEFAULT_SIMULATIONS
    assert Go_Gui.parse_args(["--game", "go9"]).sims == Agent_Flags.LARGE_BOARD_SIMULATIONS


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
    engine = gtp.Engine(model, Agent_Flags.agent_from_args(model, args), None)
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
    engine = gtp.Engine(model, Agent_Flags.agent_from_args(model, gtp_args, rng=np.random.default_rng(0)), None)
    for index, vertex in enumerate(record):
        gtp.handle(engine, "play", ["bw"[index % 2], vertex])
    state = {key: value.copy() for key, value in engine.state.items()}
    moves = {"gtp": gtp.handle(engine, "genmove", ["b"])}

    match_args = Go_Match.parse_match_args(["--game", "go5", "--opponent", "gnugo", "--sims", "24"])
    game = Go_Match.match_game(match_args, model.game_options, match_args.opponent)
    assert game == engine.game  # the rules of real play, no self-play cap
    rng = np.random.default_rng(0)
    agent = Agent_Flags.agent_from_args(model, match_args, sample_moves=match_args.sample_moves, rng=rng)
    agent.new_game(game, BLACK)
    moves["evaluate"] = format_vertex(agent.genmove(state), 5)

    gui_args = Go_Gui.parse_args(["--sims", "24"])
    gui_game = go_play_game(gui_args.game, gui_args.komi, DEFAULT_HISTORY)  # GoApp._game's
    player = search_agent(
        model, gui_args.sims, gui_args.c_puct, None, gui_args.seed, gui_args.symmetric, gui_args.precision
    )(gui_game, threading.Event())
    player.new_game(gui_game, BLACK)
    moves["gui"] = format_vertex(player.genmove(state), 5)
    players = (engine.agent, agent, player)
    settings = {(p.simulations, p.c_puct, p.symmetric, p.sample_moves, p.precision) for p in players}
    assert {p.search.evaluator.precision for p in players[:2]} == {"fp32"}  # the same games on every CPU
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


# --------------------------------------------------------------------------- streaming, clocks, controllers
class Engine:
    """``python gtp.py ...`` as a controller sees it, line by line; killed after ``limit`` seconds whatever
    happens (a read then ends the test with an assertion, never a hang)."""

    def __init__(self, args: list[str], limit: float = 300):
        self.process = subprocess.Popen(
            [sys.executable, str(REPO / "gtp.py"), *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
        )  # fmt: skip
        self.watchdog = threading.Timer(limit, self.process.kill)
        self.watchdog.start()

    def send(self, line: str) -> None:
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def line(self) -> str:
        text = self.process.stdout.readline()
        assert text, "the engine closed its output"
        return text.rstrip("\n")

    def reply(self) -> list[str]:
        """The lines of the next response, up to its empty line."""
        lines = []
        while (text := self.line()) != "" or not lines:
            lines.append(text)
        return lines

    def close(self) -> None:
        self.watchdog.cancel()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


@pytest.mark.slow
def test_analysis_streams_through_a_subprocess_until_the_next_command(go5_checkpoint):
    from test_gtp_commands import info_fields

    engine = Engine(["--checkpoint", go5_checkpoint, "--seed", "1"])
    try:
        engine.send("play b C3")
        assert engine.reply() == ["="]
        engine.send("1 kata-analyze w 10")
        assert engine.line() == "=1"
        lines = [engine.line() for _ in range(3)]
        engine.send("2 name")
        while (text := engine.line()) != "":  # lines already on their way, then the empty line that ends it
            lines.append(text)
        assert engine.reply() == ["=2 rubik-alphazero-go"]
        totals = []
        for line in lines:
            moves = info_fields(line)
            assert moves and all("." in m["winrate"] and m["pv"][0] == m["move"] for m in moves), line
            totals.append(sum(int(m["visits"]) for m in moves))
        assert totals == sorted(totals) and totals[-1] > totals[0]  # the search went on between lines
        engine.send("3 lz-analyze interval 5 maxmoves 1")
        assert engine.line() == "=3"
        (only,) = info_fields(engine.line())
        assert only["winrate"].isdigit() and only["order"] == "0"
        engine.send("")  # an empty line ends an analysis too
        while engine.line() != "":
            pass
        engine.send("4 protocol_version")
        assert engine.reply() == ["=4 2"]  # nothing streams after the end
        engine.send("5 kata-genmove_analyze b 5")
        lines = engine.reply()
        assert lines[0] == "=5" and lines[-1].startswith("play ") and len(lines) >= 3
        assert all(line.startswith("info ") for line in lines[1:-1])
        engine.send("quit")
        assert engine.reply() == ["="]
        assert engine.process.wait(timeout=30) == 0
    finally:
        engine.close()


@pytest.mark.slow
@pytest.mark.skipif(not os.access(GNUGO_PATH, os.X_OK), reason="GNU Go is not installed")
def test_a_game_against_gnugo_under_time_settings_0_5_1_keeps_every_move_within_its_clock():
    # The shipped model against GNU Go level 10, both told `time_settings 0 5 1` (5 seconds a move) and, as a
    # server does, `time_left` before each move: the agent uses its byo-yomi (a move searches about 4.25 s)
    # and answers within 5 s every time.
    from go.Go_Board import BLACK, format_vertex, parse_vertex
    from go.Go_Game import go_play_game
    from go.GTP_Client import GTPClient, gnugo_command

    game = go_play_game(5)
    state = game.initial_state(1)
    ours, gnugo = Engine([]), GTPClient(gnugo_command(10), timeout=30)
    try:
        for command in ("boardsize 5", "komi 24.5", "clear_board", "time_settings 0 5 1"):
            engine_reply = (ours.send(command), ours.reply())[1]
            assert engine_reply == ["="] and gnugo.send(command) == ""
        spent = []
        for _ in range(3):
            ours.send("time_left black 5 1")
            assert ours.reply() == ["="]
            start = time.monotonic()
            ours.send("genmove black")
            (reply,) = ours.reply()
            spent.append(time.monotonic() - start)
            move = parse_vertex(reply[2:], 5)
            assert game.legal_mask(state)[0, move]
            state = game.step(state, np.array([move]))
            gnugo.play(BLACK, move, 5)
            answer = gnugo.genmove(-BLACK, 5, game.legal_mask(state)[0])
            if answer is None:  # GNU Go resigned
                break
            ours.send(f"play white {format_vertex(answer, 5)}")
            assert ours.reply() == ["="]
            state = game.step(state, np.array([answer]))
        print("seconds a move under time_settings 0 5 1:", [round(s, 2) for s in spent])
        assert max(spent) < 5.0 and min(spent) > 3.0, spent  # within the clock, and the time was used
    finally:
        ours.close()
        gnugo.close()


SABAKI_MODULES = Path(os.environ.get("SABAKI_GTP_MODULES", Path.home() / ".cache" / "sabaki-gtp" / "node_modules"))
SABAKI_GTP = "@sabaki/gtp@3.0.0"  # Sabaki's own GTP library, the version Sabaki 0.52 ships with


@pytest.fixture(scope="module")
def sabaki_gtp() -> dict:
    """The environment that lets node find ``@sabaki/gtp``: installed once into ``SABAKI_MODULES``' folder
    with npm when it is missing; the test is skipped, saying why, when node or the package is not there."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (the Sabaki GTP library test needs node and npm)")
    env = {**os.environ, "NODE_PATH": str(SABAKI_MODULES)}
    found = lambda: subprocess.run([node, "-e", "require.resolve('@sabaki/gtp')"], env=env).returncode == 0  # noqa: E731
    if not found() and shutil.which("npm") is not None:
        install = subprocess.run(
            ["npm", "install", "--prefix", str(SABAKI_MODULES.parent), "--no-audit", "--no-fund", SABAKI_GTP],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        if install.returncode != 0:
            pytest.skip(f"{SABAKI_GTP} could not be installed with npm: {install.stderr.strip()[-200:]}")
    if not found():
        pytest.skip(f"{SABAKI_GTP} is not installed: npm install --prefix {SABAKI_MODULES.parent} {SABAKI_GTP}")
    return env


@pytest.mark.slow
def test_sabakis_own_gtp_library_runs_an_analysis_and_a_game(go5_checkpoint, sabaki_gtp):
    from go.Go_Board import BLACK, WHITE, parse_vertex
    from go.Go_Game import go_play_game
    from test_gtp_commands import info_fields

    result = subprocess.run(
        ["node", str(REPO / "tests" / "sabaki_gtp_session.js"), sys.executable, str(REPO / "gtp.py"),
         "--checkpoint", go5_checkpoint, "--sims", "32"],
        capture_output=True, text=True, timeout=300, env=sabaki_gtp,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    session = json.loads(result.stdout)
    assert {"kata-analyze", "lz-analyze", "kata-genmove_analyze"} <= set(session["commands"])
    analysis = session["analysis"]
    assert len(analysis["infos"]) >= 3 and not analysis["error"] and analysis["abort"] == "2"
    assert analysis["linesAfterStop"] == 0
    for line in analysis["infos"]:
        assert all(0 <= float(m["winrate"]) <= 1 and "." in m["winrate"] for m in info_fields(line))
    assert [(g["name"], g["error"]) for g in session["game"]] == [
        ("genmove", False), ("kata-genmove_analyze", False), ("genmove", False)
    ]  # fmt: skip
    assert session["game"][1]["infos"] >= 1
    game = go_play_game(5)
    state = game.initial_state(1)
    for colour, entry in zip((BLACK, WHITE, BLACK, WHITE), session["history"]):  # legal, as the tracker saw them
        assert entry["name"] == "play" and entry["args"][0] == "BW"[colour == WHITE]
        move = parse_vertex(entry["args"][1], 5)
        assert game.legal_mask(state)[0, move]
        state = game.step(state, np.array([move]))
    assert [entry["args"][1] for entry in session["history"][1:]] == [g["move"].upper() for g in session["game"]]
    assert session["finalScore"][:2] in ("B+", "W+") or session["finalScore"] == "0"

"""gtp.py's commands beyond the basics, in process (a small random network): analysis lines and their
arguments, the clock and timed moves, handicap, loadsgf/printsgf, final status and cleanup, resignation, and
bad arguments answered with one bounded line."""

from __future__ import annotations

import io
import time

import numpy as np
import pytest
import torch

import gtp
from go import Agent_Flags, GTP_Analysis
from go.Go_Board import BLACK, WHITE, parse_vertex
from go.Go_Net import GoNet
from go.GTP_Time import Clock, TimeSettings, moves_left, usable
from gtp import chain_status
from MCTS_Core import MCTS
from run.Input_Echo import MAX_SHOWN_CHARS


def make_engine(size: int = 5, flags: tuple = ("--sims", "16"), **kw) -> gtp.Engine:
    torch.manual_seed(0)
    model = GoNet(size, filters=8, blocks=1).eval()
    args = gtp.parse_args(["--game", f"go{size}", *flags])
    return gtp.Engine(model, Agent_Flags.agent_from_args(model, args, rng=np.random.default_rng(0)), None, **kw)


def session(engine: gtp.Engine, text: str, pause: float = 0.0) -> list[str]:
    """The replies (without their empty lines) to the command lines of ``text``, each line after ``pause``
    seconds (an analysis runs until the next line comes)."""

    def lines():
        for line in io.StringIO(text):
            time.sleep(pause)
            yield line

    out = io.StringIO()
    gtp.serve(engine, gtp.Commands(lines()), out)
    return [block for block in out.getvalue().split("\n\n") if block]


def ask(engine: gtp.Engine, command: str) -> str:
    (reply,) = session(engine, command + "\n")
    return reply


# --------------------------------------------------------------------------- commands known
NEW = (
    "lz-analyze kata-analyze analyze lz-genmove_analyze kata-genmove_analyze genmove_analyze time_settings "
    "kgs-time_settings time_left final_status_list kgs-genmove_cleanup fixed_handicap place_free_handicap "
    "set_free_handicap loadsgf printsgf"
).split()


def test_the_new_commands_are_listed_and_known():
    engine = make_engine()
    listed = ask(engine, "list_commands")[2:].split("\n")
    assert set(NEW) <= set(listed) and len(listed) == len(set(listed))
    assert all(ask(engine, f"known_command {name}") == "= true" for name in NEW)


# --------------------------------------------------------------------------- analysis
def test_analysis_arguments_parse_as_leela_and_katago_write_them():
    parse = GTP_Analysis.parse_request
    assert parse([], "kata") == GTP_Analysis.Request("kata", None, 1.0, 0, None)
    assert parse(["b", "50"], "lz") == GTP_Analysis.Request("lz", BLACK, 0.5, 0, None)
    assert parse(["W", "interval", "10", "minmoves", "3", "maxmoves", "5"], "kata").colour == WHITE
    assert parse(["10", "maxmoves", "2", "ownership", "false"], "kata") == GTP_Analysis.Request("kata", None, 0.1, 0, 2)
    assert parse(["b", "0"], "kata").interval is None  # interval 0: no lines while searching
    for args, words in (
        (["b", "10", "minmoves"], "has no value"),
        (["b", "10", "allow", "x"], "unknown option 'allow'"),
        (["b", "10", "ownership", "true"], "ownership head"),
        (["b", "interval", "-5"], "interval must be between 0 and"),
        (["b", "interval", "9" * 5000], "interval must be an integer"),
        (["b", "x" * 10_000], "'" + "x" * MAX_SHOWN_CHARS + "'..."),
    ):
        with pytest.raises(ValueError, match=words) as caught:
            parse(args, "kata")
        assert len(str(caught.value)) < 120
    with pytest.raises(ValueError, match="colour"):
        parse(["50"], "kata", genmove=True)


def info_fields(line: str) -> list[dict]:
    """The moves of one ``info`` line: their key-value pairs, ``pv`` as a list (checked to be last)."""
    moves = []
    for chunk in line.split("info ")[1:]:
        head, pv = chunk.split(" pv ")
        words = head.split()
        moves.append(dict(zip(words[::2], words[1::2])) | {"pv": pv.split()})
    return moves


def test_info_lines_hold_every_candidate_in_each_format_and_order_0_is_the_move_played():
    engine = make_engine(flags=("--sims", "60"))
    engine.play(BLACK, parse_vertex("C3", 5))
    state, mask, tree = engine.search(WHITE)
    request = GTP_Analysis.parse_request(["w", "10"], "kata")
    kata = info_fields(GTP_Analysis.info_line(tree, engine.agent.c_puct, request))
    visits = tree.root_stats()[0, 0]
    assert (
        [m["order"] for m in kata]
        == [str(i) for i in range(len(kata))]
        == [str(i) for i in range(int((visits > 0).sum()))]
    )
    assert sum(int(m["visits"]) for m in kata) == visits.sum() == 59
    assert [int(m["visits"]) for m in kata] == sorted((int(m["visits"]) for m in kata), reverse=True)
    assert kata[0]["move"] == gtp.format_vertex(engine.agent.choose(state, tree.root_stats()[0], mask), 5)
    for move in kata:
        assert "." in move["winrate"] and "." in move["prior"] and "." in move["lcb"]  # Sabaki: a float
        assert 0 <= float(move["lcb"]) <= float(move["winrate"]) <= 1 and move["pv"][0] == move["move"]
        assert "scoreLead" not in move  # the network has no score head
    lz = info_fields(GTP_Analysis.info_line(tree, engine.agent.c_puct, GTP_Analysis.Request("lz")))
    assert [m["move"] for m in lz] == [m["move"] for m in kata]
    assert all(m["winrate"].isdigit() and int(m["winrate"]) <= 10000 for m in lz)
    assert abs(int(lz[0]["winrate"]) / 10000 - float(kata[0]["winrate"])) <= 0.0001
    assert sum(int(m["prior"]) for m in lz) <= 10000 + len(lz)
    legal = int(mask.sum())
    everything = info_fields(GTP_Analysis.info_line(tree, 1.0, GTP_Analysis.Request("kata", min_moves=99)))
    assert len(everything) == legal and [m["move"] for m in everything[: len(kata)]] == [m["move"] for m in kata]
    assert len(info_fields(GTP_Analysis.info_line(tree, 1.0, GTP_Analysis.Request("kata", max_moves=2)))) == 2


def test_score_lead_appears_when_the_agent_can_estimate_one(monkeypatch):
    engine = make_engine()
    monkeypatch.setattr(engine.agent, "score_leads", lambda tree: np.arange(26, dtype=float) + 0.5)
    replies = session(engine, "kata-analyze b 5\nlz-analyze b 5\nname\n", pause=0.3)
    kata = info_fields(replies[0].split("\n")[1])
    assert all(m["scoreLead"] == m["scoreMean"] == f"{parse_vertex(m['move'], 5) + 0.5:.3f}" for m in kata)
    assert "scoreLead" not in replies[1]  # Leela's format has no score


def test_a_score_head_gives_kata_analyze_its_score_lead_and_the_komi_reaches_the_network():
    """With a network that has a score head and a komi plane, every kata-analyze line carries scoreLead (the
    score head's margin after the move, from the analysed colour's side: ``Arena.score_leads``), and the
    controller's ``komi`` is the komi in the network's input."""
    torch.manual_seed(0)
    model = GoNet(5, 18, filters=8, blocks=1, score_heads=True, score_utility=0.1).eval()
    args = gtp.parse_args(["--game", "go5", "--sims", "16"])
    engine = gtp.Engine(model, Agent_Flags.agent_from_args(model, args, rng=np.random.default_rng(0)), None)
    replies = session(engine, "komi 6.5\nkata-analyze b 5\nname\n", pause=0.3)
    assert replies[0] == "=" and engine.game.eval_input(engine.state)[0, -2] == 13  # half points
    kata = info_fields(replies[1].split("\n")[1])
    leads = engine.agent.score_leads(engine.search(BLACK)[2])
    for move in kata:
        assert move["scoreLead"] == move["scoreMean"] == f"{leads[parse_vertex(move['move'], 5)]:.3f}"


def test_an_analysis_stops_at_the_next_command_and_answers_it():
    engine = make_engine()
    replies = session(engine, "2 kata-analyze b 5\n3 name\n4 genmove_analyze w 1\nlz-genmove_analyze\nquit\n", 0.3)
    lines = replies[0].split("\n")
    assert lines[0] == "=2" and len(lines) > 2 and all(line.startswith("info ") for line in lines[1:])
    assert replies[1] == "=3 rubik-alphazero-go"
    lines = replies[2].split("\n")
    assert lines[0] == "=4" and lines[-1].startswith("play ") and all(x.startswith("info ") for x in lines[1:-1])
    assert len(engine.moves) == 1 and engine.moves[0][0] == WHITE  # genmove_analyze played its move
    assert replies[3] == "? syntax error: a colour is needed (black or white)" and replies[4] == "="


# --------------------------------------------------------------------------- time
def test_time_settings_read_as_the_gtp_spec_and_kgs_say():
    assert TimeSettings.from_gtp(0, 5, 1) == TimeSettings("canadian", 0, 5, 1)
    assert TimeSettings.from_gtp(300, 0, 0) == TimeSettings("absolute", 300)
    assert TimeSettings.from_gtp(300, 5, 0).kind == "none"  # the spec's "no time limits"
    kgs = lambda *words: TimeSettings.from_kgs(list(words), float, int)  # noqa: E731
    assert kgs("none").kind == "none" and kgs("absolute", "60") == TimeSettings("absolute", 60)
    assert kgs("byoyomi", "60", "10", "3") == TimeSettings("byoyomi", 60, 10, 3)
    assert kgs("canadian", "60", "10", "5") == TimeSettings("canadian", 60, 10, 5)
    for bad in ([], ["fischer", "1"], ["absolute"], ["byoyomi", "1", "2"]):
        with pytest.raises(ValueError):
            kgs(*bad)


def test_the_clock_gives_each_move_a_share_and_keeps_a_margin():
    clock = Clock()
    assert clock.budget(BLACK, 25, 0) is None  # no clock: --sims decides
    clock.set(TimeSettings.from_gtp(0, 5, 1))
    assert clock.budget(BLACK, 25, 0) == pytest.approx(usable(5)) == pytest.approx(4.25)
    clock.spend(BLACK, 4.3)
    assert clock.budget(BLACK, 25, 2) == pytest.approx(4.25)  # a Canadian period of one stone starts afresh
    clock.set(TimeSettings("absolute", 100))
    assert clock.budget(WHITE, 25, 0) == pytest.approx(usable(100 / moves_left(25, 0)))
    clock.spend(WHITE, 90)
    assert clock.budget(WHITE, 25, 40) == pytest.approx(usable(10 / moves_left(25, 40)))
    clock.time_left(WHITE, 0.1, 0)
    assert clock.budget(WHITE, 25, 40) == 0.0
    clock.set(TimeSettings("canadian", 10, 20, 5))
    assert clock.budget(BLACK, 25, 0) == pytest.approx(usable(10 / moves_left(25, 0) + 4))
    clock.time_left(BLACK, 6, 2)  # in byo-yomi: 6 seconds for 2 stones
    assert clock.budget(BLACK, 25, 30) == pytest.approx(usable(3))
    clock.set(TimeSettings("byoyomi", 0, 10, 3))
    assert clock.budget(BLACK, 25, 0) == pytest.approx(usable(10))
    clock.spend(BLACK, 25)  # two periods overrun: one left
    assert clock.accounts[BLACK].count == 1 and clock.budget(BLACK, 25, 2) == pytest.approx(usable(10))


@pytest.mark.parametrize(
    "commands, per_move, most",
    [
        (["time_settings 0 1 1"], None, usable(1)),
        (["kgs-time_settings byoyomi 0 1 5"], None, usable(1)),
        ([], 0.4, 0.4),
        (["time_settings 0 1 1"], 0.3, 0.3),  # the flag caps the clock's share
    ],
)
def test_a_timed_move_searches_until_its_time_and_no_longer(monkeypatch, commands, per_move, most):
    """Under a fake clock that only simulations advance (``STEP`` seconds each), the move searches until its
    budget less the reply's margin and stops at the first simulation past it: no wall clock is read."""
    step, now = 0.01, [1000.0]
    real = MCTS.simulate

    def simulate(self, tree):
        now[0] += step
        return real(self, tree)

    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    monkeypatch.setattr(MCTS, "simulate", simulate)
    engine = make_engine(seconds_per_move=per_move)
    for command in commands:
        assert ask(engine, command) == "="
    start = now[0]
    assert ask(engine, "genmove b")[:2] == "= "
    spent, budget = now[0] - start, most - gtp.REPLY_SECONDS
    assert budget <= spent < budget + step + 1e-9, (spent, budget)  # its time, and one simulation more at most


def test_a_timed_search_is_capped_by_memory_or_by_sims_given_and_an_untimed_one_by_sims(monkeypatch):
    asked = []
    for flags, per_move, expected in (
        (("--sims", "16"), None, None),  # no clock: the agent's own --sims
        (("--sims", "16"), 0.5, 16),  # --sims given caps a timed search
        ((), 0.5, "memory"),  # default --sims: as many as the tree's memory allows
    ):
        args = gtp.parse_args(list(flags))
        engine = make_engine(flags=flags, seconds_per_move=per_move, max_simulations=args.max_simulations)
        monkeypatch.setattr(engine.agent, "think", lambda *a, simulations=None, **kw: asked.append(simulations))
        engine.search(BLACK)
        limit = GTP_Analysis.node_limit(engine.game, engine._ready_for(BLACK), 100_000) - 1
        assert asked[-1] == (limit if expected == "memory" else expected) and limit > 7000


def test_time_commands_refuse_bad_arguments_in_one_line():
    engine = make_engine()
    for command, words in (
        ("time_settings 1 2", "time_settings needs"),
        ("time_settings -1 2 3", "'-1' is no time"),
        ("time_settings 1e400 5 1", "is no time"),
        ("time_settings 1 5 1.5", "stones must be an integer"),
        ("time_settings 1 5 " + "9" * 5000, "stones must be an integer"),
        ("kgs-time_settings fischer 1 2", "kgs-time_settings needs"),
        ("time_left purple 5 1", "is not a colour"),
        ("time_left b 5", "time_left needs"),
    ):
        reply = ask(engine, command)
        assert reply.startswith("? ") and words in reply and "\n" not in reply and "Exceeds" not in reply, reply


# --------------------------------------------------------------------------- handicap
def test_fixed_handicap_follows_the_gtp_layouts_and_errors():
    engine = make_engine(7)
    assert ask(engine, "fixed_handicap 4") == "= C3 E5 C5 E3"
    assert engine.state["to_play"][0] == WHITE and ask(engine, "undo") == "? cannot undo"
    assert ask(engine, "fixed_handicap 2") == "? board not empty"
    assert ask(engine, "clear_board") == "=" and ask(engine, "fixed_handicap 5") == "? invalid number of stones"
    assert ask(engine, "fixed_handicap 1") == "? invalid number of stones"
    assert ask(engine, "fixed_handicap two").startswith("? syntax error")
    assert ask(make_engine(5), "fixed_handicap 2") == "? invalid number of stones"  # none below 7x7
    from go.GTP_Client import fixed_handicap_points

    nineteen = [" ".join(gtp.format_vertex(p, 19) for p in fixed_handicap_points(n, 19)) for n in (2, 5, 9)]
    assert nineteen == ["D4 Q16", "D4 Q16 D16 Q4 K10", "D4 Q16 D16 Q4 D10 Q10 K4 K16 K10"]


def test_free_handicap_is_placed_by_the_agent_or_as_told():
    engine = make_engine()
    reply = ask(engine, "place_free_handicap 3")
    points = [parse_vertex(v, 5) for v in reply[2:].split()]
    assert len(set(points)) == 3 and (engine.state["board"][0][points] == BLACK).all()
    assert engine.state["board"][0].sum() == 3 and engine.state["to_play"][0] == WHITE
    assert ask(engine, "set_free_handicap A1 B1") == "? board not empty"
    assert ask(engine, "clear_board") == "="
    for bad in ("A1", "A1 A1", "A1 pass", ""):
        assert ask(engine, f"set_free_handicap {bad}").startswith("? bad vertex list"), bad
    assert ask(engine, "set_free_handicap A1 Z9").startswith("? syntax error")
    assert ask(engine, "place_free_handicap 1") == "? invalid number of stones"
    assert ask(engine, "place_free_handicap 25") == "? invalid number of stones"
    assert ask(engine, "set_free_handicap a1 C3 e5") == "=" and engine.state["board"][0].sum() == 3
    assert ask(engine, "genmove w")[:2] == "= " and engine.moves[0][0] == WHITE


# --------------------------------------------------------------------------- SGF
def test_printsgf_writes_what_loadsgf_reads_back(tmp_path):
    from sgfmill import sgf

    engine = make_engine()
    session(engine, "komi 6.5\nset_free_handicap B2 D4\nplay w C3\nplay w C4\nplay b pass\n")
    text = ask(engine, "printsgf")[2:]
    game = sgf.Sgf_game.from_string(text)
    assert game.get_komi() == 6.5 and game.get_handicap() == 2 and game.get_size() == 5
    assert [node.get_move() for node in game.get_main_sequence()[1:]] == [("w", (2, 2)), ("w", (3, 2)), ("b", None)]
    path = tmp_path / "game.sgf"
    assert ask(engine, f"printsgf {path}") == "=" and path.read_text() == text + "\n"
    other = make_engine()
    assert ask(other, f"loadsgf {path}") == "=" and other.game.komi == 6.5
    assert np.array_equal(other.state["board"], engine.state["board"]) and other.moves == engine.moves
    assert ask(other, "printsgf") == ask(engine, "printsgf")
    assert ask(other, f"loadsgf {path} 2") == "=" and len(other.moves) == 1 and other.handicap == 2
    assert ask(other, "undo") == "=" and ask(other, "undo") == "? cannot undo"  # handicap stones stay
    session(engine, "play w pass\n")  # two passes: the game is over and scored
    assert "RE[B+" in ask(engine, "printsgf") or "RE[W+" in ask(engine, "printsgf")


def test_loadsgf_refuses_what_it_cannot_play_and_keeps_the_game(tmp_path):
    engine = make_engine()
    session(engine, "play b C3\n")
    files = {
        "seven.sgf": "(;GM[1]FF[4]SZ[7];B[cc])",
        "garbage.sgf": "not a game",
        "illegal.sgf": "(;GM[1]FF[4]SZ[5];B[cc];W[cc])",
        "setup.sgf": "(;GM[1]FF[4]SZ[5];B[cc];AB[aa])",
        "komi.sgf": "(;GM[1]FF[4]SZ[5]KM[1e9])",
        "big.sgf": "(;SZ[5]C[" + "x" * gtp.MAX_SGF_BYTES + "])",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    for command, words in (
        (f"loadsgf {tmp_path / 'seven.sgf'}", "unacceptable size"),
        (f"loadsgf {tmp_path / 'garbage.sgf'}", "cannot load file"),
        (f"loadsgf {tmp_path / 'illegal.sgf'}", "move 2 is illegal"),
        (f"loadsgf {tmp_path / 'setup.sgf'}", "set up after the first position"),
        (f"loadsgf {tmp_path / 'komi.sgf'}", "komi"),
        (f"loadsgf {tmp_path / 'big.sgf'}", "larger than"),
        (f"loadsgf {tmp_path / 'none.sgf'}", "No such file"),
        (f"loadsgf {tmp_path / 'garbage.sgf'} 0", "move number must be between"),
        ("loadsgf", "loadsgf needs"),
        (f"printsgf {tmp_path / 'no' / 'such.sgf'}", "no such folder"),
        (f"printsgf {tmp_path}", "cannot write file"),
    ):
        reply = ask(engine, command)
        assert reply.startswith("? ") and words in reply and "\n" not in reply, (command, reply)
    assert engine.moves == [(BLACK, parse_vertex("C3", 5))] and engine.game.komi == 24.5


# --------------------------------------------------------------------------- the end of a game
class ScriptedAgent:
    """A stand-in for the agent in a playout: plays ``moves`` in turn, then passes."""

    def __init__(self, moves):
        self.moves = list(moves)

    def new_game(self, game, colour):
        self.game = game

    def think(self, state, mask, simulations=None):
        return self

    def root_stats(self):
        return np.zeros((1, 3, self.game.num_actions))

    def choose(self, state, stats, mask):
        return self.moves.pop(0) if self.moves else self.game.num_actions - 1


def board(*rows: str) -> np.ndarray:
    from go.Go_Board import board_from_text

    return board_from_text(list(rows))


def test_a_chain_is_dead_unless_it_stands_at_the_end_and_in_seki_beside_a_shared_point():
    from go.Go_Board import GoBoard

    rules = GoBoard(5)
    start = board("XX.O.", "OXXO.", ".XOO.", "XX.O.", ".XO..")
    end = board("XX.O.", ".XXO.", "XXOO.", "XX.O.", ".X.O.")  # O A4 and O C1 taken, C5 and C2 shared
    status = {key: sorted(sorted(chain) for chain in chains) for key, chains in chain_status(rules, start, end).items()}
    points = lambda *vs: sorted(parse_vertex(v, 5) for v in vs)  # noqa: E731
    assert status["dead"] == sorted([points("A4"), points("C1")])
    assert sorted(status["seki"]) == sorted([points("A5", "B5", "B4", "C4", "B3", "A2", "B2", "B1"),
                                             points("D5", "D4", "C3", "D3", "D2")])  # fmt: skip
    assert status["alive"] == []
    alone = board(".....", ".....", "..X..", ".....", ".....")
    assert chain_status(rules, alone, alone) == {"alive": [[12]], "dead": [], "seki": []}


def test_final_status_list_plays_the_position_out(monkeypatch):
    engine = make_engine()
    # White A5 is alone in Black's corner; Black captures it in the playout (B5, then A4 after White passes).
    for colour, vertex in ((BLACK, "C3"), (WHITE, "A5"), (BLACK, "D3"), (WHITE, "E1")):
        engine.play(colour, parse_vertex(vertex, 5))
    engine.agent = ScriptedAgent([parse_vertex("B5", 5), 25, parse_vertex("A4", 5)])
    assert ask(engine, "final_status_list dead") == "= A5"
    standing = ask(engine, "final_status_list alive")[2:].split("\n") + ask(engine, "final_status_list SEKI")[2:].split(
        "\n"
    )
    assert sorted(filter(None, standing)) == ["C3 D3", "E1"]
    assert ask(engine, "final_status_list x").startswith("? final_status_list needs")
    assert len(engine.moves) == 4  # the playout played nothing into the game


def test_cleanup_does_not_pass_while_dead_stones_of_the_other_colour_stand(monkeypatch):
    engine = make_engine()
    engine.play(BLACK, parse_vertex("C3", 5))
    engine.play(WHITE, parse_vertex("A5", 5))
    monkeypatch.setattr(engine, "final_status", lambda: {"dead": [[parse_vertex("A5", 5)]], "alive": [], "seki": []})
    mask = engine._cleanup_mask(BLACK)
    assert not mask[0, -1] and mask[0, :-1].sum() == 23
    assert engine._cleanup_mask(WHITE) is None  # no dead Black stones: every legal move, pass included
    assert ask(engine, "kgs-genmove_cleanup b") not in ("= pass", "= resign")


# --------------------------------------------------------------------------- resignation
def test_resignation_needs_the_threshold_and_several_moves_below_it():
    assert gtp.parse_args([]).resign_threshold is None  # off by default
    engine = make_engine(resign_threshold=1.0)  # every value is below 1: resign at the third move
    replies = session(engine, "genmove b\ngenmove b\ngenmove b\n")
    assert replies[:2] != ["= resign"] * 2 and replies[2] == "= resign" and len(engine.moves) == 2
    engine = make_engine(resign_threshold=-1.0)
    assert "resign" not in session(engine, "genmove b\ngenmove b\ngenmove b\n")


# --------------------------------------------------------------------------- bad input
def test_bad_arguments_get_one_bounded_line_and_no_int_digit_limit():
    engine = make_engine()
    huge, digits = "x" * 10_000_000, "9" * 5000
    commands = [
        f"play b {huge}",
        f"play {huge} c3",
        f"boardsize {digits}",
        f"komi {digits}",
        f"play b C{digits}",
        f"fixed_handicap {digits}",
        f"place_free_handicap {digits}",
        f"set_free_handicap A1 {huge}",
        f"time_left b {digits} 0",
        f"time_left b 5 {digits}",
        f"kata-analyze b {digits}",
        f"lz-analyze b interval {digits}",
        f"kata-genmove_analyze {huge}",
        f"loadsgf {huge}",
        f"loadsgf x.sgf {digits}",
        f"printsgf {huge}",
        f"final_status_list {huge}",
        f"kgs-time_settings byoyomi 1 2 {digits}",
        f"{huge}",
    ]
    replies = session(engine, "\n".join(commands) + "\nname\n")
    assert len(replies) == len(commands) + 1 and replies[-1] == "= rubik-alphazero-go"
    for command, reply in zip(commands, replies):
        assert reply.startswith("? ") and "\n" not in reply and len(reply) <= gtp.MAX_ERROR_CHARS + 2, (
            command[:30],
            reply,
        )
        assert "Exceeds the limit" not in reply and "int_max_str_digits" not in reply


def test_precision_reaches_every_agent_and_an_unknown_one_is_refused(capsys):
    # --precision (Agent_Flags): fp32 by default in gtp.py, evaluate.py --game goN and the GUI; bf16 reads
    # the network under autocast and still plays a legal move; a name outside Precision.PRECISIONS exits 2.
    from go import Go_Match
    from gui import Go_Gui

    parsers = (gtp.parse_args, lambda f: Go_Match.parse_match_args(["--game", "go5", *f]), Go_Gui.parse_args)
    for parse in parsers:
        assert parse([]).precision == "fp32" and parse(["--precision", "bf16"]).precision == "bf16"
        with pytest.raises(SystemExit) as refused:
            parse(["--precision", "fp16"])
        assert refused.value.code == 2 and "--precision" in capsys.readouterr().err
    engine = make_engine(flags=("--sims", "16", "--precision", "bf16"))
    legal = engine.game.legal_mask(engine.state)[0]
    move = gtp.handle(engine, "genmove", ["b"])
    assert engine.agent.search.evaluator.precision == "bf16"
    assert legal[parse_vertex(move, 5)]  # "pass" parses to the pass action

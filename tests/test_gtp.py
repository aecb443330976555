"""GTP_Client.py: the parsing helpers, every failure of a fake opponent as a GTPError, and GNU Go when installed."""

import os
import sys

import numpy as np
import pytest

from go.Go_Board import BLACK, WHITE, GoBoard, parse_vertex
from go.GTP_Client import (
    GNUGO_PATH,
    GTPClient,
    GTPError,
    clean_line,
    format_response,
    gnugo_command,
    parse_color,
    parse_command,
    parse_response,
)

FAKE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_gtp.py")
needs_gnugo = pytest.mark.skipif(not os.access(GNUGO_PATH, os.X_OK), reason="GNU Go is not installed")


def fake(fail: str, timeout: float = 5.0) -> GTPClient:
    return GTPClient([sys.executable, FAKE, "--fail", fail], timeout=timeout)


def test_command_lines_are_cleaned_and_split():
    assert clean_line("  play\tblack C3 # a comment\x01") == "play black C3"
    assert parse_command("12 Genmove white\n") == (12, "genmove", ["white"])
    assert parse_command("boardsize 5") == (None, "boardsize", ["5"])
    assert parse_command("# only a comment") is None and parse_command("   ") is None


def test_responses_are_formatted_and_parsed_back():
    assert format_response("C3", 7) == "=7 C3\n\n"
    assert format_response("unknown command", error=True) == "? unknown command\n\n"
    assert format_response() == "=\n\n"
    assert parse_response("=7 C3") == (True, "C3")
    assert parse_response("? illegal move") == (False, "illegal move")
    assert parse_response("= \n A B\n 1 .") == (True, "A B\n 1 .")
    for bad in ("", "C3", "=x C3"):
        with pytest.raises(GTPError, match="malformed"):
            parse_response(bad)


def test_colours_parse_and_reject_nonsense():
    assert parse_color("B") == parse_color("black") == BLACK
    assert parse_color("w") == parse_color("WHITE") == WHITE
    with pytest.raises(ValueError):
        parse_color("red")
    with pytest.raises(ValueError):
        gnugo_command(11)


def test_a_well_behaved_opponent_answers():
    with fake("none") as client:
        client.setup(5, 24.5)
        assert client.genmove(BLACK, 5) == 25  # pass


@pytest.mark.parametrize(
    "fail, reason", [("crash", "crash"), ("malformed", "malformed"), ("offboard", "malformed"), ("error", "error")]
)
def test_each_failure_of_genmove_is_a_gtp_error_with_its_reason(fail, reason):
    with fake(fail) as client:
        client.setup(5, 24.5)
        with pytest.raises(GTPError) as caught:
            client.genmove(BLACK, 5)
    assert caught.value.reason == reason


def test_an_illegal_reply_is_caught_with_the_legal_mask():
    rules = GoBoard(5)
    state = rules.step(rules.initial_state(1), [parse_vertex("C3", 5)])
    with fake("illegal") as client:
        client.play(BLACK, parse_vertex("C3", 5), 5)
        assert client.genmove(WHITE, 5) == parse_vertex("C3", 5)  # without a mask the client cannot know
        with pytest.raises(GTPError) as caught:
            client.genmove(WHITE, 5, legal=rules.legal_mask(state)[0])
    assert caught.value.reason == "illegal"


def test_a_hang_times_out_and_a_crashed_engine_stays_an_error():
    with fake("hang", timeout=0.5) as client:
        with pytest.raises(GTPError) as caught:
            client.genmove(BLACK, 5)
        assert caught.value.reason == "timeout"
        with pytest.raises(GTPError, match="failed before 'name'") as caught:
            client.send("name")  # a late reply must never answer a later command
        assert caught.value.reason == "timeout"
    with fake("crash") as client:
        with pytest.raises(GTPError):
            client.genmove(BLACK, 5)
        with pytest.raises(GTPError) as caught:
            client.send("name")
        assert caught.value.reason == "crash"


def test_an_engine_that_closes_its_output_and_runs_on_is_reported_as_such():
    with fake("closeout", timeout=30) as client:
        with pytest.raises(GTPError, match="closed its output and still runs") as caught:
            client.genmove(BLACK, 5)
        assert caught.value.reason == "crash"
    assert client.process.poll() is not None  # closing the client ended it


def test_a_missing_engine_is_a_gtp_error():
    with pytest.raises(GTPError, match="cannot start"):
        GTPClient(["/nonexistent/gnugo"])


@needs_gnugo
def test_gnugo_plays_a_legal_move_and_reports_its_stones():
    rules = GoBoard(5)
    state = rules.initial_state(1)
    with GTPClient(gnugo_command(1)) as client:
        client.setup(5, rules.komi)
        move = client.genmove(BLACK, 5, legal=rules.legal_mask(state)[0])
        state = rules.step(state, [move])
        assert np.array_equal(client.list_stones(5), state["board"][0])
        with pytest.raises(GTPError, match="error"):
            client.play(WHITE, move, 5)  # occupied


def test_command_ids_are_ascii_digits_of_bounded_length():
    assert parse_command("12 name") == (12, "name", [])
    assert parse_command("² name") == (None, "²", ["name"])  # no id: an unknown command, answered
    with pytest.raises(ValueError, match="command id of 5000 digits"):
        parse_command("9" * 5000 + " name")


@pytest.mark.parametrize("text", ["c٣", "C²", "C1_0", "C" + "1" * 5000, "", "C"])
def test_a_point_is_a_letter_and_ascii_digits(text):
    with pytest.raises(ValueError, match="is not a point"):
        parse_vertex(text, 5)

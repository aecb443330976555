"""gtp.py end to end through a subprocess: every command, `? message` on bad input with the engine going
on, undo, scoring, and bad flags or model files refused with one sentence and exit status 2."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from conftest import REPO, make_checkpoint
from Go_Net import GoNet
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
    assert out[5].startswith("= protocol_version\nname") and out[5].endswith("quit")
    assert out[6:10] == ["=", "=", "=", "="]
    assert out[10] == "? illegal move" and out[11].startswith("? syntax error") and out[12].startswith("? syntax")
    assert out[13] == "? unknown command"
    assert out[14].startswith("=2 ") and out[14][3:] not in ("C3", "")  # a legal point or pass
    assert out[15] == "="  # undo takes the generated move back
    assert out[16].startswith("=    A B C D E\n") and " 3 . . X . . 3\n" in out[16]  # Black's one stone
    assert out[17] == "= B+24.5"  # one black stone owns the empty board: 25 - 0 - komi 0.5
    assert out[18] == "? unacceptable size" and out[19] == "? komi needs one number"
    assert out[20:] == ["=", "? cannot undo", "="]


def test_bad_flags_and_model_files_are_one_sentence_and_status_2(go5_checkpoint, tmp_path):
    cube = str(make_checkpoint(tmp_path / "cube.pt"))
    for args, words in (
        (["--sims", "0"], "--sims"),
        (["--game", "go4"], "--game"),
        (["--checkpoint", str(tmp_path / "none.pt")], "does not exist"),
        (["--checkpoint", cube], "is a cube network, not a Go one"),
        (["--checkpoint", go5_checkpoint, "--game", "go7"], "is a Go network for 5x5, not 7x7"),
    ):
        result = run_gtp(args)
        assert result.returncode == 2 and words in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""


def test_help_names_the_commands():
    result = run_gtp(["--help"])
    assert result.returncode == 0 and "final_score" in result.stdout and "--sims" in result.stdout


def test_the_agents_simulations_default_by_board_and_yield_to_the_flag():
    import Go_Gui
    import Go_Match
    import gtp

    assert gtp.parse_args([]).sims == gtp.DEFAULT_SIMULATIONS
    assert gtp.parse_args(["--game", "go7"]).sims == gtp.LARGE_BOARD_SIMULATIONS > gtp.DEFAULT_SIMULATIONS
    assert gtp.parse_args(["--game", "go7", "--sims", "5"]).sims == 5
    assert Go_Match.parse_match_args(["--game", "go7"]).sims == gtp.LARGE_BOARD_SIMULATIONS
    assert Go_Match.parse_show_args(["--game", "go5"]).sims == gtp.DEFAULT_SIMULATIONS
    assert Go_Gui.parse_args(["--game", "go9"]).sims == gtp.LARGE_BOARD_SIMULATIONS

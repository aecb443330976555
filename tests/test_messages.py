"""Messages (issue 47, items 19, 20 and 23): an error quotes at most a few words of the input it refuses and
never Python's "Exceeds the limit (4300 digits)"; a missing Go model gets Go's advice, not a cube solver's; a
lock file that names a live process that no longer holds it is not "no longer running"."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

import benchmark
import evaluate
import gtp
import PyGame
from cube import Train_Args
from cube.Cube_Model import parse_moves
from go import Go_Args, Go_Match
from go.Go_Board import parse_vertex
from gui import Go_Gui
from run import Cli
from run.Input_Echo import MAX_SHOWN_CHARS, shown
from run.Run_IO import FileLock

# The parsers of every script: (name, parse function, the flags before the one tried).
PARSERS = [
    ("main.py", Train_Args.parse_args, []),
    ("main.py --game go5", Go_Args.parse_args, ["--game", "go5"]),
    ("evaluate.py", evaluate.parse_args, []),
    ("evaluate.py --game go5", Go_Match.parse_match_args, ["--game", "go5"]),
    ("test.py --game go5", Go_Match.parse_show_args, ["--game", "go5"]),
    ("PyGame.py", PyGame.parse_args, []),
    ("PyGame.py --game go5", Go_Gui.parse_args, ["--game", "go5"]),
    ("benchmark.py", benchmark.parse_args, []),
    ("gtp.py", gtp.parse_args, []),
]
HUGE = {
    "5000 digits": "9" * 5000,
    "minus 5000 digits": "-" + "9" * 5000,
    "an exponent of 5000 digits": "1e" + "9" * 5000,
    "5000 Arabic digits": "٣" * 5000,
    "10000 letters": "x" * 10_000,
}
LONGEST = 300  # characters of an error line: the flag, the rule, the choices and a short quote of the input


def error_of(capsys, parse, argv) -> str:
    with pytest.raises(SystemExit) as info:
        parse(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2, err
    return err


def value_flags(parse, base, monkeypatch) -> list[str]:
    """The flags of ``parse``'s parser that take a value."""
    made = []
    original = Cli.ArgumentParser.parse_known_args

    def record(self, *args, **kwargs):
        made.append(self)
        return original(self, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(Cli.ArgumentParser, "parse_known_args", record)
        try:
            parse([*base, "--help"])
        except SystemExit:
            pass
    return [a.option_strings[-1] for a in made[-1]._actions if a.option_strings and a.nargs != 0]


def assert_bounded(err: str, what: str) -> None:
    assert len(err.splitlines()) == 1 and len(err) < LONGEST, (what, err[:500])
    assert "4300" not in err and "int_max_str_digits" not in err and "Traceback" not in err, what


@pytest.mark.parametrize("name, parse, base", PARSERS, ids=[p[0] for p in PARSERS])
def test_every_flag_quotes_at_most_a_few_words_of_huge_input(capsys, monkeypatch, name, parse, base):
    flags = value_flags(parse, base, monkeypatch)
    assert len(flags) >= 3, name
    capsys.readouterr()
    for flag in flags:
        for kind, value in HUGE.items():
            try:
                parse([*base, flag, value])
            except SystemExit as exit:
                assert exit.code == 2, (name, flag, kind)
                assert_bounded(capsys.readouterr().err, f"{name} {flag} {kind}")
            # a flag that takes any text (a path, say) may accept it: nothing is echoed then
            capsys.readouterr()
    err = error_of(capsys, parse, [*base, *["y" * 10_000] * 1000])  # unknown words
    assert_bounded(err, f"{name}: 1000 unknown words")
    assert "and 995 more" in err


def test_argparse_s_own_quotes_are_cut_with_an_ellipsis(capsys):
    err = error_of(capsys, evaluate.parse_args, ["--solver", "z" * 1000])
    assert f"invalid choice: {shown('z' * 1000)} (choose from" in err
    err = error_of(capsys, evaluate.parse_args, ["--min-dist", "7" * 5000])
    assert err.rstrip().endswith(f"got {shown('7' * 5000)} (see --help).")
    err = error_of(capsys, evaluate.parse_args, ["--puzzle", "4x4"])  # short input: quoted whole, as always
    assert "must be one of 2x2, 3x3, got '4x4' (see --help)." in err


def test_the_shared_parsers_cut_what_they_quote():
    assert shown("x" * 41) == repr("x" * MAX_SHOWN_CHARS) + "..." and shown("x" * 40) == repr("x" * 40)
    for parse, text in [
        (Cli.strict_float, "1" * 5000),
        (lambda t: parse_vertex(t, 5), "A" + "9" * 5000),
        (parse_moves, "Q" * 10_000),
    ]:
        with pytest.raises(ValueError) as info:
            parse(text)
        assert len(str(info.value)) < LONGEST and "4300" not in str(info.value)
    with pytest.raises(argparse.ArgumentTypeError, match="must be an integer") as info:
        Cli.integer("9" * 5000)
    assert len(str(info.value)) < LONGEST and "4300" not in str(info.value)
    assert Cli.integer(" -12 ") == -12


def test_gui_scramble_length_of_5000_digits_is_refused_in_one_sentence(capsys):
    err = error_of(capsys, PyGame.parse_args, ["--scramble", "9" * 5000])
    assert "--scramble length is capped at" in err and "4300" not in err
    assert PyGame.parse_args(["--scramble", "0" * 5000 + "5"]).scramble == 5


# --------------------------------------------------------------------------- 19: advice for a board
@pytest.mark.parametrize("script", ["evaluate", "test"])
def test_a_missing_go_model_gets_go_advice(capsys, monkeypatch, tmp_path, script):
    import test as test_script

    monkeypatch.chdir(tmp_path)
    main = {"evaluate": evaluate.main, "test": test_script.main}[script]
    assert main(["--game", "go9", "--device", "cpu"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "python main.py --game go9" in err and "--solver" not in err, err


def test_a_missing_cube_model_keeps_the_cube_advice(tmp_path, monkeypatch):
    from run.Run_IO import CheckpointError, find_checkpoint

    monkeypatch.chdir(tmp_path)
    with pytest.raises(CheckpointError, match="--solver bestfirst"):
        find_checkpoint(None, "nothing_here_policy_value.pt")


# --------------------------------------------------------------------------- 23: a lock's last holder
def test_a_free_lock_naming_a_live_process_does_not_call_it_ended(tmp_path, capsys):
    lock = tmp_path / "run.lock"
    lock.write_text("1\n")  # pid 1 runs (init), here as everywhere; os.kill(1, 0) may say EPERM: still alive
    with FileLock(str(lock), "the run", "wait"):
        pass
    out = capsys.readouterr().out
    assert "of process 1, which no longer holds it" in out and "no longer running" not in out


def test_a_free_lock_naming_an_ended_process_says_so(tmp_path, capsys):
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    lock = tmp_path / "run.lock"
    lock.write_text(ended.stdout)
    with FileLock(str(lock), "the run", "wait"):
        pass
    assert f"of process {int(ended.stdout)}, which is no longer running" in capsys.readouterr().out

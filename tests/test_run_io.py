"""Run_IO and Cli: files written with ordinary permissions, and one sentence with exit status 2
for every bad --device in every script."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import Cli  # noqa: E402
import Run_IO  # noqa: E402


def test_atomic_write_gives_ordinary_permissions(tmp_path):
    path = tmp_path / "out.json"
    Run_IO.write_json(path, {"a": 1})
    assert Run_IO.read_json(path) == {"a": 1}
    assert stat.S_IMODE(os.stat(path).st_mode) == Run_IO.FILE_MODE
    plain = tmp_path / "plain.txt"
    plain.write_text("x")  # what open() gives
    assert stat.S_IMODE(os.stat(plain).st_mode) == Run_IO.FILE_MODE
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".tmp-")]


def test_atomic_write_keeps_the_old_file_on_failure(tmp_path):
    path = tmp_path / "keep.txt"
    Run_IO.atomic_write(path, lambda f: f.write(b"old"))

    def broken(f):
        f.write(b"half")
        raise RuntimeError("crash")

    with pytest.raises(RuntimeError):
        Run_IO.atomic_write(path, broken)
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["keep.txt"]


@pytest.mark.parametrize("name", ["gpu", "cuda:x", "tpu", ""])
def test_resolve_device_names_a_bad_device(name):
    with pytest.raises(Cli.DeviceError):
        Cli.resolve_device(name)


def test_int_in_bounds():
    parse = Cli.int_in(1, 5, "why")
    assert parse("3") == 3
    for bad in ("0", "6", "x"):
        with pytest.raises(Exception):
            parse(bad)


@pytest.mark.parametrize("script", ["main.py", "evaluate.py", "test.py", "PyGame.py"])
def test_every_script_rejects_a_bad_device_in_one_sentence(script, tmp_path):
    env = dict(os.environ, SDL_VIDEODRIVER="dummy")
    done = subprocess.run(
        [sys.executable, str(REPO / script), "--device", "gpu"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(f"{script}: error: argument --device")

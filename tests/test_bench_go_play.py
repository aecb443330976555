"""bench/bench_go_play.py end to end on tiny settings: the shipped 5x5 agent's positions, both precisions."""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_go_play  # noqa: E402


def test_play_bench_times_both_precisions_on_one_game(capsys):
    assert bench_go_play.main(["--game", "go5", "--moves", "2", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "go5: 2 positions" in out and "200 simulations a move" in out
    found = re.findall(r"^(fp32|bf16)\s+([\d,]+) simulations/s", out, re.M)
    rates = {name: float(rate.replace(",", "")) for name, rate in found}
    assert set(rates) == {"fp32", "bf16"} and min(rates.values()) > 0
    assert re.search(r"^ratio\s+[\d.]+x\s+\(bf16 / fp32\)", out, re.M)
    assert re.search(r"bf16 plays fp32's move in \d+% of the positions", out)

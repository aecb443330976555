"""Uniformly random 3x3 positions (Rubik3x3Env.random_states) and evaluate.py --uniform: the cubie
description against the sticker model, kociemba as the judge of what is reachable, uniformity,
and the evaluation's records (never a solve that does not replay)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch

import evaluate
from cube import Kociemba_Solver as K
from cube import Rubik3x3Env as E3
from Policy_Value_Net import PolicyValueNet
from Rubik2x2Env import SOLVED_STICKERS, apply_moves, is_solved, parse_moves
from run.Checkpoints import save_checkpoint


def test_cubie_slots_cover_every_moving_sticker_once():
    stickers = np.concatenate([E3.CORNER_SLOTS.ravel(), E3.EDGE_SLOTS.ravel(), list(E3.CENTRES)])
    assert sorted(stickers.tolist()) == list(range(54))
    assert (E3.CORNER_SLOTS[:, 0] // 9 % 3 == 0).all()  # a corner's reference sticker is on U (0) or D (3)
    ud = np.isin(E3.EDGE_SLOTS // 9, (0, 3)).any(axis=1)
    assert ud.sum() == 8 and np.isin(E3.EDGE_SLOTS[~ud, 0] // 9, (2, 5)).all()  # middle layer: F or B first
    no_move = [np.arange(8)[None], np.zeros((1, 8), int), np.arange(12)[None], np.zeros((1, 12), int)]
    assert np.array_equal(E3.cubies_to_stickers(*no_move)[0], E3.SOLVED_STICKERS)


def test_scrambled_cubes_keep_the_three_rules_and_read_back_exactly():
    """Every reachable position (here: scrambles) has equal parities, twists summing to 0 mod 3
    and flips to 0 mod 2 -- so the orientations are read the way the rules need."""
    rng = np.random.default_rng(0)
    cubes = np.concatenate([E3.batch_scramble(rng, 150, k)[0] for k in (24, 25)])  # a quarter turn is odd
    cp, co, ep, eo = E3.stickers_to_cubies(cubes)
    assert (co.sum(axis=1) % 3 == 0).all() and (eo.sum(axis=1) % 2 == 0).all()
    assert (E3.permutation_parity(cp) == E3.permutation_parity(ep)).all()
    assert E3.permutation_parity(cp).tolist() == [0] * 150 + [1] * 150
    assert np.array_equal(E3.cubies_to_stickers(cp, co, ep, eo), cubes)
    assert E3.permutation_parity(np.array([[1, 0, 2], [1, 2, 0], [2, 1, 0]])).tolist() == [1, 0, 1]


def test_random_states_are_positions_kociemba_solves():
    cubes = E3.random_states(np.random.default_rng(1), 12)
    assert cubes.shape == (12, 54) and cubes.dtype == np.int8
    assert (np.bincount(cubes.ravel(), minlength=6) == 12 * 9).all()
    for cube in cubes:
        assert E3.is_solved(E3.apply_moves(cube, K.solve(cube)))  # solve() raises for an unreachable one
    assert np.array_equal(E3.random_states(np.random.default_rng(1), 12), cubes)  # the seed fixes them


@pytest.mark.parametrize("broken", ["twist", "flip", "swap"])
def test_breaking_any_rule_gives_a_position_no_moves_reach(broken):
    cp, co, ep, eo = E3.stickers_to_cubies(E3.random_states(np.random.default_rng(2), 1))
    if broken == "twist":
        co[0, 3] = (co[0, 3] + 1) % 3
    elif broken == "flip":
        eo[0, 5] ^= 1
    else:
        ep[0, [0, 1]] = ep[0, [1, 0]]
    with pytest.raises(ValueError, match="not a reachable"):
        K.solve(E3.cubies_to_stickers(cp, co, ep, eo)[0])


def test_random_states_are_uniform_on_every_cubie():
    """Where a cubie is and how it is turned: each of the 24 (corner) and 24 (edge) cases equally
    likely, within 5 standard deviations; both parities equally likely."""
    n = 12_000
    cp, co, ep, eo = E3.stickers_to_cubies(E3.random_states(np.random.default_rng(3), n))
    for perm, turn, slots, turns in ((cp, co, 8, 3), (ep, eo, 12, 2)):
        for cubie in (0, slots - 1):
            slot = (perm == cubie).argmax(axis=1)
            counts = np.bincount(slot * turns + turn[np.arange(n), slot], minlength=slots * turns)
            expected = n / (slots * turns)
            assert np.abs(counts - expected).max() < 5 * np.sqrt(expected), counts
    assert abs(E3.permutation_parity(cp).mean() - 0.5) < 5 * 0.5 / np.sqrt(n)


@pytest.fixture(scope="module")
def net3(tmp_path_factory):
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("net3") / "net3.pt"
    save_checkpoint(PolicyValueNet(obs_dim=324, hidden_sizes=(32, 16)), str(path))
    return path


def test_evaluate_uniform_records_replay(net3, tmp_path, capsys):
    args = ["--puzzle", "3x3", "--checkpoint", str(net3), "--device", "cpu", "--uniform", "4", "--solver", "beam",
            "--beam-width", "4", "--max-nodes", "2000", "--time-limit", "60", "--log-dir", str(tmp_path)]  # fmt: skip
    assert evaluate.main(args) == 0
    records = json.loads((tmp_path / evaluate.UNIFORM_RESULT_FILE).read_text())
    assert [r["line"] for r in records] == [1, 2, 3, 4]
    assert set(records[0]) == {
        "line",
        "scramble",
        "solution",
        "solved",
        "length",
        "optimal",
        "kociemba",
        "nodes",
        "seconds",
    }  # fmt: skip  (the fields of --scrambles)
    expected = E3.random_states(np.random.default_rng(0), 4)  # --seed 0
    for record, cube in zip(records, expected):
        made = E3.apply_moves(E3.SOLVED_STICKERS, E3.parse_moves(record["scramble"]))
        assert np.array_equal(made, cube) and record["kociemba"] == len(E3.parse_moves(record["scramble"]))
        assert record["optimal"] is None and record["nodes"] <= 2000
        assert record["solved"] == E3.is_solved(E3.apply_moves(cube, E3.parse_moves(record["solution"])))
    text = capsys.readouterr().out
    assert "Solving 4 uniformly random positions" in text and "Per position: kociemba" in text


def test_evaluate_uniform_with_a_solver_that_finds_a_solution(tmp_path):
    """A solved record: positions one move from solved stand in for the uniform ones."""
    one_move = E3.batch_scramble(np.random.default_rng(5), 3, 1)[0]
    puzzle = dataclasses.replace(evaluate.get_puzzle("3x3"), random_states=lambda rng, n: one_move[:n])
    evaluator = evaluate.ScrambleEvaluator(solver="bestfirst", puzzle=puzzle, log_dir=str(tmp_path))
    records = evaluator.solve_uniform(3)
    assert all(r["solved"] and r["length"] == 1 == r["kociemba"] for r in records)
    assert evaluator.overall()["mean_ratio_to_kociemba"] == 1.0


def test_evaluate_uniform_on_the_2x2_has_optimal_lengths(tmp_path, capsys):
    """The 2x2's uniform positions come from the exact table; each record's scramble is an
    optimal one, so its length is the position's true distance."""
    from Optimal_Solver import get_solver

    out = tmp_path / "u.json"
    args = ["--uniform", "20", "--solver", "bestfirst", "--max-nodes", "3000", "--seed", "4", "--out", str(out)]
    assert evaluate.main([*args, "--log-dir", str(tmp_path), "--no-progress"]) == 0
    records = json.loads(out.read_text())
    expected = get_solver().random_cubes(np.random.default_rng(4), 20)
    for record, cube in zip(records, expected):
        made = apply_moves(SOLVED_STICKERS, parse_moves(record["scramble"]))
        assert np.array_equal(made, cube) and "kociemba" not in record  # the fields of a 2x2 --scrambles
        assert record["optimal"] == len(parse_moves(record["scramble"])) == get_solver().distance(cube)
        assert record["solved"] == is_solved(apply_moves(cube, parse_moves(record["solution"] or "")))
    assert "Per position: optimal" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--uniform", "3", "--by-distance"], "a mode of its own"),
        (["--puzzle", "3x3", "--solver", "beam", "--uniform", "3", "--scrambles", "s.txt"], "a mode of its own"),
        (["--puzzle", "3x3", "--solver", "beam", "--out", "o.json"], "--out is for --scrambles and --uniform"),
    ],
)
def test_uniform_flag_errors_are_one_line_exit_2(args, message, capsys):
    with pytest.raises(SystemExit) as exc:
        evaluate.parse_args(args)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and message in err and err.count("\n") == 1


def test_evaluate_3x3_uniform_without_a_solver_flag(net3, tmp_path, capsys):
    args = ["--puzzle", "3x3", "--checkpoint", str(net3), "--device", "cpu", "--uniform", "1", "--beam-width", "2",
            "--max-nodes", "500", "--log-dir", str(tmp_path)]  # fmt: skip
    assert evaluate.main(args) == 0
    settings = (
        "beam_width=2, beam_rank=mixed, beam_widen=False, ends=6, first_width=1000, first_views=2, "
        "target_seconds=25.0, symmetries=1, views=8, precision=auto, max_moves=100, max_nodes=500"
    )
    assert f"(3x3, solver beam: {settings}, seconds=60.0)" in capsys.readouterr().out


def test_3x3_evaluation_defaults():
    a = evaluate.parse_args(["--puzzle", "3x3", "--solver", "beam"])
    assert (a.max_len, a.runs, a.log_dir, a.max_steps) == (26, 100, "training_logs_3x3", 100)
    b = evaluate.parse_args([])
    assert (b.max_len, b.runs, b.log_dir, b.max_steps) == (20, 100, "training_logs", 40)  # the 2x2's, as before


def test_evaluate_uniform_on_the_3x3_reports_against_the_optimal_mean(tmp_path, capsys, monkeypatch):
    """No exact distances exist for the 3x3, so the summary sets the mean against the optimal mean of
    uniformly random positions (20.66); positions one move from solved stand in for the uniform ones."""
    from cube import Puzzles

    one_move = E3.batch_scramble(np.random.default_rng(5), 3, 1)[0]
    puzzle = dataclasses.replace(Puzzles.PUZZLES["3x3"], random_states=lambda rng, n: one_move[:n])
    monkeypatch.setitem(Puzzles.PUZZLES, "3x3", puzzle)
    args = ["--puzzle", "3x3", "--uniform", "3", "--solver", "bestfirst", "--log-dir", str(tmp_path), "--no-progress"]
    assert evaluate.main(args) == 0
    text = capsys.readouterr().out
    assert f"is 20.66 quarter turns: these solutions are {1 / 20.66:.3f} times it" in text

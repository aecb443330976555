"""The scripts under docs/ that make the README's tables: end to end on tiny inputs."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import REPO

ROOT = str(REPO)


def run(script, *args, cwd):
    return subprocess.run(
        [sys.executable, os.path.join(ROOT, "docs", script), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def refuse(script, *args, cwd, capsys) -> subprocess.CompletedProcess:
    """``run`` for a run that must stop before any work, as the script's ``main`` called in this process:
    a new process costs seconds of imports for a check of ``main`` alone (every script ends through
    ``Cli.run_script``: tests/test_cli_sweep.py). Gives what ``run`` gives; an exception that escapes
    fails the test, as a traceback would."""
    module = _docs_module(script.removesuffix(".py"))
    capsys.readouterr()  # only this run's output
    before = os.getcwd()
    os.chdir(cwd)
    try:
        status = module.main(list(args))
    except SystemExit as exc:  # argparse's usage errors
        status = exc.code
    finally:
        os.chdir(before)
    out = capsys.readouterr()
    return subprocess.CompletedProcess([script], status, out.out, out.err)


@pytest.mark.slow
@pytest.mark.usefixtures("isolated_solver_cache")
def test_value_by_distance_prints_both_rows_for_every_distance(tmp_path, checkpoints, capsys):
    out = run("value_by_distance.py", str(checkpoints["neutral"]), "--runs", "3", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    reads = next(l for l in lines if l.startswith("| value reads"))
    greedy = next(l for l in lines if l.startswith("| greedy policy solves"))
    # The neutral net's value is 0 everywhere: it reads (1 - 0) / 0.03 = 33.3 moves at every distance.
    assert reads.count("33.3±0.0") == 14
    assert greedy.count("%") == 14
    # Its policy is uniform: a cube one move out has 2 solving moves (U and D: one position), 2/12 = 17%.
    mass = next(l for l in lines if l.startswith("| policy mass on optimal moves"))
    assert mass.count("%") == 14 and mass.startswith("| policy mass on optimal moves | 17% |")
    missing = refuse("value_by_distance.py", "nowhere.pt", cwd=tmp_path, capsys=capsys)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr and "nowhere.pt" in missing.stderr


@pytest.mark.slow
def test_compare_with_original_prints_tables_and_draws_the_figure(tmp_path):
    original, rebuild, shipped = (tmp_path / n for n in ("original", "rebuild", "shipped"))
    metrics = {
        "iterations": [1, 2],
        "losses": [1.0, 0.5],
        "policy_losses": [0.8, 0.4],
        "value_losses": [0.2, 0.1],
        "solve_rates": [0.5, 0.9],
        "scramble_lengths": [3, 3],
        "num_samples": [10, 10],
    }
    original.mkdir()
    (original / "seed_training_metrics.json").write_text(json.dumps(metrics))
    (original / "seed_eval_scramble_result.json").write_text(
        json.dumps([{"scramble_len": n, "solve_rate": 1.0} for n in (1, 2)])
    )
    for folder, rate in ((rebuild, 0.5), (shipped, 0.75)):
        folder.mkdir()
        (folder / "metrics.json").write_text(json.dumps(metrics))
        (folder / "eval_scramble_result.json").write_text(
            json.dumps([{"scramble_len": n, "solve_rate": rate, "mean_ratio_to_optimal": 1.25} for n in (1, 2)])
        )
        by_distance = [{"distance": d, "solve_rate": rate, "mean_ratio_to_optimal": 1.5} for d in (1, 2, 3)]
        (folder / "eval_by_distance.json").write_text(
            json.dumps(
                {
                    "settings": {"num_simulations": 200},
                    "by_distance": by_distance,
                    "overall": {"solve_rate": rate, "mean_ratio_to_optimal": 1.5},
                }
            )
        )
    out = run(
        "compare_with_original.py",
        "--original",
        str(original),
        "--rebuild",
        str(rebuild),
        "--shipped",
        str(shipped),
        "--out",
        str(tmp_path / "cmp.png"),
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert "| 2 | 100% | 50% | 75% | 1.25 | 1.25 |" in out.stdout
    assert "| all | 100.0% | 50.0% | 75.0% | 1.25 | 1.25 |" in out.stdout
    assert "| shipped: solved | 75% | 75% | 75% | 75.0% |" in out.stdout
    assert (tmp_path / "cmp.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.usefixtures("isolated_solver_cache")
def test_supervised_ceiling_labels_are_exact():
    sys.path.insert(0, os.path.join(ROOT, "docs"))
    import supervised_ceiling

    from Optimal_Solver import get_solver
    from Rubik2x2Env import MOVE_NAMES, SOLVED_STICKERS, apply_moves, parse_moves

    cubes = np.stack(
        [
            SOLVED_STICKERS,
            apply_moves(SOLVED_STICKERS, parse_moves("R")),
            apply_moves(SOLVED_STICKERS, parse_moves("R U")),
        ]
    )
    dist, pi = supervised_ceiling.exact_labels(get_solver(), cubes)
    assert dist.tolist() == [0, 1, 2]
    assert np.allclose(pi.sum(axis=1), 1.0)
    # Undo the last turn, or turn the opposite face the same way round (the cube then only turned as a whole).
    assert [MOVE_NAMES[a] for a in np.flatnonzero(pi[1])] == ["R'", "L'"] and pi[1].max() == 0.5
    assert [MOVE_NAMES[a] for a in np.flatnonzero(pi[2])] == ["U'", "D'"] and pi[2].max() == 0.5


@pytest.mark.slow
@pytest.mark.usefixtures("isolated_solver_cache")
def test_supervised_ceiling_trains_reports_and_saves(tmp_path, capsys):
    out = run(
        "supervised_ceiling.py",
        "--steps",
        "2",
        "--batch-size",
        "16",
        "--test-per-distance",
        "2",
        "--log-every",
        "1",
        "--save",
        str(tmp_path / "net.pt"),
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    rows = [l for l in out.stdout.splitlines() if l.startswith("| ") and l[2].isdigit()]
    assert [r.split(" | ")[0] for r in rows] == ["| 0", "| 1", "| 2"]
    assert all(r.count(" / ") == 14 for r in rows)
    from cube.Cube_Checkpoints import load_model

    assert load_model(str(tmp_path / "net.pt")).canonical
    missing = refuse("supervised_ceiling.py", "--init", "nowhere.pt", cwd=tmp_path, capsys=capsys)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr and "nowhere.pt" in missing.stderr
    bad = refuse("supervised_ceiling.py", "--steps", "0", cwd=tmp_path, capsys=capsys)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def _docs_module(name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "docs", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_value_by_distance_classes_weighs_each_class_by_its_positions(tmp_path, checkpoints, capsys):
    import types

    import torch

    vbd = _docs_module("value_by_distance")
    # Three classes at distance 1: class 0 holds 3 positions and reads 1 move with its closer move 0 certain;
    # class 1 (1 position) reads 2 moves and puts half its policy on its closer moves 0 and 1.
    reps = np.array([10, 11, 12])
    sweeper = types.SimpleNamespace(
        reps=reps,
        inputs=np.zeros((3, 144), dtype=np.float32),
        class_of=np.array([0, 0, 0, 1, 2, 2]),
        child_class=np.array([[2] + [1] * 11, [2, 2] + [1] * 10, [2] * 12]),
    )
    table = np.zeros(20, dtype=np.int8)
    table[[10, 11]] = 1  # class 2 (rep 12) is the solved cube
    solver = types.SimpleNamespace(table=table)
    logits = torch.full((3, 12), -1e9)
    logits[0, 0] = 0.0
    logits[1, :4] = 0.0
    values = torch.tensor([[1 - 0.03], [1 - 0.06], [1.0]])
    rows = vbd.probe_classes(lambda x: (logits, values), solver, sweeper)
    d, exact, mass = rows[0]
    assert d == 1 and exact == pytest.approx(3 / 4) and mass == pytest.approx((3 * 1.0 + 1 * 0.5) / 4)
    plain = refuse("value_by_distance.py", str(checkpoints["neutral"]), "--classes", cwd=tmp_path, capsys=capsys)
    assert plain.returncode == 2 and "--canonical-symmetry" in plain.stderr and "Traceback" not in plain.stderr


@pytest.mark.slow
def test_mcts_weak_spots_finds_the_classes_whose_prior_favours_a_further_move(tmp_path, checkpoints, capsys):
    spots = _docs_module("mcts_weak_spots")
    policy = np.array(
        [
            [0.5, 0.3, 0.2],  # best closer 0.5, best other 0.3: ratio 0.6
            [0.2, 0.4, 0.4],  # best closer 0.2 (move 0), best other 0.4: ratio 2
            [0.3, 0.3, 0.4],  # every move closer: ratio 0
            [0.2, 0.3, 0.5],  # nothing closer (the solved cube): inf
        ]
    )
    closer = np.array([[1, 0, 0], [1, 0, 0], [1, 1, 1], [0, 0, 0]], dtype=bool)
    ratio = spots.prior_ratio(policy, closer)
    assert ratio[:3] == pytest.approx([0.6, 2.0, 0.0]) and ratio[3] == np.inf
    # Positions 0-6 in classes 0,0,1,1,1,2,3; the solved class 3 is never played.
    class_of = np.array([0, 0, 1, 1, 1, 2, 3])
    dist = np.array([5, 6, 7, 0])
    assert spots.weak_positions(ratio, dist, class_of, 0.5).tolist() == [0, 1, 2, 3, 4]
    assert spots.weak_positions(ratio, dist, class_of, 1.0).tolist() == [2, 3, 4]
    assert spots.weak_positions(ratio, dist, class_of, 3.0).tolist() == []
    plain = refuse("mcts_weak_spots.py", str(checkpoints["neutral"]), cwd=tmp_path, capsys=capsys)
    assert plain.returncode == 2 and "--canonical-symmetry" in plain.stderr and "Traceback" not in plain.stderr
    bad = refuse("mcts_weak_spots.py", str(checkpoints["neutral"]), "--ratio", "0", cwd=tmp_path, capsys=capsys)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


@pytest.mark.slow
@pytest.mark.usefixtures("isolated_solver_cache")
def test_value_target_quality_prints_every_target_at_every_distance(tmp_path, checkpoints, capsys):
    out = run("value_target_quality.py", str(checkpoints["neutral"]), "--episodes", "4", "--sims", "4",
              "--scramble-len", "3", cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    total = int(lines[0].split()[0])
    counts = next(line for line in lines if line.startswith("| states |")).strip("| \n").split(" | ")[1:]
    assert sum(int(c) for c in counts[:-1]) == int(counts[-1]) == total > 0
    rows = [line for line in lines if line.startswith("| best,") or line.startswith("| mean,")]
    assert len(rows) == len(_docs_module("value_target_quality").TARGETS)
    for row in rows:
        cells = row.strip("| ").split(" | ")[1:]
        assert len(cells) == 15  # distances 1-14 and all
        for cell in cells[:-1]:
            if cell:  # "bias / mean |error|": the bias is at most the mean |error|
                bias, mae = (float(x) for x in cell.split(" / "))
                assert abs(bias) <= mae + 0.01
    missing = refuse("value_target_quality.py", "nowhere.pt", cwd=tmp_path, capsys=capsys)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr and "nowhere.pt" in missing.stderr


def test_go_position_check_reads_a_position_at_each_komi(capsys):
    sys.path.insert(0, os.path.join(ROOT, "docs"))
    import go_position_check

    assert go_position_check.main(["pretrained/go5_policy_value.pt", "--moves", "C3", "--komi", "24.5", "7",
                                   "--sims", "8", "--no-symmetric"]) == 0  # fmt: skip
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all(line.startswith("komi") and "White to move" in line for line in lines)
    assert "expected margin" not in lines[0]  # the seed's network has no score head
    # that network has no komi input: its value is the same at every komi
    assert lines[0].split("value ")[1][:6] == lines[1].split("value ")[1][:6]

"""main.py: the recipe pieces, and end-to-end runs with tiny settings (outputs, resume, errors)."""

import json
import math
import os
import signal
import subprocess
import sys

import pytest
import torch

from conftest import REPO, main_in_process
from cube.Run_State import Curriculum
from main import learning_rate, parse_args, simulations_for, temperature_for
from run.Recipes import RECIPES

ROOT = str(REPO)
TINY = [
    "--episodes-per-iter",
    "4",
    "--sims",
    "8",
    "8",
    "8",
    "--epochs",
    "1",
    "--batch-size",
    "8",
    "--min-buffer-batches",
    "1",
    "--sample-batches",
    "2",
    "--max-episode-steps",
    "4",
    "--window",
    "2",
    "--solve-threshold",
    "0.0",
    "--seed",
    "5",
    "--no-progress",
]


def run_main(tmp_path, *extra):
    """A tiny main.py run in ``tmp_path``, inside this process (``conftest.main_in_process``)."""
    return main_in_process(tmp_path, "--checkpoint", "m.pt", "--log-dir", "logs", *TINY, *extra)


def refuse_in_process(folder, capsys, *extra) -> subprocess.CompletedProcess:
    """``run_main`` for a run that must stop before any work, called in this process: a new process
    costs seconds of imports for a check of ``main.main`` alone (the process's own exit status and
    one line are checked for main.py in tests/test_cli_sweep.py). Gives what ``run_main`` gives;
    an exception that escapes fails the test, as a traceback would."""
    import main

    capsys.readouterr()  # only this run's output
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        status = main.main(["--checkpoint", "m.pt", "--log-dir", "logs", *TINY, *extra])
    except SystemExit as exc:  # argparse's usage errors
        status = exc.code
    finally:
        os.chdir(cwd)
    out = capsys.readouterr()
    assert status == 2, (status, out.err)  # every use here is a refusal
    return subprocess.CompletedProcess(["main.main"], status, out.out, out.err)


#: The sweep and exact runs train on all 77,802 classes of positions each iteration: a narrow body
#: (the recipes leave the width alone) makes that a second, and nothing these tests check depends on it.
NARROW = ["--hidden-sizes", "32", "32"]


# ---------------------------------------------------------------- recipe pieces
def test_defaults_are_the_seed_recipe():
    a = parse_args([])
    assert (a.num_iters, a.episodes_per_iter, a.epochs, a.batch_size, a.lr, a.solve_threshold) == (
        100,
        80,
        10,
        256,
        2e-4,
        0.9,
    )
    assert (a.max_episode_steps, a.buffer_size, a.min_buffer_batches, a.sample_batches) == (40, 100_000, 8, 16)
    assert a.sims == [300, 600, 800] and a.temps == [1.0, 0.7, 0.4, 0.2] and a.c_puct == 1.3
    assert (a.eval_min_len, a.eval_max_len, a.eval_runs, a.eval_sims, a.eval_max_steps) == (1, 20, 100, 1000, 40)
    assert a.start_scramble_len == 3 and a.window == 8 and a.select_mode == "sample"
    assert a.value_target == "episode" and a.targets == "selfplay" and a.value_weight == 1.0  # changes are opt-in
    assert (
        not (a.double_estimate or a.canonical_orientation or a.canonical_symmetry or a.keep_optimizer)
        and a.policy_temperature == 0.0
    )


def test_recipe_preset_sets_its_flags_and_single_flags_override_it():
    for name, recipe in RECIPES.items():
        a = parse_args(["--recipe", name])
        for key, value in recipe.items():
            assert getattr(a, key) == value, (name, key)
    b = parse_args(["--recipe", "sweep", "--lr", "1e-3", "--num-iters", "7"])
    assert (b.lr, b.num_iters, b.targets) == (1e-3, 7, "sweep")
    assert parse_args([]).targets == "selfplay"  # no preset: the original recipe


def test_learning_rate_schedule():
    a = parse_args(
        ["--lr", "1e-3", "--lr-schedule", "cosine", "--lr-end", "1e-5", "--num-iters", "11", "--warmup-iters", "2"]
    )
    rates = [learning_rate(a, it) for it in range(1, 12)]
    assert rates[0] == pytest.approx(0.5e-3)  # half the rate in the first of two warm-up iterations
    assert rates[1] == pytest.approx(1e-5 + 0.5 * (1e-3 - 1e-5) * (1 + math.cos(math.pi * 0.1)))
    assert rates[-1] == pytest.approx(1e-5) and all(x >= y for x, y in zip(rates[1:], rates[2:]))
    assert learning_rate(parse_args([]), 5) == 2e-4  # the original: constant


def test_simulation_and_temperature_schedules():
    assert [simulations_for(n) for n in (1, 3, 4, 7, 8, 16)] == [300, 300, 600, 600, 800, 800]
    assert [temperature_for(n) for n in (3, 5, 6, 9, 10, 11, 12, 16)] == [1.0, 1.0, 0.7, 0.7, 0.4, 0.4, 0.2, 0.2]


def test_curriculum_needs_a_full_window_above_threshold():
    c = Curriculum()
    for _ in range(7):
        assert not c.record(1.0)
    assert c.scramble_len == 3
    assert c.record(1.0) and c.scramble_len == 5 and c.recent == []  # window cleared
    for _ in range(8):
        c.record(0.9)  # a mean of exactly 0.9 is not enough (strict >)
    assert c.scramble_len == 5 and len(c.recent) == 8


def test_curriculum_window_slides_and_steps_by_two_then_one():
    c = Curriculum()
    for r in [0.0] + [1.0] * 7:
        c.record(r)
    assert c.scramble_len == 3  # mean 0.875
    assert c.record(1.0) and c.scramble_len == 5  # the 0.0 slid out of the window
    lengths = []
    for _ in range(12):
        for _ in range(8):
            c.record(0.95)
        lengths.append(c.scramble_len)
    assert lengths == [7, 9, 11, 12, 13, 14, 15, 16, 16, 16, 16, 16]
    assert c.recent == []  # cleared even when the length can grow no more


@pytest.mark.slow
def test_bad_flags_exit_2(tmp_path, capsys):
    out = refuse_in_process(tmp_path, capsys, "--num-iters", "0")
    assert out.returncode == 2 and "num-iters" in out.stderr
    out = refuse_in_process(tmp_path, capsys, "--double-estimate")
    assert out.returncode == 2 and "--targets lookahead" in out.stderr
    assert not list(tmp_path.iterdir())  # nothing written


# ---------------------------------------------------------------- end to end
@pytest.mark.slow
def test_tiny_run_writes_every_output(tmp_path):
    out = run_main(
        tmp_path,
        "--num-iters",
        "3",
        "--eval-max-len",
        "2",
        "--eval-runs",
        "2",
        "--eval-sims",
        "8",
        "--eval-max-steps",
        "3",
    )
    assert out.returncode == 0, out.stderr
    lines = [l for l in out.stdout.splitlines() if l.startswith("iter ")]
    assert len(lines) == 3
    for field in ("len", "sims", "T ", "solve", "loss", "samples", "sims/s", "total"):
        assert field in lines[-1]
    state = torch.load(tmp_path / "m.pt", weights_only=True)
    assert "policy_head.weight" in state  # a bare state_dict
    assert (tmp_path / "m.train_state.pt").is_file()
    metrics = json.loads((tmp_path / "logs" / "metrics.json").read_text())
    assert set(metrics) == {
        "iterations",
        "losses",
        "policy_losses",
        "value_losses",
        "solve_rates",
        "scramble_lengths",
        "num_samples",
    }
    assert metrics["iterations"] == [1, 2, 3]
    assert (tmp_path / "logs" / "training_metrics.png").read_bytes()[:4] == b"\x89PNG"
    assert list((tmp_path / "logs" / "tensorboard").glob("events.out.tfevents.*"))
    evaluation = json.loads((tmp_path / "logs" / "eval_scramble_result.json").read_text())
    assert [r["scramble_len"] for r in evaluation] == [1, 2]
    assert (tmp_path / "logs" / "eval_bar_chart.png").read_bytes()[:4] == b"\x89PNG"
    assert not [p for p in tmp_path.rglob("*") if p.name.startswith(".tmp-")]  # no temp files left


@pytest.mark.slow
def test_resume_gives_the_same_run_as_no_interruption(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert run_main(tmp_path / "a", "--num-iters", "4", "--skip-eval").returncode == 0
    assert run_main(tmp_path / "b", "--num-iters", "2", "--skip-eval").returncode == 0
    out = run_main(tmp_path / "b", "--num-iters", "4", "--skip-eval")
    assert out.returncode == 0 and "Resuming" in out.stdout and "iter   3/4" in out.stdout
    a = json.loads((tmp_path / "a" / "logs" / "metrics.json").read_text())
    b = json.loads((tmp_path / "b" / "logs" / "metrics.json").read_text())
    assert a["iterations"] == b["iterations"] == [1, 2, 3, 4]
    assert a["scramble_lengths"] == b["scramble_lengths"] and a["solve_rates"] == b["solve_rates"]
    assert a["losses"] == pytest.approx(b["losses"], rel=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("extra", [[], ["--keep-optimizer", "--canonical-orientation", "--double-estimate"]])
def test_lookahead_targets_run_and_resume_like_an_uninterrupted_run(tmp_path, extra):
    look = ["--targets", "lookahead", "--states-per-iter", "64", "--value-weight", "300", "--skip-eval", *extra]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    out = run_main(tmp_path / "a", "--num-iters", "3", *look)
    assert out.returncode == 0, out.stderr
    lines = [l for l in out.stdout.splitlines() if l.startswith("iter ")]
    assert len(lines) == 3 and all("lookahead" in l and "states/s" in l for l in lines)
    assert run_main(tmp_path / "b", "--num-iters", "1", *look).returncode == 0
    assert run_main(tmp_path / "b", "--num-iters", "3", *look).returncode == 0
    a = json.loads((tmp_path / "a" / "logs" / "metrics.json").read_text())
    b = json.loads((tmp_path / "b" / "logs" / "metrics.json").read_text())
    assert a["iterations"] == b["iterations"] == [1, 2, 3]
    assert a["num_samples"] == b["num_samples"] and a["num_samples"][0] == 66  # whole scramble paths: 22 of length 3
    assert a["solve_rates"] == b["solve_rates"] and a["losses"] == pytest.approx(b["losses"], rel=1e-5)
    state = torch.load(tmp_path / "b" / "m.train_state.pt", weights_only=True)
    assert ("optimizer" in state) == ("--keep-optimizer" in extra)


@pytest.mark.slow
def test_canonical_orientation_run_saves_a_marked_checkpoint_and_starts_from_plain_weights(tmp_path, capsys):
    look = ["--targets", "lookahead", "--states-per-iter", "64", "--value-weight", "300", "--skip-eval"]
    assert run_main(tmp_path, "--num-iters", "1", *look).returncode == 0
    assert "canonical_orientation" not in torch.load(tmp_path / "m.pt", weights_only=True)
    os.remove(tmp_path / "m.train_state.pt")  # only the plain weights are left to start from
    out = run_main(tmp_path, "--num-iters", "1", "--canonical-orientation", *look)
    assert out.returncode == 0 and "Loaded weights" in out.stdout, out.stderr
    assert "canonical_orientation" in torch.load(tmp_path / "m.pt", weights_only=True)
    out = refuse_in_process(tmp_path, capsys, "--num-iters", "2", *look)  # resuming takes the saved run's flags
    assert out.returncode == 2 and "the saved run used --canonical-orientation" in out.stderr, out.stderr
    out = run_main(tmp_path, "--num-iters", "2", "--canonical-orientation", *look)
    assert out.returncode == 0 and "Resuming" in out.stdout, out.stderr
    assert "canonical_orientation" in torch.load(tmp_path / "m.pt", weights_only=True)


@pytest.mark.slow
def test_canonical_symmetry_run_saves_a_marked_checkpoint_and_refuses_the_double_estimate(tmp_path, capsys):
    look = ["--targets", "lookahead", "--states-per-iter", "64", "--value-weight", "300", "--skip-eval"]
    out = refuse_in_process(tmp_path, capsys, "--num-iters", "1", "--canonical-symmetry", "--double-estimate", *look)
    assert out.returncode == 2 and "Traceback" not in out.stderr and "--double-estimate" in out.stderr
    assert not (tmp_path / "m.pt").exists()
    out = run_main(tmp_path, "--num-iters", "1", "--canonical-symmetry", *look)
    assert out.returncode == 0, out.stderr
    assert "canonical_symmetry" in torch.load(tmp_path / "m.pt", weights_only=True)
    out = refuse_in_process(
        tmp_path, capsys, "--num-iters", "2", "--double-estimate", *look
    )  # the checkpoint is symmetric: same refusal
    assert out.returncode == 2 and "--double-estimate" in out.stderr


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_saves_state_and_the_next_run_continues(tmp_path, sig):
    cmd = [
        sys.executable,
        "-u",
        os.path.join(ROOT, "main.py"),
        "--checkpoint",
        "m.pt",
        "--log-dir",
        "logs",
        *TINY,
        "--num-iters",
        "500",
        "--skip-eval",
    ]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if line.startswith("iter   2/"):
            break
    proc.send_signal(sig)
    rest, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.strip() == "interrupted", err  # the README's promise
    assert "Stopped by" in rest
    state = torch.load(tmp_path / "m.train_state.pt", weights_only=True)
    done = state["iteration"]
    assert done >= 2
    metrics = json.loads((tmp_path / "logs" / "metrics.json").read_text())
    assert metrics["iterations"][-1] == done  # checkpoint, state and metrics agree
    out = run_main(tmp_path, "--num-iters", str(done + 1), "--skip-eval")
    assert out.returncode == 0, out.stderr
    assert f"iter {done + 1:3d}/" in out.stdout and "iter   1/" not in out.stdout
    metrics = json.loads((tmp_path / "logs" / "metrics.json").read_text())
    assert metrics["iterations"] == list(range(1, done + 2))


@pytest.mark.slow
def test_damaged_state_or_checkpoint_gives_one_line_and_exit_2(tmp_path, capsys):
    (tmp_path / "m.train_state.pt").write_bytes(b"not a torch file")
    out = refuse_in_process(tmp_path, capsys, "--num-iters", "1", "--skip-eval")
    assert out.returncode == 2 and "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1
    (tmp_path / "m.train_state.pt").unlink()
    (tmp_path / "m.pt").write_bytes(b"garbage")
    out = refuse_in_process(tmp_path, capsys, "--num-iters", "1", "--skip-eval")
    assert out.returncode == 2 and "corrupt" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.slow
def test_fresh_run_moves_old_logs_aside(tmp_path):
    assert run_main(tmp_path, "--num-iters", "2", "--skip-eval").returncode == 0
    out = run_main(tmp_path, "--num-iters", "1", "--skip-eval", "--fresh")
    assert out.returncode == 0 and "Moved the previous run's logs" in out.stdout
    metrics = json.loads((tmp_path / "logs" / "metrics.json").read_text())
    assert metrics["iterations"] == [1]
    old = list((tmp_path / "logs" / "previous").glob("*/metrics.json"))
    assert len(old) == 1 and json.loads(old[0].read_text())["iterations"] == [1, 2]


@pytest.mark.slow
@pytest.mark.parametrize("targets", ["adi", "scramble"])
def test_seed_targets_train_with_the_loop_and_the_greedy_solve_rate(tmp_path, targets):
    out = run_main(tmp_path, "--num-iters", "2", "--targets", targets, "--states-per-iter", "64", "--skip-eval")
    assert out.returncode == 0, out.stderr
    lines = [l for l in out.stdout.splitlines() if l.startswith("iter ")]
    assert len(lines) == 2 and all(f"{targets} 66 states | greedy" in l and "states/s" in l for l in lines)
    metrics = json.loads((tmp_path / "logs" / "metrics.json").read_text())
    assert metrics["iterations"] == [1, 2] and metrics["num_samples"] == [66, 66]  # 22 whole paths of length 3
    assert (metrics["value_losses"] == [0.0, 0.0]) == (targets == "scramble")  # scramble: no value loss
    assert "policy_head.weight" in torch.load(tmp_path / "m.pt", weights_only=True)
    assert (tmp_path / "m.train_state.pt").is_file()


@pytest.mark.slow
def test_sweep_targets_resume_with_the_saved_best_depth(tmp_path, capsys):
    from cube.All_Positions import NUM_CLASSES
    from cube.Value_Sweep import NEVER

    sweep = ["--targets", "sweep", "--states-per-iter", "64", "--start-scramble-len", "14", "--epochs", "1"]
    sweep += ["--batch-size", "4096", "--skip-eval", *NARROW]
    out = refuse_in_process(tmp_path, capsys, "--num-iters", "1", *sweep)  # a sweep needs the symmetric network
    assert out.returncode == 2 and "--canonical-symmetry" in out.stderr and "Traceback" not in out.stderr
    sweep.append("--canonical-symmetry")
    out = run_main(tmp_path, "--num-iters", "1", *sweep)
    assert out.returncode == 0, out.stderr
    first = torch.load(tmp_path / "m.train_state.pt", weights_only=True)["sweep_best_depth"]
    assert first.dtype == torch.int32 and first.shape == (NUM_CLASSES,) and int(first.min()) >= 1
    out = run_main(tmp_path, "--num-iters", "2", *sweep)
    assert out.returncode == 0 and "Resuming" in out.stdout, out.stderr
    assert [l for l in out.stdout.splitlines() if l.startswith("iter ")][0].startswith("iter   2/2")
    state = torch.load(tmp_path / "m.train_state.pt", weights_only=True)
    second = state["sweep_best_depth"]
    # Restored, not started over: every class reached in iteration 1 is still reached, and more.
    assert (second <= first).all() and (second < NEVER).sum() > (first < NEVER).sum()
    state["sweep_best_depth"][0] = 0  # a damaged bound is refused before any work
    torch.save(state, tmp_path / "m.train_state.pt")
    out = refuse_in_process(tmp_path, capsys, "--num-iters", "3", *sweep)
    assert out.returncode == 2 and "sweep best_depth" in out.stderr and "--fresh" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_exact_recipe_trains_a_distance_network(tmp_path, capsys):
    from cube.Cube_Checkpoints import load_model

    tiny = ["--recipe", "exact", "--states-per-iter", "64", "--epochs", "1", "--batch-size", "4096", "--skip-eval"]
    tiny += NARROW
    out = refuse_in_process(tmp_path, capsys, "--num-iters", "1", *tiny, "--distance-classes", "0")
    assert out.returncode == 2 and "--distance-classes" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    out = run_main(tmp_path, "--num-iters", "1", *tiny)
    assert out.returncode == 0, out.stderr
    model = load_model(str(tmp_path / "m.pt"))
    assert model.distance_classes == 20 and model.symmetric
    # A saved distance network keeps its head; the scalar loss cannot train it.
    out = refuse_in_process(tmp_path, capsys, "--num-iters", "2", *tiny, "--value-loss", "logit")
    assert out.returncode == 2 and "--value-loss distance" in out.stderr

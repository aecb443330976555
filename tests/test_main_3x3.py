"""main.py --puzzle 3x3: the recipe, the options only the 2x2 has, the network's size, and
end-to-end runs with tiny settings (outputs, resume, workers, a 2x2 model refused)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest
import torch

from conftest import REPO, main_in_process, make_checkpoint
from cube.Cube_Checkpoints import hidden_sizes_of, load_model
from cube.Pair_Input import CubiePairs
from cube.Train_Args import TARGETS_3X3
from main import learning_rate, parse_args
from Policy_Value_Net import PolicyValueNet
from run.Checkpoints import save_checkpoint
from run.Recipes import RECIPES

ROOT = str(REPO)
#: The 3x3 recipe, shrunk to seconds: a small network, 520 states an iteration (20 walks of 26
#: moves), a constant rate (the recipe's anneals over wall time, which no two runs share).
TINY_3X3 = [
    "--recipe", "3x3", "--hidden-sizes", "64", "32", "--states-per-iter", "520", "--batch-size", "64",
    "--lr-schedule", "constant", "--episodes-per-iter", "8", "--max-episode-steps", "10",
    "--eval-runs", "2", "--eval-max-len", "2", "--seed", "3", "--no-progress",
    "--checkpoint", "m.pt", "--log-dir", "logs",
]  # fmt: skip
#: MCTS self-play (the original's trainer) on the 3x3, shrunk to seconds: 4 episodes of at most 4 moves at 4
#: simulations, training from the first iteration on 16 of the buffer's states.
TINY_SELFPLAY = [
    "--puzzle", "3x3", "--hidden-sizes", "64", "32", "--episodes-per-iter", "4", "--sims", "4",
    "--max-episode-steps", "4", "--epochs", "1", "--batch-size", "8", "--min-buffer-batches", "1",
    "--sample-batches", "2", "--window", "2", "--solve-threshold", "0.0", "--seed", "3", "--no-progress",
    "--checkpoint", "m.pt", "--log-dir", "logs",
]  # fmt: skip


def run_main(folder, *args):
    """main.py with ``args`` in ``folder``, inside this process (``conftest.main_in_process``)."""
    return main_in_process(folder, *args)


def test_recipe_3x3_and_the_3x3_defaults():
    a = parse_args(["--recipe", "3x3"])
    assert (a.puzzle, a.targets, a.walk_len) == ("3x3", "diffusion", 26)
    assert (a.value_loss, a.distance_classes) == ("distance", 27)
    assert (a.checkpoint, a.log_dir, a.eval_solver, a.eval_max_len) == (
        "rubik3x3_policy_value.pt",
        "training_logs_3x3",
        "beam",
        26,
    )
    assert a.lr_schedule == "cosine-time" and a.time_budget == 60 and a.keep_optimizer
    long = parse_args(["--recipe", "3x3-long"])
    assert long.time_budget == 480 and {k: v for k, v in vars(long).items() if k != "time_budget"} == {
        k: v for k, v in vars(a).items() if k not in ("time_budget", "recipe")
    } | {"recipe": "3x3-long"}
    b = parse_args(["--puzzle", "3x3", "--targets", "scramble"])
    assert (b.checkpoint, b.log_dir, b.eval_max_steps, b.hidden_sizes) == (
        "rubik3x3_policy_value.pt",
        "training_logs_3x3",
        100,
        [512, 1024, 512, 128],
    )
    two = parse_args([])  # the 2x2: the original's files and evaluation
    assert (two.puzzle, two.checkpoint, two.log_dir, two.eval_solver, two.eval_max_len, two.eval_max_steps) == (
        "2x2",
        "rubik_policy_value.pt",
        "training_logs",
        "mcts",
        20,
        40,
    )


def test_the_recipe_network_ships_under_20_mb(tmp_path):
    r = RECIPES["3x3"]
    sizes, pairs = tuple(r["hidden_sizes"]), r["input"] == "pairs"
    net = PolicyValueNet(324, hidden_sizes=sizes, distance_classes=r["distance_classes"], pair_input=pairs)
    save_checkpoint(net, str(tmp_path / "net.pt"))
    assert (tmp_path / "net.pt").stat().st_size < 20 * 2**20
    model = load_model(str(tmp_path / "net.pt"), puzzle="3x3")  # sizes and head read back from the file
    assert model.hidden_sizes == tuple(r["hidden_sizes"]) and model.distance_classes == 27
    assert isinstance(model.body[0], CubiePairs)  # the recipe's first layer reads cubie pairs (Pair_Input)
    assert hidden_sizes_of(PolicyValueNet().state_dict()) == (512, 1024, 512, 128)


@pytest.mark.parametrize(
    "args, flag",
    [
        (["--recipe", "3x3", "--targets", "sweep", "--canonical-symmetry"], "--targets sweep"),
        (["--recipe", "3x3", "--canonical-symmetry"], "--canonical-symmetry"),
        (["--recipe", "3x3", "--canonical-orientation"], "--canonical-orientation"),
        (["--puzzle", "3x3", "--targets", "lookahead", "--double-estimate"], "--double-estimate"),
    ],
)
def test_options_only_the_2x2_has_are_refused_in_one_sentence(args, flag, capsys):
    with pytest.raises(SystemExit) as exc:
        parse_args(args)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1
    assert f"{flag} is the 2x2's so far (the sweep and the cube's symmetries)" in err and "--recipe 3x3" in err
    assert "--targets selfplay, lookahead, adi, scramble or diffusion" in err and "self-play" not in err


def test_the_3x3_trains_with_every_trainer_but_the_sweep():
    """MCTS self-play (the default trainer) and the lookahead read the puzzle's entry: the 3x3 takes them."""
    assert TARGETS_3X3 == ("selfplay", "lookahead", "adi", "scramble", "diffusion")
    assert parse_args(["--puzzle", "3x3"]).targets == "selfplay"
    assert parse_args(["--puzzle", "3x3", "--search", "gumbel"]).search == "gumbel"
    assert parse_args(["--puzzle", "3x3", "--targets", "lookahead"]).targets == "lookahead"
    # The recipe's walk length is its diffusion targets': another --targets drops it, a given one stays refused.
    for targets in ("selfplay", "lookahead"):
        a = parse_args(["--recipe", "3x3", "--targets", targets])
        assert (a.targets, a.walk_len, a.distance_classes) == (targets, 0, 27)
    assert parse_args(["--recipe", "3x3", "--targets", "scramble"]).walk_len == 26


@pytest.mark.parametrize(
    "args, message",
    [
        (["--recipe", "3x3", "--time-budget", "0"], "--lr-schedule cosine-time anneals over the --time-budget"),
        (["--recipe", "3x3", "--distance-classes", "20"], "--distance-classes must exceed --walk-len"),
        (["--walk-len", "5"], "--walk-len is for --targets adi, scramble or diffusion"),
        (["--recipe", "3x3", "--targets", "selfplay", "--walk-len", "26"], "--walk-len is for --targets adi"),
    ],
)
def test_bad_3x3_combinations_exit_2(args, message, capsys):
    with pytest.raises(SystemExit) as exc:
        parse_args(args)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and message in err and err.count("\n") == 1


def test_cosine_time_anneals_over_the_time_budget():
    a = parse_args(["--recipe", "3x3", "--warmup-iters", "0", "--time-budget", "10"])
    assert learning_rate(a, 1, 0.0) == pytest.approx(a.lr)
    assert learning_rate(a, 7, 300.0) == pytest.approx(a.lr_end + 0.5 * (a.lr - a.lr_end))  # half the budget
    assert learning_rate(a, 9, 600.0) == pytest.approx(a.lr_end) == learning_rate(a, 10, 900.0)
    warm = parse_args(["--recipe", "3x3"])
    assert learning_rate(warm, 1, 0.0) == pytest.approx(warm.lr / 2)  # first of two warm-up iterations
    cos = parse_args(["--lr-schedule", "cosine", "--num-iters", "3", "--lr", "1e-3", "--lr-end", "1e-5"])
    assert learning_rate(cos, 2, 1e9) == pytest.approx(1e-5 + 0.5 * (1e-3 - 1e-5) * (1 + math.cos(math.pi / 2)))


@pytest.mark.slow
def test_3x3_diffusion_run_writes_its_outputs_and_resumes_like_an_uninterrupted_run(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    out = run_main(tmp_path / "a", *TINY_3X3, "--num-iters", "2")
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if line.startswith("iter ")]
    assert len(lines) == 2 and all("diffusion 520 states | greedy" in line for line in lines), out.stdout
    assert "Evaluation: len 1: " in out.stdout
    model = load_model(str(tmp_path / "a" / "m.pt"), puzzle="3x3")
    assert (model.obs_dim, model.hidden_sizes, model.distance_classes) == (324, (64, 32), 27)
    rows = json.loads((tmp_path / "a" / "logs" / "eval_scramble_result.json").read_text())
    assert [r["scramble_len"] for r in rows] == [1, 2] and rows[0]["mean_optimal"] is None
    assert rows[0]["mean_kociemba"] == 1.0 and rows[0]["solve_rate"] == 1.0  # a beam sees every child of depth 1
    # Stopped after one iteration and run again: the same run.
    assert run_main(tmp_path / "b", *TINY_3X3, "--num-iters", "1", "--skip-eval").returncode == 0
    again = run_main(tmp_path / "b", *TINY_3X3, "--num-iters", "2", "--skip-eval")
    assert again.returncode == 0 and "Resuming" in again.stdout and "iter   2/2" in again.stdout
    a = json.loads((tmp_path / "a" / "logs" / "metrics.json").read_text())
    b = json.loads((tmp_path / "b" / "logs" / "metrics.json").read_text())
    assert a["iterations"] == b["iterations"] == [1, 2] and a["num_samples"] == b["num_samples"] == [520, 520]
    assert a["losses"] == pytest.approx(b["losses"], rel=1e-5)
    state = torch.load(tmp_path / "b" / "m.train_state.pt", weights_only=True)
    assert "optimizer" in state  # the recipe keeps one Adam for the run


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["mcts", "gumbel"])
def test_3x3_run_evaluates_with_the_game_searches(solver, tmp_path):
    """``--eval-solver mcts`` (or gumbel) on the 3x3: the final evaluation searches the 3x3 with the run's network
    (kociemba's lengths beside), 4 simulations a move for at most 3 moves."""
    assert parse_args(["--recipe", "3x3", "--eval-solver", solver]).eval_solver == solver
    flags = ["--num-iters", "1", "--eval-solver", solver, "--eval-sims", "4", "--eval-max-steps", "3"]
    out = run_main(tmp_path, *TINY_3X3, *flags)
    assert out.returncode == 0, out.stderr
    assert "Evaluation: len 1: " in out.stdout
    rows = json.loads((tmp_path / "logs" / "eval_scramble_result.json").read_text())
    assert [r["scramble_len"] for r in rows] == [1, 2] and [r["episodes"] for r in rows] == [2, 2]
    assert [r["mean_kociemba"] for r in rows] == [1.0, 2.0] and rows[0]["mean_optimal"] is None
    assert all(4 <= r["mean_nodes"] <= 4 * 3 for r in rows)  # every cube 1 to 3 moves of 4 simulations


@pytest.mark.slow
def test_3x3_scramble_run_and_a_2x2_model_refused(tmp_path):
    args = [*TINY_3X3, "--targets", "scramble", "--value-loss", "mse", "--distance-classes", "0", "--num-iters", "1"]
    out = run_main(tmp_path, *args)
    assert out.returncode == 0, out.stderr
    assert "scramble 520 states | greedy" in out.stdout
    assert "Evaluation: len 1: 100%" in out.stdout  # a beam ranked by the policy (the value head is untrained)
    make_checkpoint(tmp_path / "two.pt")
    refused = run_main(tmp_path, *args, "--checkpoint", "two.pt", "--skip-eval")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "two.pt holds a network for the 2x2, not the 3x3" in refused.stderr


@pytest.mark.slow
def test_the_shipped_3x3_model_solves_a_scramble_with_a_small_beam(tmp_path):
    """``pretrained/rubik3x3_policy_value.pt`` (``--recipe 3x3-long``): a beam of 300 ranked by its
    value solves a 14-move scramble, the solution replayed on the cube by ``test.py``."""
    cmd = [sys.executable, os.path.join(ROOT, "test.py"), "--puzzle", "3x3", "--solver", "beam"]
    cmd += ["--beam-width", "300", "--scramble-len", "14", "--seed", "1", "--json"]
    out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["checkpoint"].endswith(os.path.join("pretrained", "rubik3x3_policy_value.pt"))
    assert result["solved"] and result["length"] <= 26, result


@pytest.mark.slow
def test_a_residual_network_trains_and_resumes_with_its_blocks(tmp_path):
    """``--residual-blocks 2``: the run's network and its checkpoint hold the blocks; the same command continues
    the run, and one without the flag is refused in one sentence (a run keeps its flags)."""
    flags = [*TINY_3X3, "--residual-blocks", "2", "--skip-eval"]
    assert run_main(tmp_path, *flags, "--num-iters", "1").returncode == 0
    model = load_model(str(tmp_path / "m.pt"), puzzle="3x3")
    assert (model.hidden_sizes, model.residual_blocks) == ((64, 32), 2)
    other = run_main(tmp_path, *TINY_3X3, "--num-iters", "2", "--skip-eval")
    assert other.returncode == 2 and "--residual-blocks 2" in other.stderr
    again = run_main(tmp_path, *flags, "--num-iters", "2")
    assert again.returncode == 0, again.stderr
    assert [line.split()[1] for line in again.stdout.splitlines() if line.startswith("iter ")] == ["2/2"]
    assert load_model(str(tmp_path / "m.pt"), puzzle="3x3").residual_blocks == 2


def metrics_and_weights(folder):
    """A run's metrics.json and its checkpoint's weights."""
    metrics = json.loads((folder / "logs" / "metrics.json").read_text())
    return metrics, torch.load(folder / "m.pt", weights_only=True)


def same_run(a, b) -> bool:
    """Two runs' metrics and weights equal: the same iterations, solve rates and losses, bit for bit."""
    (ma, wa), (mb, wb) = metrics_and_weights(a), metrics_and_weights(b)
    return ma == mb and wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)


@pytest.mark.slow
def test_3x3_selfplay_run_trains_a_3x3_network_and_resumes_like_an_uninterrupted_run(tmp_path):
    """``--targets selfplay`` (the default) on the 3x3: MCTS self-play episodes fill the buffer with 3x3 states,
    the checkpoint loads as a 3x3 network, the final evaluation runs; stopped after one iteration and run
    again, the same run."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    out = run_main(tmp_path / "a", *TINY_SELFPLAY, "--num-iters", "2", "--eval-runs", "2", "--eval-max-len", "1")
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if line.startswith("iter ")]
    assert len(lines) == 2 and all("| sims 4 | T 1.00 |" in line and "samples 16" in line for line in lines)
    assert "Evaluation: len 1: " in out.stdout
    model = load_model(str(tmp_path / "a" / "m.pt"), puzzle="3x3")
    assert (model.obs_dim, model.hidden_sizes) == (324, (64, 32))
    state = torch.load(tmp_path / "a" / "m.train_state.pt", weights_only=True)
    assert state["buffer"]["cubes"].shape[1] == 54 and len(state["buffer"]["zs"]) >= 16
    assert run_main(tmp_path / "b", *TINY_SELFPLAY, "--num-iters", "1", "--skip-eval").returncode == 0
    again = run_main(tmp_path / "b", *TINY_SELFPLAY, "--num-iters", "2", "--eval-runs", "2", "--eval-max-len", "1")
    assert again.returncode == 0 and "Resuming" in again.stdout and "iter   2/2" in again.stdout
    assert same_run(tmp_path / "a", tmp_path / "b")


@pytest.mark.slow
def test_3x3_selfplay_with_two_workers_resumes_like_an_uninterrupted_run(tmp_path):
    """``--workers 2`` (local processes) on the 3x3, as tests/test_workers.py checks the 2x2: the workers play the
    3x3's episodes, and a run stopped after one iteration continues to the uninterrupted run's numbers."""
    flags = [*TINY_SELFPLAY, "--workers", "2", "--skip-eval"]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    out = run_main(tmp_path / "a", *flags, "--num-iters", "2")
    assert out.returncode == 0, out.stderr
    assert load_model(str(tmp_path / "a" / "m.pt"), puzzle="3x3").obs_dim == 324
    assert run_main(tmp_path / "b", *flags, "--num-iters", "1").returncode == 0
    assert run_main(tmp_path / "b", *flags, "--num-iters", "2").returncode == 0
    assert same_run(tmp_path / "a", tmp_path / "b")


@pytest.mark.slow
@pytest.mark.parametrize(
    "extra, what",
    [
        (["--search", "gumbel"], "| gumbel sims 4 |"),
        (["--targets", "lookahead", "--states-per-iter", "30"], "| lookahead 30 states |"),
    ],
)
def test_3x3_gumbel_selfplay_and_lookahead_train_a_3x3_network(extra, what, tmp_path):
    """The Gumbel search's self-play and the one-ply lookahead: the same trainers as the 2x2's, on the 3x3."""
    out = run_main(tmp_path, *TINY_SELFPLAY, *extra, "--num-iters", "1", "--skip-eval")
    assert out.returncode == 0, out.stderr
    assert what in out.stdout
    assert load_model(str(tmp_path / "m.pt"), puzzle="3x3").obs_dim == 324

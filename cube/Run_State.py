"""The cube's training run (``main.py``'s ``CubeTrainer`` drives it through Run_Loop.py): ``Run`` (what the
training state file saves: network, curriculum, replay buffer, random generator, metrics, optimizer, sweep
depths), the cube's parts of that file and their checks before a run resumes, the memory its flags need, and
the checks of a network against the flags. Every problem a user can fix is one sentence: ``RunError`` or
``CheckpointError``.

The replay buffer and the checks of a saved state read their shapes from the puzzle's entry
(``Puzzles.get_puzzle``): stickers per cube, moves, colours."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

import numpy as np
import torch

from cube.All_Positions import NUM_CLASSES
from cube.Cube_Checkpoints import model_from_state
from cube.Puzzles import PUZZLES, get_puzzle
from cube.Value_Sweep import Sweeper
from Plot_Scatter import METRIC_KEYS
from Policy_Value_Net import PolicyValueNet
from run import Cli
from run.Checkpoints import go_size_of
from run.Run_Files import RunError, all_finite, check_memory_needs, is_int
from run.Run_IO import CheckpointError
from run.Run_Loop import rng_from_state

#: The format of the cube's training state file; a file of another version is refused.
STATE_VERSION = 1


@dataclass
class Curriculum:
    """The original's curriculum over scramble length.

    The solve rate of every trained iteration enters a window of the last ``window``
    values; once the window is full and its mean exceeds ``threshold`` the length grows by
    2 while it is at most 9, by 1 while it is at most 15, and the window is cleared.
    """

    scramble_len: int = 3
    window: int = 8
    threshold: float = 0.9
    recent: list[float] = field(default_factory=list)

    def record(self, solve_rate: float) -> bool:
        """Add one trained iteration's solve rate; True if the scramble length changed."""
        self.recent = (self.recent + [float(solve_rate)])[-self.window :]
        if len(self.recent) < self.window or float(np.mean(self.recent)) <= self.threshold:
            return False
        old = self.scramble_len
        if self.scramble_len <= 9:
            self.scramble_len += 2
        elif self.scramble_len <= 15:
            self.scramble_len += 1
        self.recent = []
        return self.scramble_len != old


class ReplayBuffer:
    """The last ``capacity`` self-play states, stored compactly (cubes as int8 stickers, not
    one-hot): ``cubes (n, num_stickers)``, ``pis (n, num_actions)``, ``zs (n,)``, the sizes of
    ``puzzle`` (a ``Puzzles.Puzzle`` or its name; default the 2x2: 24 stickers, 12 moves)."""

    def __init__(self, capacity: int, puzzle=None):
        self.capacity = capacity
        self.puzzle = get_puzzle(puzzle)
        self.cubes = np.zeros((0, self.puzzle.num_stickers), dtype=np.int8)
        self.pis = np.zeros((0, self.puzzle.num_actions), dtype=np.float32)
        self.zs = np.zeros((0,), dtype=np.float32)

    def __len__(self) -> int:
        return len(self.zs)

    def extend(self, cubes: np.ndarray, pis: np.ndarray, zs: np.ndarray) -> None:
        self.cubes = np.concatenate([self.cubes, cubes])[-self.capacity :]
        self.pis = np.concatenate([self.pis, pis])[-self.capacity :]
        self.zs = np.concatenate([self.zs, zs.astype(np.float32)])[-self.capacity :]

    def sample(self, rng: np.random.Generator, size: int) -> list[tuple[np.ndarray, np.ndarray, float]]:
        """``size`` distinct states, as the original's ``(observation, pi, z)`` tuples."""
        idx = rng.choice(len(self), size=min(size, len(self)), replace=False)
        return list(zip(self.puzzle.encode(self.cubes[idx]), self.pis[idx], self.zs[idx].tolist()))

    def state(self) -> dict:
        return {
            "cubes": torch.from_numpy(self.cubes.copy()),
            "pis": torch.from_numpy(self.pis.copy()),
            "zs": torch.from_numpy(self.zs.copy()),
        }

    def load(self, state: dict) -> None:
        self.cubes, self.pis, self.zs = state["cubes"].numpy(), state["pis"].numpy(), state["zs"].numpy()


@dataclass
class Run:
    """A run in progress: what its training state file saves, live. The state file is the
    commit point of an iteration; the checkpoint, metrics.json and the chart follow from it."""

    model: PolicyValueNet
    curriculum: Curriculum
    buffer: ReplayBuffer
    rng: np.random.Generator
    metrics: dict[str, list]  # MetricsLogger's lists, one entry per trained iteration
    optimizer: torch.optim.Optimizer | None = None  # with --keep-optimizer
    iteration: int = 0  # the last completed iteration; 0 = none yet
    sweeper: Sweeper | None = None  # with --targets sweep: its best_depth is saved as "sweep_best_depth"
    seconds: float = 0.0  # wall time of the completed iterations, every session together (--time-budget)


#: The cube's parts of every training state (besides Run_Loop.STATE_KEYS).
STATE_KEYS = ("scramble_len", "recent_solve_rates", "buffer")


def state_parts(run: Run) -> dict:
    """The cube's parts of the training state file (read back by ``run_from_state``)."""
    state = {
        "scramble_len": run.curriculum.scramble_len,
        "recent_solve_rates": list(run.curriculum.recent),
        "buffer": run.buffer.state(),
    }
    if run.sweeper is not None:
        state["sweep_best_depth"] = torch.from_numpy(run.sweeper.best_depth.copy())
    return state


def foreign_problem(state: dict) -> str | None:
    if "go_size" in state:
        return "is a Go run's training state (main.py --game goN), not a cube's"
    return None


def parts_problem(state: dict, args: argparse.Namespace) -> str | None:
    """What is wrong with the cube's parts of a checked training state of a run with these flags (a phrase),
    or None if they are sound: every part in its range, and consistent with the metrics."""
    length = state["scramble_len"]
    if not is_int(length) or not 1 <= length <= Cli.MAX_SCRAMBLE_LEN:
        return f"has scramble length {length!r} (must be a whole number from 1 to {Cli.MAX_SCRAMBLE_LEN:,})"
    recent = state["recent_solve_rates"]
    if not isinstance(recent, list) or not all_finite(recent) or not all(0 <= r <= 1 for r in recent):
        return "has recent solve rates that are not numbers between 0 and 1"
    problem = buffer_problem(state["buffer"], get_puzzle(args.puzzle))
    if problem is None:
        problem = progress_problem(state, args)
    if problem is None and "sweep_best_depth" in state:
        problem = sweep_problem(state["sweep_best_depth"])
    return problem


def metrics_problem(metrics: dict) -> str | None:
    """What is wrong with the cube's metrics (Run_Loop has checked what every game's share), or None."""
    if not all(0 <= r <= 1 for r in metrics["solve_rates"]):
        return "has solve rates outside 0..1"
    if not all(is_int(n) and n >= 1 for n in metrics["scramble_lengths"] + metrics["num_samples"]):
        return "has scramble lengths or sample counts that are not whole numbers of at least 1"
    return None


def buffer_problem(buffer, puzzle) -> str | None:
    """What is wrong with a saved replay buffer of ``puzzle`` (a ``Puzzles.Puzzle``: its sticker
    and move counts give the shapes), or None: stickers that are colours, policy targets that
    are distributions, values on the value scale."""
    if not isinstance(buffer, dict) or not all(torch.is_tensor(buffer.get(k)) for k in ("cubes", "pis", "zs")):
        return "has a replay buffer without its cubes, pis and zs tensors"
    cubes, pis, zs = buffer["cubes"], buffer["pis"], buffer["zs"]
    stickers, actions = puzzle.num_stickers, puzzle.num_actions
    colours = puzzle.obs_dim // stickers  # the network sees each sticker one-hot over the colours
    if cubes.dtype != torch.int8 or cubes.dim() != 2 or cubes.shape[1] != stickers:
        return (
            f"has replay buffer cubes of shape {tuple(cubes.shape)} and type {cubes.dtype} (need n x {stickers} int8)"
        )
    if pis.dtype != torch.float32 or pis.dim() != 2 or pis.shape[1] != actions:
        return (
            f"has replay buffer policies of shape {tuple(pis.shape)} and type {pis.dtype} (need n x {actions} float32)"
        )
    if zs.dtype != torch.float32 or zs.dim() != 1:
        return f"has replay buffer values of shape {tuple(zs.shape)} and type {zs.dtype} (need n float32)"
    if not len(cubes) == len(pis) == len(zs):
        return f"has replay buffer arrays of different lengths ({len(cubes)}, {len(pis)}, {len(zs)})"
    if len(cubes) and (int(cubes.min()) < 0 or int(cubes.max()) >= colours):
        return f"has replay buffer stickers outside 0..{colours - 1}"
    if not (torch.isfinite(pis).all() and torch.isfinite(zs).all()):
        return "has replay buffer targets that are not finite"
    if len(pis) and (bool((pis < 0).any()) or float((pis.double().sum(dim=1) - 1).abs().max()) > 1e-3):
        return "has replay buffer policy targets that are not distributions (non-negative, summing to 1)"
    if len(zs) and float(zs.abs().max()) > 1:
        return "has replay buffer values outside -1..1 (the value scale)"
    return None


def sweep_problem(best_depth) -> str | None:
    """What is wrong with a saved ``Sweeper.best_depth`` (the shortest scramble depth each
    class of positions was reached at), or None."""
    if not torch.is_tensor(best_depth):
        return f"has a sweep best_depth that is a {type(best_depth).__name__}, not a tensor"
    if best_depth.dtype != torch.int32 or best_depth.shape != (NUM_CLASSES,):
        return (
            f"has a sweep best_depth of shape {tuple(best_depth.shape)} and type {best_depth.dtype} "
            f"(need {NUM_CLASSES} int32)"
        )
    if int(best_depth.min()) < 1:
        return "has a sweep best_depth below 1 (a scramble depth is at least 1)"
    return None


def progress_problem(state: dict, args: argparse.Namespace) -> str | None:
    """What in a training state contradicts how a run with these flags goes (a phrase), or None:
    every iteration trains, with --targets selfplay from the first whose replay buffer holds
    --min-buffer-batches batches on (the buffer only grows, up to --buffer-size); the curriculum's
    scramble length starts at --start-scramble-len and only grows; its window holds the solve
    rates logged last."""
    its, n = state["metrics"]["iterations"], len(state["buffer"]["zs"])
    if args.targets != "selfplay":
        if its != list(range(1, state["iteration"] + 1)):
            return (
                f"has metrics of {len(its)} iterations of {state['iteration']} (--targets {args.targets} trains each)"
            )
        if n:
            return f"has a replay buffer, which --targets {args.targets} does not fill"
    elif n > args.buffer_size:
        return f"has a replay buffer of {n} states, more than --buffer-size {args.buffer_size}"
    elif bool(its) != (n >= args.batch_size * args.min_buffer_batches):
        return f"has metrics of {len(its)} iterations, which its replay buffer of {n} states contradicts"
    lengths = [args.start_scramble_len, *state["metrics"]["scramble_lengths"], state["scramble_len"]]
    if lengths != sorted(lengths):
        return "has scramble lengths that the curriculum, which only lengthens them, cannot have reached"
    recent, rates = state["recent_solve_rates"], state["metrics"]["solve_rates"]
    if len(recent) > args.window or (recent and recent != rates[-len(recent) :]):
        return "has recent solve rates that are not the last ones of its metrics"
    return None


def run_from_state(state: dict, args: argparse.Namespace, device: torch.device) -> Run:
    """The run saved in a checked ``state`` (Run_Loop.read_state has checked it)."""
    # The file's name is Run_Loop's to give: a CheckpointError here names "state", and read_state keeps
    # what follows the name.
    model = model_from_checked_state(state["model"], "state", args).to(device)
    rng = rng_from_state(state, args.seed)
    buffer = ReplayBuffer(args.buffer_size, args.puzzle)
    buffer.load(state["buffer"])
    optimizer = new_optimizer(args, model)
    if optimizer is not None and "optimizer" in state:
        optimizer.load_state_dict(state["optimizer"])
    curriculum = Curriculum(state["scramble_len"], args.window, args.solve_threshold, list(state["recent_solve_rates"]))
    metrics = {k: list(v) for k, v in state["metrics"].items()}
    sweeper = new_sweeper(args, model, state.get("sweep_best_depth"))
    seconds = float(state.get("seconds", 0.0))  # absent in states saved before --time-budget
    return Run(model, curriculum, buffer, rng, metrics, optimizer, state["iteration"], sweeper, seconds)


# --------------------------------------------------------------------------- memory
#: Bytes of a search-tree node (MCTS_Core's and Gumbel_MCTS's flat arrays): per move a child index
#: and up to 4 float64 statistics, and besides them its stickers, its move, face count and flags.
NODE_BYTES_PER_MOVE = 8 + 4 * 8
NODE_BYTES_BESIDES = 32


def memory_needs(args: argparse.Namespace, scramble_len: int) -> list[list[tuple[int, str]]]:
    """The largest arrays that live at once while one iteration trains, and then while the final
    evaluation runs: per phase a list of ``(bytes, what sets them)``. A lower bound (the network
    and Python's own objects are left out), so flags it finds too big surely are."""
    puzzle = get_puzzle(args.puzzle)
    node = puzzle.num_stickers + NODE_BYTES_BESIDES + puzzle.num_actions * NODE_BYTES_PER_MOVE
    state = puzzle.num_stickers + 4 * (puzzle.num_actions + 1)  # int8 stickers, float32 policy and value
    row = 4 * (puzzle.obs_dim + puzzle.num_actions + 1)  # a training row: float32 input, policy, value
    scrambles = (args.episodes_per_iter * max(scramble_len, args.walk_len) * 8, "the scrambles' moves")
    if args.targets == "selfplay":
        training = [
            (args.episodes_per_iter * (max(args.sims) + 1) * node, "the search trees (--episodes-per-iter x --sims)"),
            (
                args.episodes_per_iter * args.max_episode_steps * state,
                "the episodes (--episodes-per-iter x --max-episode-steps)",
            ),
            (2 * args.buffer_size * state, "the replay buffer (--buffer-size)"),
            (args.batch_size * args.sample_batches * row, "the training sample (--batch-size x --sample-batches)"),
        ]
    else:
        training = [(args.states_per_iter * row, "the training states (--states-per-iter)")]
    evaluation = []
    if not args.skip_eval and args.eval_solver == "mcts":
        evaluation.append((args.eval_runs * (args.eval_sims + 1) * node, "the evaluation (--eval-runs x --eval-sims)"))
    return [[*training, scrambles], evaluation]


def check_memory(args: argparse.Namespace, scramble_len: int, available: int | None = None) -> None:
    """Raise RunError (one sentence) where the flags, with the run's current ``scramble_len``, need more
    memory at once than the machine has (``available``; default its physical memory)."""
    check_memory_needs(memory_needs(args, scramble_len), available)


# --------------------------------------------------------------------------- starting a run
def network_flags(args: argparse.Namespace) -> dict:
    return dict(
        canonical_orientation=args.canonical_orientation,
        canonical_symmetry=args.canonical_symmetry,
        distance_classes=args.distance_classes,
    )


def model_from_checked_state(state: dict, path: str, args: argparse.Namespace) -> PolicyValueNet:
    """``model_from_state``, with every failure a CheckpointError naming ``path``."""
    if not all(isinstance(k, str) for k in state):
        raise CheckpointError(f"checkpoint '{path}' is not a PolicyValueNet state_dict (keys that are not names).")
    if (size := go_size_of(state)) is not None:
        raise CheckpointError(
            f"checkpoint '{path}' is a Go network for {size}x{size}, not a cube's (main.py --game go{size})."
        )
    try:
        return model_from_state(state, path, **network_flags(args))
    except CheckpointError:
        raise
    except Exception as exc:  # values that are no tensors, ...
        raise CheckpointError(f"checkpoint '{path}' does not fit PolicyValueNet ({type(exc).__name__}).") from None


def new_optimizer(args: argparse.Namespace, model: PolicyValueNet) -> torch.optim.Optimizer | None:
    """With --keep-optimizer, the one Adam of the whole run; else None (a new one per iteration)."""
    return torch.optim.Adam(model.parameters(), lr=args.lr) if args.keep_optimizer else None


def new_sweeper(args: argparse.Namespace, model: PolicyValueNet, best_depth: torch.Tensor | None = None):
    """With --targets sweep (and a --canonical-symmetry network, which ``start_run`` demands),
    the run's Sweeper, continuing from a saved ``best_depth``; else None."""
    if args.targets != "sweep" or not model.symmetric:
        return None
    print("Sweep tables: the 77,802 classes of positions up to symmetry (built once, about a minute).")
    return Sweeper(None if best_depth is None else best_depth.numpy().copy())


def new_model(args: argparse.Namespace, device: torch.device) -> PolicyValueNet:
    """The network of the flags, from random weights seeded by ``--seed``. Every start builds it first (a
    resumed run then replaces it), so that torch's random stream after the start is the same whichever start."""
    torch.manual_seed(args.seed)
    puzzle = get_puzzle(args.puzzle)
    return PolicyValueNet(
        puzzle.obs_dim,
        hidden_sizes=tuple(args.hidden_sizes),
        pair_input=args.input == "pairs",
        residual_blocks=args.residual_blocks,
        **network_flags(args),
    ).to(device)


def fresh_run(args: argparse.Namespace, model: PolicyValueNet) -> Run:
    """A run at iteration 0 around ``model``: the curriculum at --start-scramble-len, an empty buffer."""
    curriculum = Curriculum(args.start_scramble_len, args.window, args.solve_threshold)
    metrics = {k: [] for k in METRIC_KEYS}
    buffer = ReplayBuffer(args.buffer_size, args.puzzle)
    run = Run(model, curriculum, buffer, np.random.default_rng(args.seed), metrics)
    run.optimizer = new_optimizer(args, model)
    return run


def check_run(args: argparse.Namespace, run: Run) -> Run:
    """``run`` if its network fits the flags (RunError, one sentence, if not), with its sweeper."""
    puzzle = get_puzzle(args.puzzle)
    if run.model.obs_dim != puzzle.obs_dim:
        made_for = [p.name for p in PUZZLES.values() if p.obs_dim == run.model.obs_dim]
        raise RunError(
            f"{args.checkpoint} holds a network for the {made_for[0] if made_for else 'another cube'}, not the "
            f"{puzzle.name}; give another --checkpoint or use --fresh."
        )
    if args.double_estimate and run.model.symmetric:
        raise RunError(
            "--double-estimate reads a mirror image a second time, but a --canonical-symmetry network sees a cube "
            "and its mirror image as one input; leave one of the two flags out."
        )
    if args.targets == "sweep" and not run.model.symmetric:
        raise RunError(
            "--targets sweep reads one network value per class of positions up to symmetry, so it needs "
            "--canonical-symmetry."
        )
    if (args.value_loss == "distance") != bool(run.model.distance_classes):
        raise RunError(
            "--value-loss distance trains a distance head and a distance head needs it: give both "
            "--value-loss distance and --distance-classes K, or neither (a saved distance network keeps its head)."
        )
    if run.sweeper is None:  # a new run, or a saved one without a sweep's best_depth
        run.sweeper = new_sweeper(args, run.model)
    return run

"""What every solver of ``Solvers`` shares: the result of one solve, the value read as moves,
the value and policy functions of a network (or of the exact table), and replay checks.

Functions instead of a model: every solver takes ``value_fn(cubes (n, stickers) int8) -> (n,)``
and/or ``policy_fn(cubes) -> logits (n, A)``. ``network_fns(model)`` builds both from a network;
``exact_value_fn()`` is the table-backed oracle ``v = 1 - 0.03 * distance``. A function may
carry ``reads_positions = True``: it reads every orientation of a position alike (see
``evaluate_once``).

Value scale: the network's value reads ``v ~ 1 - 0.03 d`` for a cube ``d`` moves from solved
(the original's target ``max(0.4, 1 - 0.03 n)``), so ``Puzzles.value_as_moves(v) = (1 - v) / 0.03``
(the puzzle's ``value_per_move``).

Move history: ``last``/``count`` give, per cube, the move that produced it and how many times
in a row its face was turned (``start_history``; default: a fresh cube).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from cube import Cube_Model
from cube.Cube_Model import NO_ACTION, NUM_ACTIONS, SYMMETRY_COUNT
from cube.Puzzles import VALUE_PER_MOVE, Puzzle, get_puzzle
from engine import Precision
from engine.Precision import eval_mode

#: ``value_fn(cubes (n, stickers) int8) -> values (n,)``, on the network's scale (1 = solved).
ValueFn = Callable[[np.ndarray], np.ndarray]
#: ``policy_fn(cubes (n, stickers) int8) -> logits (n, 12)`` (any softmax-able scores).
PolicyFn = Callable[[np.ndarray], np.ndarray]
#: Cubes per forward of ``network_fns``. On a CPU core the 3x3 network reads about 1.3x as many
#: states a second in batches of 1,024 as of 8,192 (whose activations overflow the caches), and
#: the values are bit-identical either way (checked on the 2x2 and 3x3 networks): rows do not mix.
NETWORK_BATCH = 1024


@dataclass
class SolveResult:
    """One cube's solve: the moves played (action indices 0..11), whether replaying them from
    the start cube solves it, the states generated (MCTS: simulations) and the seconds spent."""

    moves: list[int]
    solved: bool
    nodes: int
    seconds: float


# --------------------------------------------------------------------------- values and verification
def exact_value_fn(solver=None) -> ValueFn:
    """The oracle value ``1 - 0.03 * distance`` from the optimal solver's table (tests, and the
    exhaustive evaluation's upper bound on what a perfect value network could do)."""
    if solver is None:
        from Optimal_Solver import get_solver

        solver = get_solver()

    def value_fn(cubes: np.ndarray) -> np.ndarray:
        return 1.0 - VALUE_PER_MOVE * solver.batch_distance(cubes)

    value_fn.reads_positions = True
    return value_fn


def evaluate_once(fn: ValueFn, puzzle: Puzzle, by_position: bool = False) -> ValueFn:
    """``fn`` that evaluates each distinct cube of a request once and copies its row to the
    others: equal stickers (``state_keys``), or with ``by_position`` equal positions up to a
    whole-cube turn (``position_keys``; only for a value that cannot tell orientations apart,
    such as a network's with a canonical orientation: ``reads_positions``; never a policy,
    whose moves are renamed by a turn). On the 2x2 the 12 children of a cube
    are only 6 positions (``U`` and ``D`` give one), so a value search evaluates half as many."""
    keys_of = puzzle.position_keys if by_position else puzzle.state_keys

    def once(cubes: np.ndarray) -> np.ndarray:
        cubes = np.asarray(cubes).reshape(-1, puzzle.num_stickers)
        _, first, inverse = np.unique(keys_of(cubes), return_index=True, return_inverse=True)
        if len(first) == len(cubes):
            return fn(cubes)
        return np.asarray(fn(cubes[first]))[inverse.reshape(-1)]

    once.reads_positions = getattr(fn, "reads_positions", False)
    return once


def network_fns(
    model: torch.nn.Module,
    device=None,
    batch: int = NETWORK_BATCH,
    puzzle: Puzzle | str | None = None,
    symmetries: int = 1,
    precision: str = "fp32",
) -> tuple[ValueFn, PolicyFn]:
    """``(value_fn, policy_fn)`` of a policy-value network: eval mode, no gradients, ``batch``
    rows per forward (bounds memory on millions of cubes); the model's mode is restored.
    ``puzzle`` (default the 2x2) encodes the cubes; a network of another input size is refused
    (ValueError) rather than fed what it was not trained on. ``symmetries`` (1..48, the solvers'
    ``--symmetries``): the network reads every cube under the first that many of the cube's
    symmetries (``Cube_Model.symmetries``; 1: as it is) and the values, and the logits with their moves
    renamed back, are averaged: a position's distance is the same in every disguise, the network's
    errors are not, so their mean errs less, at that many times the forwards. ``precision``
    (``Precision.PRECISIONS``, the solvers' ``--precision``): bf16 runs the forwards' products in
    bfloat16 (about twice as fast where the hardware has it; the outputs are float32 as always)."""
    puzzle = get_puzzle(puzzle)
    check_network(model, puzzle)
    device = torch.device(device) if device is not None else next(model.parameters()).device
    if not 1 <= symmetries <= SYMMETRY_COUNT:
        raise ValueError(f"symmetries must be 1..{SYMMETRY_COUNT}, got {symmetries}")
    perms, colours, move_map = (table[:symmetries] for table in Cube_Model.symmetries(puzzle.size))
    rows = max(1, batch // symmetries)  # cubes per forward: ``batch`` network rows in all
    Precision.resolve(precision, device)  # an unknown name fails here, not at the first forward
    # A cubie-pair network reads the colours as they are: making the one-hot costs a tenth of a search.
    colours_in = getattr(model, "reads_colours", False)

    def run(cubes: np.ndarray, head: Callable[[torch.Tensor], torch.Tensor], width: tuple) -> np.ndarray:
        """``head(input rows)`` (one-hot; a cubie-pair network's: the colours) of every cube, ``batch`` rows
        at a time, as float32 ``(n, *width)``; with ``symmetries``, the mean over the disguises (columns from
        ``width[0] - 12`` on are logits)."""
        cubes = np.asarray(cubes).reshape(-1, puzzle.num_stickers)
        out = [np.zeros((0, *width), np.float32)]
        with eval_mode(model), torch.inference_mode(), Precision.autocast(precision, device):
            for i in range(0, len(cubes), rows):
                chunk = cubes[i : i + rows]
                if symmetries > 1:
                    chunk = np.concatenate([colours[k][chunk[:, perms[k]]] for k in range(symmetries)])
                obs = torch.from_numpy(chunk if colours_in else puzzle.encode(chunk)).to(device)
                read = head(obs).float().reshape(symmetries, -1, *width).cpu().numpy()
                out.append(read[0] if symmetries == 1 else _mean_over_symmetries(read, move_map))
        return np.concatenate(out)

    # A value search reads no policy: the value alone skips the policy head (the same numbers).
    value_of = getattr(model, "value", None) or (lambda obs: model(obs)[1])

    def value_fn(cubes: np.ndarray) -> np.ndarray:
        return run(cubes, value_of, ())

    def policy_fn(cubes: np.ndarray) -> np.ndarray:
        return run(cubes, lambda obs: model(obs)[0], (puzzle.num_actions,))

    def with_value(cubes: np.ndarray) -> np.ndarray:
        """``(n, 1 + A)`` rows ``[value, logits]`` from one forward pass (the beam's mixed rank)."""

        def both(obs: torch.Tensor) -> torch.Tensor:
            logits, value = model(obs)
            return torch.cat([value.reshape(-1, 1), logits], 1)

        return run(cubes, both, (1 + puzzle.num_actions,))

    policy_fn.with_value = with_value

    # ``reads_positions``: a network that turns every input into its canonical orientation reads
    # every orientation of a position alike (the same value; the same policy, its moves renamed),
    # so ``evaluate_once`` may evaluate one of them and beam search may keep one of them.
    value_fn.reads_positions = policy_fn.reads_positions = bool(getattr(model, "canonical", False))
    return value_fn, policy_fn


def _mean_over_symmetries(read: np.ndarray, move_map: np.ndarray) -> np.ndarray:
    """``(n, *width)``: the mean of ``read (K, n, *width)``, the rows of ``n`` cubes under K symmetries.
    Values average as they are; logits (the last 12 columns of a row) are first read back in the cube's
    own move names: the logit of action ``a`` on the cube is that of ``move_map[k, a]`` in disguise ``k``."""
    if read.ndim == 2:
        return read.mean(axis=0)
    read = read.copy()
    logits = read[..., -NUM_ACTIONS:]
    for k in range(len(read)):
        logits[k] = logits[k][:, move_map[k]]
    return read.mean(axis=0)


def check_network(model: torch.nn.Module, puzzle: Puzzle) -> None:
    """Raise ValueError (one sentence) when ``model`` does not take ``puzzle``'s encoding."""
    inputs = getattr(model, "obs_dim", None)
    if inputs is not None and inputs != puzzle.obs_dim:
        raise ValueError(
            f"the network takes {inputs} inputs but the {puzzle.name} is encoded in {puzzle.obs_dim}: "
            f"use a {puzzle.name} model"
        )


def verify(cube: np.ndarray, moves, puzzle: Puzzle | str | None = None) -> bool:
    """True when playing ``moves`` from ``cube`` leaves it solved."""
    puzzle = get_puzzle(puzzle)
    end = puzzle.replay(np.asarray(cube).reshape(puzzle.num_stickers), [int(a) for a in moves])
    return bool(puzzle.is_solved(end.reshape(1, puzzle.num_stickers))[0])


def verify_batch(
    cubes: np.ndarray, moves: np.ndarray, lengths: np.ndarray, puzzle: Puzzle | str | None = None
) -> np.ndarray:
    """``(n,)`` bool: replaying the first ``lengths[i]`` of ``moves[i]`` solves ``cubes[i]``."""
    puzzle = get_puzzle(puzzle)
    cubes = np.array(cubes, dtype=np.int8).reshape(-1, puzzle.num_stickers)
    for t in range(moves.shape[1]):
        rows = np.flatnonzero(lengths > t)
        if len(rows) == 0:
            break
        cubes[rows] = puzzle.apply(cubes[rows], moves[rows, t].astype(np.intp))
    return puzzle.is_solved(cubes)


def start_history(n: int, last, count) -> tuple[np.ndarray, np.ndarray]:
    """Per-cube last action and face count arrays (default: fresh cubes)."""
    last = np.full(n, NO_ACTION, np.intp) if last is None else np.broadcast_to(np.asarray(last, np.intp), (n,)).copy()
    count = np.zeros(n, np.intp) if count is None else np.broadcast_to(np.asarray(count, np.intp), (n,)).copy()
    count[last == NO_ACTION] = 0
    return last, count


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax of ``(n, A)`` logits, in float64."""
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))

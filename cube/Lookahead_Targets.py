"""Training targets from a one-ply, full-width lookahead (``main.py --targets lookahead``).

Why this exists: the original recipe's value target gives every state of an episode the
same value, so the value head learns almost nothing about how far a cube is from solved,
the search follows the prior, and long positions fail (README, "Why the original recipe
stops short"). Here every target comes from searching all 12 moves of a state with the
current network, so the value is a Bellman backup and the policy points at the move the
lookahead rates best. It is the value-iteration idea of DeepCube's ADI
(``../shared/seeds/001_*``, arXiv 1805.07470) in the original's value scale:

    v(solved) = 1,   v(s) = max over the 12 moves a of v(child_a) - 0.03,

so a state d moves from solved is worth ``1 - 0.03 d``, the same number the original's
``max(0.4, 1 - 0.03 n)`` gives an episode solved in n moves.

States come from random scramble paths (every prefix of a path is a training state). Two
facts that need no solver make the targets safer:
- an unsolved child is worth at most ``1 - 0.03`` (it is at least one move from solved),
  which keeps an over-optimistic network from pushing every target to 1;
- a state reached by a scramble of k moves is at most k moves from solved, so undoing the
  scramble's last move leads to a child worth at least ``1 - 0.03 (k - 1)``.

The max over 12 noisy values is biased upwards (it picks the children the network
overrates), which stalls the backup a few moves out. With ``rng`` (``main.py
--double-estimate``) the chosen child is valued a second time in another orientation, the
cube turned as a whole, which is the same position but an input the network errs on
independently: the double estimator of double Q-learning, without a second network. A
network that canonicalises orientations (``--canonical-orientation``) sees every turn of a
cube as one input, so for it the second reading is of the child's mirror image instead,
which is just as far from solved. A network that also reduces symmetries
(``--canonical-symmetry``) sees the mirror image as the same input, so it has no second
reading (``main.py`` refuses the combination).

Puzzles: every function takes ``puzzle`` (a ``Puzzles.Puzzle`` or its name; default the 2x2, which
reads the same tables as before), so the lookahead trains the 3x3 too. The double estimate turns the
cube with the 2x2's whole-cube rotations and mirror image, so it stays the 2x2's (``main.py`` refuses
``--double-estimate`` with the 3x3).
"""

from __future__ import annotations

import numpy as np
import torch

from cube.Puzzles import VALUE_PER_MOVE, get_puzzle
from engine.Precision import eval_mode
from Rubik2x2Env import (
    NO_ACTION,
    NUM_ACTIONS,
    ROTATION_PERMS,
    batch_mirror,
    batch_rotate,
    legal_action_mask,
    next_face_count,
    scramble_moves,
)

UNSOLVED_MAX = 1.0 - VALUE_PER_MOVE  # an unsolved cube is at least one move from solved


def scramble_path_states(
    rng: np.random.Generator, num_states: int, max_len: int, puzzle=None, moves: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """About ``num_states`` cubes: every prefix of ``ceil(num_states / max_len)`` random
    scrambles of ``max_len`` moves, so scramble depths 1..max_len are equally common.

    Returns ``cubes (n, 24) int8`` (``(n, 54)`` for the 3x3: ``puzzle``, a ``Puzzles.Puzzle`` or
    its name, default the 2x2), ``depth (n,)`` (moves scrambled so far) and ``last (n,)`` (the last
    scramble move), ordered depth by depth. ``moves`` ``(paths, max_len)``: these paths instead
    of scrambles drawn from ``rng`` (``Seed_System_Targets.diffusion_walks``).
    """
    puzzle = get_puzzle(puzzle)
    if moves is None:
        moves = scramble_moves(rng, -(-num_states // max_len), max_len)
    paths = len(moves)
    cubes = np.tile(puzzle.solved, (paths, 1))
    out = []
    for i in range(max_len):
        cubes = puzzle.apply(cubes, moves[:, i])
        out.append(cubes)
    depth = np.repeat(np.arange(1, max_len + 1), paths)
    return np.concatenate(out), depth, moves.T.reshape(-1)


@torch.no_grad()
def capped_values(
    model: torch.nn.Module, cubes: np.ndarray, device=None, batch: int = 16384, puzzle=None
) -> np.ndarray:
    """``(n,)`` value of each cube of ``puzzle``: 1 if it is solved, else the network's value capped at
    ``1 - 0.03``."""
    device = device if device is not None else next(model.parameters()).device
    puzzle = get_puzzle(puzzle)
    values = np.empty(len(cubes), dtype=np.float64)
    for start in range(0, len(cubes), batch):
        x = torch.from_numpy(puzzle.encode(cubes[start : start + batch])).to(device)
        values[start : start + batch] = model(x)[1].squeeze(-1).double().cpu().numpy()
    values = np.minimum(values, UNSOLVED_MAX)
    values[puzzle.is_solved(cubes)] = 1.0
    return values


def child_values(model: torch.nn.Module, cubes: np.ndarray, device=None, puzzle=None) -> np.ndarray:
    """``(n, 12)``: ``capped_values`` of the child after each move."""
    n = len(cubes)
    puzzle = get_puzzle(puzzle)
    kids = puzzle.apply(np.repeat(cubes, NUM_ACTIONS, axis=0), np.tile(np.arange(NUM_ACTIONS), n))
    return capped_values(model, kids, device, puzzle=puzzle).reshape(n, NUM_ACTIONS)


def lookahead_targets(
    model: torch.nn.Module,
    cubes: np.ndarray,
    depth: np.ndarray | None = None,
    last: np.ndarray | None = None,
    device=None,
    rng: np.random.Generator | None = None,
    policy_temperature: float = 0.0,
    puzzle=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Value and policy targets of ``cubes`` (of ``puzzle``, default the 2x2) from one ply of full-width
    search.

    ``z = max_a v(child_a) - 0.03`` (1 for a solved cube) and ``pi`` = one-hot on the best
    move (the lowest index among equals), or with ``policy_temperature`` T > 0 (in moves)
    ``pi ~ exp(-(moves to go after a) / T)`` read from the children's values: moves that
    look equally good share the mass, so a search with these priors still tries the
    second-best move, where a one-hot-trained policy leaves it nearly unvisited. With the
    scramble ``depth`` and ``last`` move of each cube, the undo move's child is worth at
    least ``1 - 0.03 (depth - 1)``. With ``rng``, ``z`` uses the best child's value read again after a random whole-cube
    rotation, or of its mirror image for a canonicalising network (the double estimate: the 2x2's only).
    Returns ``z (n,) float32`` and ``pi (n, 12) float32``.
    """
    n = len(cubes)
    rows = np.arange(n)
    puzzle = get_puzzle(puzzle)
    bounded = depth is not None and last is not None
    if bounded:
        undo = np.asarray(last) ^ 1  # actions come in (move, inverse) pairs
        floor = 1.0 - VALUE_PER_MOVE * (np.asarray(depth) - 1)
    with eval_mode(model):
        values = child_values(model, cubes, device, puzzle)
        if bounded:
            values[rows, undo] = np.maximum(values[rows, undo], floor)
        best = values.argmax(axis=1)
        chosen = values[rows, best]
        if rng is not None:
            child = puzzle.apply(cubes, best)
            if getattr(model, "canonical", False):  # all turns of a cube are one input to it: read the mirror image
                other = batch_mirror(child)
            else:
                other = batch_rotate(child, rng.integers(1, len(ROTATION_PERMS), size=n))
            chosen = capped_values(model, other, device, puzzle=puzzle)
            if bounded:
                chosen = np.where(best == undo, np.maximum(chosen, floor), chosen)
    z = chosen - VALUE_PER_MOVE
    z[puzzle.is_solved(cubes)] = 1.0
    if policy_temperature > 0:
        logits = (values - values.max(axis=1, keepdims=True)) / (VALUE_PER_MOVE * policy_temperature)
        pi = np.exp(logits)
        pi = (pi / pi.sum(axis=1, keepdims=True)).astype(np.float32)
    else:
        pi = np.zeros((n, NUM_ACTIONS), dtype=np.float32)
        pi[rows, best] = 1.0
    return z.astype(np.float32), pi


@torch.no_grad()
def greedy_policy_solve_rate(
    model: torch.nn.Module, start_cubes: np.ndarray, max_steps: int, device=None, puzzle=None
) -> float:
    """Fraction of ``start_cubes`` solved within ``max_steps`` by always playing the
    policy's most likely legal move (no search): the cheap solve rate the lookahead recipe
    logs every iteration and feeds to the curriculum. ``puzzle``: as ``scramble_path_states``."""
    device = device if device is not None else next(model.parameters()).device
    puzzle = get_puzzle(puzzle)
    cubes = np.asarray(start_cubes, dtype=np.int8).copy()
    solved = puzzle.is_solved(cubes)
    last = np.full(len(cubes), NO_ACTION, dtype=np.intp)
    count = np.zeros(len(cubes), dtype=np.intp)
    with eval_mode(model):
        for _ in range(max_steps):
            active = np.flatnonzero(~solved)
            if len(active) == 0:
                break
            logits = model(torch.from_numpy(puzzle.encode(cubes[active])).to(device))[0].cpu().numpy()
            logits[~legal_action_mask(last[active], count[active])] = -np.inf
            actions = logits.argmax(axis=1)
            cubes[active] = puzzle.apply(cubes[active], actions)
            count[active] = next_face_count(last[active], count[active], actions)
            last[active] = actions
            solved[active] = puzzle.is_solved(cubes[active])
    return float(solved.mean()) if len(solved) else 0.0

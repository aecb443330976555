"""Training targets that need no search: the seed systems' (``main.py --targets adi`` and
``--targets scramble``) and CayleyPy's random-walk distances (``--targets diffusion``).

Both take their states from random scramble paths (``Lookahead_Targets.scramble_path_states``:
every prefix of a path, so depths 1..max_len are equally common) and train with the existing
loop, curriculum and loss; what differs is the targets and a per-sample loss weight
(``Train_Network.alphazero_loss(sample_weights=...)``).

``adi`` -- seed 001, Autodidactic Iteration (McAleer et al., arXiv 1805.07470). For each
state ``s`` and each of the 12 moves ``a``, ``q_a = R(child_a) + v(child_a)`` with ``R = +1``
for the solved cube and ``-1`` otherwise; value target ``max_a q_a``, policy target one-hot on
``argmax_a q_a``, and both loss terms of a sample weighted ``1 / D`` (``D`` its scramble depth).
As in the seed's library (``libcube``), a solved child is terminal: its ``v`` is 0, so a
state one move from solved is worth exactly 1 and, by the backup, ``d`` moves out ``2 - d``.

Value scale. ADI's values are unbounded sums (``2 - d``); this network's value is a tanh in
[-1, 1] that every value-reading solver reads as ``moves = (1 - v) / 0.03`` (``v = 1 - 0.03 d``).
Clipping ADI's sums to [-1, 1] would leave every cube 3 or more moves out at -1, a value no
solver can follow. So the backup is computed in ADI's units and stored in the network's by the
affine map that sends ``2 - d`` to ``1 - 0.03 d``::

    v_net = 1 - 0.03 (2 - v_adi)        v_adi = 2 - (1 - v_net) / 0.03

Rewards, the max and the argmax are ADI's own (the map is increasing, so the chosen move is
the same); only the unit changes: one ADI reward of 1 is 0.03 of the network's value. The
result equals ``max_a v_net(child_a) - 0.03`` with a solved child worth 1: the lookahead
backup without its two safety bounds (no cap on unsolved children, no depth floor) and with
ADI's ``1/D`` weights. A cube that is itself solved (a scramble path can come back) gets the
target 1 and no policy loss.

``scramble`` -- seed 002 (EfficientCube-like): the policy is trained to undo the last scramble
move (one-hot on its inverse, cross-entropy only). The value head gets no loss at all (value
weight 0 for every sample), so its output means nothing: solve with the policy
(``Solvers``' ``beam`` with ``rank="policy"``, or its greedy policy), never with the value.
A solved cube on a path gets no loss.

``diffusion`` -- CayleyPy (Chervov et al., arXiv 2502.13266): the value regresses how many
moves of a non-backtracking random walk from solved led to a state. A state ``k`` moves out
gets the value target ``1 - 0.03 k`` (the network's scale: ``value_per_move`` per move) and,
as ``scramble``, the policy target one-hot on the inverse of the walk's last move. Walks of
``max_len`` moves give every prefix, so ``k`` is uniform on ``1..max_len``. ``k`` is an upper
bound on the distance, and the network learns the mean walk length that reaches a state:
close to its distance while walks rarely double back, which is why the walks avoid the
obvious ways back (``diffusion_walks``: never the inverse of the last move, never a third turn
of one face in a row -- the env's mask rule -- and two opposite faces, which commute, turned
one after the other in one order only). A walk that came back to solved gets the target 1 and
no policy loss. No network is read: the targets cost a few permutations per state.

Puzzles: every function takes ``puzzle`` (a ``Puzzles.Puzzle`` or its name; default the 2x2,
which reads the same tables as before), so all three trainers work for the 3x3 as well.
"""

from __future__ import annotations

import numpy as np
import torch

from cube.Cube_Model import ACTION_FACE, NO_ACTION, NUM_FACES, legal_action_mask, next_face_count
from cube.Lookahead_Targets import scramble_path_states
from cube.Puzzles import VALUE_PER_MOVE, get_puzzle, value_as_moves
from engine.Precision import eval_mode
from Rubik2x2Env import NUM_ACTIONS

SEED_TARGETS = ("adi", "scramble", "diffusion")
ADI_REWARD_SOLVED = 1.0
ADI_REWARD_STEP = -1.0
#: How each trainer's value reads (the benchmark records it).
VALUE_SCALES = {
    "selfplay": "1 - 0.03 n (episode length n, floored at 0.4)",
    "lookahead": "1 - 0.03 d",
    "adi": "ADI's 2 - d mapped affinely to 1 - 0.03 d",
    "scramble": "none (value head untrained: policy only)",
    "diffusion": "1 - 0.03 k (k = moves of the non-backtracking random walk that reached the state)",
}


def _commuting_order_mask() -> np.ndarray:
    """``(13, 12)`` bool, row ``last + 1``: False for the actions of the face opposite to the
    last action's when that face's action pair comes first (U R F L B D order): of two
    opposite faces turned in a row only one order is walked (they commute)."""
    pair_of_face = {face: pair for pair, face in enumerate(ACTION_FACE)}
    mask = np.ones((NUM_ACTIONS + 1, NUM_ACTIONS), dtype=bool)
    for last in range(NUM_ACTIONS):
        pair = last // 2
        opposite = pair_of_face[(ACTION_FACE[pair] + NUM_FACES // 2) % NUM_FACES]
        if opposite < pair:
            mask[last + 1, 2 * opposite : 2 * opposite + 2] = False
    mask.setflags(write=False)
    return mask


COMMUTING_ORDER_MASK = _commuting_order_mask()


def net_to_adi(values):
    """The network's value ``1 - 0.03 d`` in ADI's units ``2 - d``."""
    return 2.0 - value_as_moves(values)


def adi_to_net(values):
    """ADI's ``2 - d`` in the network's units ``1 - 0.03 d`` (inverse of ``net_to_adi``)."""
    return 1.0 - VALUE_PER_MOVE * (2.0 - np.asarray(values, dtype=np.float64))


@torch.no_grad()
def network_values(
    model: torch.nn.Module, cubes: np.ndarray, device=None, batch: int = 16384, puzzle=None
) -> np.ndarray:
    """``(n,)`` float64: the network's raw value of each cube (no cap, no solved test)."""
    device = device if device is not None else next(model.parameters()).device
    encode = get_puzzle(puzzle).encode
    out = np.empty(len(cubes), dtype=np.float64)
    with eval_mode(model):
        for start in range(0, len(cubes), batch):
            x = torch.from_numpy(encode(cubes[start : start + batch])).to(device)
            out[start : start + batch] = model(x)[1].reshape(-1).double().cpu().numpy()
    return out


def adi_q_values(model: torch.nn.Module, cubes: np.ndarray, device=None, puzzle=None) -> np.ndarray:
    """``(n, 12)`` in ADI's units: ``R(child_a) + v(child_a)``, a solved child terminal (``v = 0``)."""
    puzzle = get_puzzle(puzzle)
    n = len(cubes)
    kids = puzzle.apply(np.repeat(cubes, NUM_ACTIONS, axis=0), np.tile(np.arange(NUM_ACTIONS), n))
    solved = puzzle.is_solved(kids)
    q = ADI_REWARD_STEP + net_to_adi(network_values(model, kids, device, puzzle=puzzle))
    q[solved] = ADI_REWARD_SOLVED
    return q.reshape(n, NUM_ACTIONS)


def adi_targets(
    model: torch.nn.Module, cubes: np.ndarray, depth: np.ndarray, device=None, puzzle=None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ADI's targets of ``cubes`` scrambled ``depth`` moves (see the module docstring).

    Returns ``z (n,) float32`` (``max_a q_a`` in the network's scale), ``pi (n, 12) float32``
    (one-hot on the best move, the lowest index among equals) and ``weights (n, 2) float32``
    (policy and value loss weights: ``1 / depth`` both; a solved cube's ``z`` is 1 and its
    policy weight 0).
    """
    cubes = np.asarray(cubes, dtype=np.int8)
    n = len(cubes)
    q = adi_q_values(model, cubes, device, puzzle)
    best = q.argmax(axis=1)
    z = adi_to_net(q[np.arange(n), best])
    pi = np.zeros((n, NUM_ACTIONS), dtype=np.float32)
    pi[np.arange(n), best] = 1.0
    weights = np.repeat(1.0 / np.asarray(depth, dtype=np.float64)[:, None], 2, axis=1)
    solved = get_puzzle(puzzle).is_solved(cubes)
    z[solved] = 1.0
    weights[solved, 0] = 0.0
    return z.astype(np.float32), pi, weights.astype(np.float32)


def undo_policy(last: np.ndarray) -> np.ndarray:
    """``(n, 12)`` float32 one-hot on the inverse of each ``last`` move."""
    pi = np.zeros((len(last), NUM_ACTIONS), dtype=np.float32)
    pi[np.arange(len(last)), np.asarray(last) ^ 1] = 1.0  # actions come in (move, inverse) pairs
    return pi


def scramble_targets(
    rng: np.random.Generator, n: int, max_len: int, puzzle=None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """About ``n`` states of random scramble paths up to ``max_len`` moves, and their targets:
    ``cubes (n, 24) int8`` (``(n, 54)`` for the 3x3), ``pi (n, 12) float32`` one-hot on the
    inverse of the last scramble move, ``z (n,)`` zeros (never trained), ``weights (n, 2)
    float32``: policy 1 and value 0 (policy 0 too for a cube the path brought back to solved)."""
    cubes, _, last = scramble_path_states(rng, n, max_len, puzzle)
    weights = np.zeros((len(cubes), 2), dtype=np.float32)
    weights[:, 0] = ~get_puzzle(puzzle).is_solved(cubes)
    return cubes, undo_policy(last), np.zeros(len(cubes), dtype=np.float32), weights


def diffusion_walks(rng: np.random.Generator, paths: int, length: int) -> np.ndarray:
    """``(paths, length)`` actions of non-backtracking random walks (see the module docstring):
    each move uniform among those ``legal_action_mask`` allows after the walk so far and
    ``COMMUTING_ORDER_MASK`` allows after its last move."""
    moves = np.empty((paths, length), dtype=np.intp)
    last = np.full(paths, NO_ACTION, dtype=np.intp)
    count = np.zeros(paths, dtype=np.intp)
    for i in range(length):
        allowed = legal_action_mask(last, count) & COMMUTING_ORDER_MASK[last + 1]
        moves[:, i] = np.where(allowed, rng.random((paths, NUM_ACTIONS)), -1.0).argmax(axis=1)
        count = next_face_count(last, count, moves[:, i])
        last = moves[:, i]
    return moves


def diffusion_targets(
    rng: np.random.Generator, n: int, max_len: int, puzzle=None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """About ``n`` states of ``diffusion_walks`` up to ``max_len`` moves, and their targets:
    ``cubes``, ``pi`` one-hot on the inverse of the walk's last move, ``z = 1 - value_per_move *
    k`` for a state ``k`` moves out and ``weights (n, 2)``: policy and value 1 (a walk back at
    solved: ``z = 1`` and policy 0)."""
    puzzle = get_puzzle(puzzle)
    moves = diffusion_walks(rng, -(-n // max_len), max_len)
    cubes, k, last = scramble_path_states(rng, n, max_len, puzzle, moves=moves)
    z = 1.0 - puzzle.value_per_move * k.astype(np.float64)
    solved = puzzle.is_solved(cubes)
    z[solved] = 1.0
    weights = np.ones((len(cubes), 2), dtype=np.float32)
    weights[solved, 0] = 0.0
    return cubes, undo_policy(last), z.astype(np.float32), weights


def seed_training_sample(
    kind: str, model: torch.nn.Module, rng: np.random.Generator, n: int, max_len: int, device=None, puzzle=None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One iteration's training data for ``main.py --targets adi|scramble|diffusion``:
    ``(states one-hot (n, 144) -- (n, 324) for the 3x3 --, pis, zs, weights)``, the tuple
    ``train_on_targets`` takes."""
    puzzle = get_puzzle(puzzle)
    if kind == "adi":
        cubes, depth, _ = scramble_path_states(rng, n, max_len, puzzle)
        z, pi, weights = adi_targets(model, cubes, depth, device, puzzle)
    elif kind == "scramble":
        cubes, pi, z, weights = scramble_targets(rng, n, max_len, puzzle)
    elif kind == "diffusion":
        cubes, pi, z, weights = diffusion_targets(rng, n, max_len, puzzle)
    else:
        raise ValueError(f"unknown seed targets {kind!r}; choose one of {', '.join(SEED_TARGETS)}")
    return puzzle.encode(cubes), pi, z, weights

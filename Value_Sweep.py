"""Value-iteration sweeps over every position up to symmetry (``main.py --targets sweep``).

The 2x2 has 3,674,160 positions (whole-cube orientation fixed), and a network that reduces
the 48 symmetries of the cube (``PolicyValueNet(canonical_symmetry=True)``) sees only
77,802 different inputs. So, unlike ``--targets lookahead``, which spends 12 network calls on
every training state's children, a sweep reads the network ONCE per class of positions and
gets the targets of every class from a table lookup:

    v(class) = max over the 12 moves a of v(class of child_a) - 0.03   (a solved child: 1),

the Bellman backup of the original's value scale (a cube d moves out is worth 1 - 0.03 d).
Nothing here uses the optimal solver's distances: the classes come from enumerating the
positions (``All_Positions.cubes_at``) and canonicalising them with the network's own
symmetry reduction; the table of distances is never read.

Value iteration from scratch anchors at the solved cube, but a network trained on all
classes equally barely fits the few classes near solved, and the error of far values then
grows by a move per sweep. Two solver-free facts fix that, as in ``Lookahead_Targets``:
- every sweep also trains on the classes of states along fresh random scramble paths (every
  depth equally often), so near positions weigh as much as far ones;
- a position reached by a scramble of k moves is at most k moves from solved, so each class
  remembers the shortest scramble depth it was ever reached at (``best_depth``, part of the
  training state) and its target value is at least ``1 - 0.03 * best_depth``.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import numpy as np
import torch

from All_Positions import SOLVED_INDEX, children, cubes_at
from Lookahead_Targets import STEP_COST, UNSOLVED_MAX, scramble_path_states
from Optimal_Solver import NUM_STATES, OptimalSolver, default_cache_path
from Policy_Value_Net import PolicyValueNet, eval_mode
from Rubik2x2Env import NUM_ACTIONS, batch_onehot
from Run_IO import atomic_write

CLASSES_FILE = "symmetry_classes.npz"
NUM_CLASSES = 77_802  # positions up to the 48 symmetries (counted by symmetry_classes)
# Positions canonicalised at a time while the classes are built. Small on purpose: each chunk's
# 48 symmetric copies are large temporaries, and with 65,536 positions most of the build went to
# the kernel handing out fresh pages (57 s against 32 s with 4,096, measured on 2 cores).
_CHUNK = 1 << 12
SOLVED_CLASS = 0  # the solved cube is the smallest representative
NEVER = np.iinfo(np.int32).max  # best_depth of a class no scramble has reached yet


def _classes_path() -> Path:
    return default_cache_path().parent / CLASSES_FILE


def _representatives(positions: np.ndarray, reduce: PolicyValueNet) -> np.ndarray:
    """``(n,)`` the position index of the image of each of ``positions`` that ``reduce`` (a
    ``canonical_symmetry`` network) feeds its layers: one index per class of positions."""
    with torch.no_grad():
        canonical, _ = reduce._canonicalise_symmetries(torch.from_numpy(cubes_at(positions).astype(np.int64)))
    return OptimalSolver().index(canonical.numpy().astype(np.int8))


def _compute_classes() -> tuple[np.ndarray, np.ndarray]:
    """Canonicalise every position as the symmetric network does and number the results."""
    reduce = PolicyValueNet(canonical_symmetry=True)
    rep_of = np.empty(NUM_STATES, dtype=np.int64)
    for lo in range(0, NUM_STATES, _CHUNK):
        part = np.arange(lo, min(lo + _CHUNK, NUM_STATES))
        rep_of[part] = _representatives(part, reduce)
    reps, class_of = np.unique(rep_of, return_inverse=True)
    return class_of.astype(np.int32), reps


def _checksum(class_of: np.ndarray, reps: np.ndarray) -> str:
    """SHA-256 of both tables' bytes, saved beside them: any changed bit of the file shows."""
    digest = hashlib.sha256(class_of.tobytes())
    digest.update(reps.tobytes())
    return digest.hexdigest()


def _classes_problem(class_of: np.ndarray, reps: np.ndarray, checksum: str) -> str | None:
    """Why loaded tables are not what ``_compute_classes`` builds, or None, in about a tenth of
    a second: types and shapes, the checksum saved with them (the file as written), then what
    the classes must be (class numbers in range, representatives ascending from the solved cube,
    each in its own class), and a fresh canonicalisation of 4,096 positions spread over the
    table, which a cache of another symmetry reduction fails."""
    if class_of.dtype != np.int32 or class_of.shape != (NUM_STATES,):
        return "class numbers of the wrong type or shape"
    if reps.dtype != np.int64 or reps.shape != (NUM_CLASSES,):
        return "representatives of the wrong type or shape"
    if checksum != _checksum(class_of, reps):
        return "a checksum that does not match"
    if class_of.min() < 0 or class_of.max() >= NUM_CLASSES:
        return "class numbers out of range"
    if reps[0] != SOLVED_INDEX or (np.diff(reps) <= 0).any() or reps[-1] >= NUM_STATES:
        return "representatives out of order or range"
    if not np.array_equal(class_of[reps], np.arange(NUM_CLASSES)):
        return "representatives outside their classes"
    sample = np.arange(0, NUM_STATES, -(-NUM_STATES // _CHUNK))
    if not np.array_equal(reps[class_of[sample]], _representatives(sample, PolicyValueNet(canonical_symmetry=True))):
        return "classes that differ from the network's symmetry reduction"
    return None


@functools.cache
def symmetry_classes() -> tuple[np.ndarray, np.ndarray]:
    """``class_of (NUM_STATES,) int32`` (the class of every position) and ``reps (C,) int64``
    (one position per class, the canonical one; class 0 is the solved cube). Cached beside
    the optimal solver's table with a checksum (about half a minute to build on 2 cores); a
    cache that fails ``_classes_problem`` is rebuilt, never used."""
    path = _classes_path()
    try:
        with np.load(path, allow_pickle=False) as data:
            class_of, reps, checksum = data["class_of"], data["reps"], str(data["sha256"])
        if _classes_problem(class_of, reps, checksum) is None:
            return class_of, reps
    except (OSError, ValueError, KeyError, EOFError):
        pass  # missing or damaged: rebuild
    class_of, reps = _compute_classes()
    try:
        atomic_write(path, lambda f: np.savez(f, class_of=class_of, reps=reps, sha256=_checksum(class_of, reps)))
    except OSError:
        pass  # a read-only cache still works, it is just rebuilt next time
    return class_of, reps


class Sweeper:
    """The fixed tables of a sweep and the scramble-depth bound learnt so far."""

    def __init__(self, best_depth: np.ndarray | None = None):
        self.class_of, self.reps = symmetry_classes()
        kids = children(self.reps, np.zeros(len(self.reps), dtype=np.int64))  # (C, 12) positions
        self.child_class = self.class_of[kids]  # (C, 12)
        self.solved_child = kids == SOLVED_INDEX  # (C, 12)
        self.inputs = batch_onehot(cubes_at(self.reps))  # (C, 144) float32
        self.trainable = np.flatnonzero(self.reps != SOLVED_INDEX)
        self.best_depth = np.full(len(self.reps), NEVER, dtype=np.int32) if best_depth is None else best_depth
        self._index = OptimalSolver().index

    def class_values(self, model: torch.nn.Module, batch: int = 16384) -> np.ndarray:
        """``(C,)`` the network's value of every class."""
        device = next(model.parameters()).device
        out = np.empty(len(self.reps), dtype=np.float64)
        with eval_mode(model), torch.no_grad():
            for lo in range(0, len(self.reps), batch):
                x = torch.from_numpy(self.inputs[lo : lo + batch]).to(device)
                out[lo : lo + batch] = model(x)[1].squeeze(-1).double().cpu().numpy()
        return out

    def targets(
        self,
        model,
        rng: np.random.Generator,
        walk_states: int,
        walk_len: int,
        policy_temperature: float,
        plies: int = 1,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One sweep: the rows to train on (every class except solved, then the classes of
        ``walk_states`` fresh scramble-path states), as ``(inputs (n, 144), pi (n, 12), z (n,))``.

        ``plies`` > 1 backs the values up that many times over the class table before
        training: the targets of a ``plies``-move full-width search on the network's values,
        so the anchor at the solved cube travels ``plies`` moves per sweep instead of one."""
        cubes, depth, _ = scramble_path_states(rng, walk_states, walk_len)
        walked = self.class_of[self._index(cubes)]
        np.minimum.at(self.best_depth, walked, depth.astype(np.int32))
        values = self.class_values(model)
        bound = 1.0 - STEP_COST * np.minimum(self.best_depth, 1 << 20)
        for _ in range(plies):
            child = np.minimum(values[self.child_class], UNSOLVED_MAX)
            child[self.solved_child] = 1.0
            values = np.maximum(child.max(axis=1) - STEP_COST, bound)
            values[self.reps == SOLVED_INDEX] = 1.0
        z = values
        if policy_temperature > 0:
            logits = (child - child.max(axis=1, keepdims=True)) / (STEP_COST * policy_temperature)
            pi = np.exp(logits)
            pi /= pi.sum(axis=1, keepdims=True)
        else:
            pi = np.zeros_like(child)
            pi[np.arange(len(child)), child.argmax(axis=1)] = 1.0
        rows = np.concatenate([self.trainable, walked[walked != SOLVED_CLASS]])
        assert pi.shape[1] == NUM_ACTIONS
        return self.inputs[rows], pi[rows].astype(np.float32), z[rows].astype(np.float32)

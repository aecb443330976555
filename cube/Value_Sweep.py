"""Value-iteration sweeps over every position up to symmetry (``main.py --targets sweep``).

The 2x2 has 3,674,160 positions (whole-cube orientation fixed), and a network that reduces
the 48 symmetries of the cube (``PolicyValueNet(canonical_symmetry=True)``) sees only
77,802 different inputs. So, unlike ``--targets lookahead``, which spends 12 network calls on
every training state's children, a sweep reads the network ONCE per class of positions and
gets the targets of every class from a table lookup:

    v(class) = max over the 12 moves a of v(class of child_a) - 0.03   (a solved child: 1),

the Bellman backup of the original's value scale (a cube d moves out is worth 1 - 0.03 d).
Nothing here uses the optimal solver's distances: the classes (``All_Positions.symmetry_classes``)
come from enumerating the positions and canonicalising them with the network's own symmetry
reduction; the table of distances is never read.

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

import numpy as np
import torch

from cube.All_Positions import SOLVED_INDEX, children, cubes_at, symmetry_classes
from cube.Lookahead_Targets import UNSOLVED_MAX, scramble_path_states
from cube.Puzzles import VALUE_PER_MOVE
from engine.Precision import eval_mode
from Optimal_Solver import OptimalSolver
from Rubik2x2Env import NUM_ACTIONS, batch_onehot

SOLVED_CLASS = 0  # the solved cube is the smallest representative
NEVER = np.iinfo(np.int32).max  # best_depth of a class no scramble has reached yet


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
        bound = 1.0 - VALUE_PER_MOVE * np.minimum(self.best_depth, 1 << 20)
        for _ in range(plies):
            child = np.minimum(values[self.child_class], UNSOLVED_MAX)
            child[self.solved_child] = 1.0
            values = np.maximum(child.max(axis=1) - VALUE_PER_MOVE, bound)
            values[self.reps == SOLVED_INDEX] = 1.0
        z = values
        if policy_temperature > 0:
            logits = (child - child.max(axis=1, keepdims=True)) / (VALUE_PER_MOVE * policy_temperature)
            pi = np.exp(logits)
            pi /= pi.sum(axis=1, keepdims=True)
        else:
            pi = np.zeros_like(child)
            pi[np.arange(len(child)), child.argmax(axis=1)] = 1.0
        rows = np.concatenate([self.trainable, walked[walked != SOLVED_CLASS]])
        assert pi.shape[1] == NUM_ACTIONS
        return self.inputs[rows], pi[rows].astype(np.float32), z[rows].astype(np.float32)

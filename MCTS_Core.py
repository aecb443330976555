"""PUCT Monte Carlo Tree Search with the original's semantics, many trees advanced in lockstep.

The original's semantics (reproduced exactly; ``tests/reference_mcts.py`` is a plain one-tree
implementation that the batched engine is tested against):

* Simulation 1 evaluates the root and creates its children (one per legal action).
* Every later simulation descends from the root by
  ``argmax_a Q(a) + c_puct * P(a) * sqrt(sum_b N(b) + 1e-8) / (1 + N(a))`` over the legal
  children (unvisited Q = 0; ties go to the lowest action) until it reaches a child that
  was never expanded. That leaf is worth 1.0 if solved (and is never expanded), otherwise
  the network's value; an unsolved leaf gets the network's priors and its legal children
  (mask from ``legal_action_mask`` with the path's last move and its repeat count).
* Backup adds 1 to N and the value to W of every edge on the path (single agent: no sign
  flip). Faithful quirk: the original then updates the leaf node's own statistics once more,
  so the last edge of every path gets N += 2 and W += 2v.
* The tree is rebuilt for every move.

Performance design (mctx-style): the B trees live in a few flat arrays indexed by
``tree * max_nodes + node`` (node 0 is the root); per node the child statistics are packed
in one ``(.., 3, 12)`` block (N, W, c_puct * P) gathered once per tree level. One network call
per simulation step evaluates the new leaves of all B trees together; an optional cache
keyed by the exact cube state skips states evaluated before (masks depend on the path, not
the state, so only the raw network output is cached).
"""

from __future__ import annotations

import itertools
from typing import Callable

import numpy as np
import torch

from Cli import C_PUCT
from Rubik2x2Env import (
    NO_ACTION,
    NUM_ACTIONS,
    NUM_STICKERS,
    batch_apply_moves,
    batch_is_solved,
    batch_onehot,
    batch_state_keys,
    legal_action_mask,
    next_face_count,
)

ROOT = 0
UNVISITED = -1  # children_index value of a child that has no node yet
# Rows of the packed per-node child statistics block: visits, total value, and
# c_puct * prior (-inf for illegal actions, so that they can never win the argmax).
_N, _W, _CP = 0, 1, 2

#: ``evaluate(cubes (n, 24) int8) -> (priors (n, 12) float32, values (n,) float32)``
Evaluator = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


class NetworkEvaluator:
    """Batched network evaluation of cube states, with an optional exact-state cache.

    The cache stores the network's raw output per state; it is only valid for fixed
    weights, so create a new evaluator (or call ``clear()``) after training.
    """

    def __init__(self, model: torch.nn.Module, device: torch.device | str | None = None, use_cache: bool = True):
        self.model = model
        self.device = torch.device(device) if device is not None else next(model.parameters()).device
        self.use_cache = use_cache
        self._index: dict[int, int] = {}
        self._priors = np.empty((0, NUM_ACTIONS), dtype=np.float32)  # [capacity, 12] rows of _index
        self._values = np.empty((0,), dtype=np.float32)  # [capacity]
        self.network_states = 0  # states sent to the network (for throughput reports)
        self.requested_states = 0

    def clear(self) -> None:
        self._index.clear()

    @torch.inference_mode()
    def forward(self, cubes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Network outputs for ``(n, 24)`` cubes, no cache."""
        self.network_states += len(cubes)
        obs = torch.from_numpy(batch_onehot(cubes)).to(self.device, non_blocking=True)
        logits, value = self.model(obs)
        priors = torch.softmax(logits, dim=-1)
        return priors.float().cpu().numpy(), value.float().reshape(-1).cpu().numpy()

    def _store(self, keys: list[int], priors: np.ndarray, values: np.ndarray) -> None:
        start = len(self._index)
        if start + len(keys) > len(self._values):  # grow by doubling: amortised O(1) per state
            capacity = max(2 * len(self._values), start + len(keys), 1024)
            self._priors = np.resize(self._priors, (capacity, NUM_ACTIONS))
            self._values = np.resize(self._values, capacity)
        self._priors[start : start + len(keys)] = priors
        self._values[start : start + len(keys)] = values
        self._index.update(zip(keys, range(start, start + len(keys))))

    def __call__(self, cubes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.requested_states += len(cubes)
        if not self.use_cache:
            return self.forward(cubes)
        keys = batch_state_keys(cubes)
        get = self._index.get
        rows = np.fromiter(map(get, keys.tolist(), itertools.repeat(-1)), dtype=np.int64, count=len(keys))
        miss = np.flatnonzero(rows < 0)
        if len(miss):
            # The same state can appear twice in one batch: evaluate it once.
            uniq_keys, first, inverse = np.unique(keys[miss], return_index=True, return_inverse=True)
            priors, values = self.forward(cubes[miss[first]])
            rows[miss] = len(self._index) + inverse
            self._store(uniq_keys.tolist(), priors, values)
        return self._priors[rows], self._values[rows]


class MCTS:
    """The original's search object. ``run`` searches one root, ``run_batch`` B roots in lockstep.

    ``evaluator`` (optional) replaces the network: any function of cubes ``(n, 24)`` to
    ``(priors (n, 12), values (n,))``; tests use it to feed both engines the same numbers.
    """

    def __init__(
        self,
        model: torch.nn.Module | None,
        num_actions: int = NUM_ACTIONS,
        c_puct: float = C_PUCT,
        num_simulations: int = 200,
        device: torch.device | str | None = None,
        evaluator: Evaluator | None = None,
        use_cache: bool = True,
    ):
        if num_actions != NUM_ACTIONS:
            raise ValueError("the 2x2 cube has 12 actions")
        if num_simulations < 1:
            raise ValueError("num_simulations must be at least 1")
        self.model = model
        self.num_actions = num_actions
        self.c_puct = float(c_puct)
        self.num_simulations = int(num_simulations)
        self.device = device
        if evaluator is None:
            if model is None:
                raise ValueError("MCTS needs a model or an evaluator")
            evaluator = NetworkEvaluator(model, device, use_cache=use_cache)
        self.evaluator = evaluator

    # -- the original API--------------------------------------------------------------------
    def run(self, root_cube: np.ndarray, root_obs=None, root_action_mask=None) -> np.ndarray:
        """Visit counts ``(12,)`` float32 of one search from ``root_cube``.

        ``root_obs`` is accepted for the original's signature (the observation is derived from
        the cube); ``root_action_mask`` restricts the root's legal actions.
        """
        masks = None if root_action_mask is None else np.asarray(root_action_mask, dtype=bool)[None]
        return self.run_batch(np.asarray(root_cube).reshape(1, NUM_STICKERS), masks)[0]

    def run_batch(
        self,
        root_cubes: np.ndarray,
        root_action_masks: np.ndarray | None = None,
        root_last_actions: np.ndarray | None = None,
        root_face_counts: np.ndarray | None = None,
    ) -> np.ndarray:
        """Visit counts ``(B, 12)`` float32 of B independent searches run in lockstep.

        ``root_cubes``: ``(B, 24)`` or ``(B, 6, 2, 2)``. ``root_action_masks``: legal root
        actions (default: all). ``root_last_actions``/``root_face_counts``: the move history
        that produced each root (default: none), which the mask of the root's children
        depends on.
        """
        cubes = np.asarray(root_cubes).reshape(-1, NUM_STICKERS).astype(np.int8)
        batch = len(cubes)
        if batch == 0:
            return np.zeros((0, NUM_ACTIONS), dtype=np.float32)
        masks = (
            np.ones((batch, NUM_ACTIONS), bool)
            if root_action_masks is None
            else np.asarray(root_action_masks, bool).reshape(batch, NUM_ACTIONS)
        )
        last = np.full(batch, NO_ACTION) if root_last_actions is None else np.asarray(root_last_actions).reshape(batch)
        count = (
            np.zeros(batch, dtype=np.intp) if root_face_counts is None else np.asarray(root_face_counts).reshape(batch)
        )
        tree = _Tree(batch, self.num_simulations + 1, cubes, last, count, self.c_puct)
        tree.expand_roots(masks, self.evaluator)
        for _ in range(self.num_simulations - 1):
            tree.simulate(self.evaluator)
        return tree.root_visits()


class _Tree:
    """B search trees as flat arrays; a node's flat index is ``tree * max_nodes + node``."""

    def __init__(
        self,
        batch: int,
        max_nodes: int,
        root_cubes: np.ndarray,
        root_last: np.ndarray,
        root_count: np.ndarray,
        c_puct: float,
    ):
        self.batch, self.max_nodes, self.c_puct = batch, max_nodes, c_puct
        size = batch * max_nodes
        self.tree_base = np.arange(batch, dtype=np.intp) * max_nodes  # flat index of each root
        self.cube = np.zeros((size, NUM_STICKERS), dtype=np.int8)  # [B*M, 24]
        self.last_action = np.full(size, NO_ACTION, dtype=np.intp)  # [B*M] move into the node
        self.face_count = np.zeros(size, dtype=np.intp)  # [B*M] repeats of that move's face
        self.expanded = np.zeros(
            size + 1, dtype=bool
        )  # [B*M + 1] has priors and children; last slot: sentinel for UNVISITED
        self.children = np.full(size * NUM_ACTIONS, UNVISITED, dtype=np.intp)  # [B*M*12] flat child index
        self.stats = np.zeros((size, 3, NUM_ACTIONS), dtype=np.float64)  # [B*M, (N, W, c_puct*P), 12]
        self.child_visits = np.zeros(size, dtype=np.float64)  # [B*M] sum of the children's N
        self.num_nodes = np.ones(batch, dtype=np.intp)  # [B] nodes allocated per tree
        self.cube[self.tree_base] = root_cubes
        self.last_action[self.tree_base] = root_last
        self.face_count[self.tree_base] = root_count

    # -- expansion ----------------------------------------------------------------------
    def _expand(self, nodes: np.ndarray, legal: np.ndarray, evaluator: Evaluator) -> np.ndarray:
        """Evaluate unsolved ``nodes`` with the network, store priors and legal children.

        Returns the leaf values: 1.0 for solved nodes (never expanded), else the network's.
        """
        values = np.ones(len(nodes), dtype=np.float64)
        solved = batch_is_solved(self.cube[nodes])
        todo = np.flatnonzero(~solved)
        if len(todo):
            n = nodes[todo]
            priors, v = evaluator(self.cube[n])
            # Same float64 product as the reference's ``c_puct * prior``, computed once here.
            self.stats[n, _CP] = np.where(legal[todo], self.c_puct * priors.astype(np.float64), -np.inf)
            self.expanded[n] = True
            values[todo] = v
        return values

    def expand_roots(self, root_masks: np.ndarray, evaluator: Evaluator) -> None:
        # Simulation 1: the root is the leaf; its own statistics are not used by selection.
        self._expand(self.tree_base, root_masks, evaluator)

    # -- one simulation in all trees -------------------------------------------------------
    def simulate(self, evaluator: Evaluator) -> None:
        trees = np.flatnonzero(self.expanded[self.tree_base])  # a solved root is never searched
        node = self.tree_base[trees]
        path_nodes: list[np.ndarray] = []  # per depth: flat parent nodes of the trees still descending
        path_actions: list[np.ndarray] = []
        path_trees: list[np.ndarray] = []  # per depth: positions (into ``trees``) of those trees
        pos = np.arange(len(trees))
        # Per tree, the last edge taken; when the descent ends it is the leaf's edge.
        leaf_parent = np.empty(len(trees), dtype=np.intp)
        leaf_action = np.empty(len(trees), dtype=np.intp)
        leaf_child = np.empty(len(trees), dtype=np.intp)
        while len(pos):
            s = self.stats[node]  # [k, 3, 12], one gather per level
            n_visits = s[:, _N]
            q = s[:, _W] / np.maximum(n_visits, 1.0)  # W is 0 where N is 0: unvisited Q = 0
            u = s[:, _CP] * np.sqrt(self.child_visits[node] + 1e-8)[:, None]
            u /= n_visits + 1.0
            u += q
            action = u.argmax(axis=1)  # first maximum: ties go to the lowest action
            child = self.children[node * NUM_ACTIONS + action]
            path_nodes.append(node)
            path_actions.append(action)
            path_trees.append(pos)
            leaf_parent[pos], leaf_action[pos], leaf_child[pos] = node, action, child
            # Continue through expanded children; stop at a new child (UNVISITED = -1 reads
            # the always-False sentinel at the end of ``expanded``) or a solved one.
            go_on = self.expanded[child]
            node, pos = child[go_on], pos[go_on]

        # Create the new leaves (children never visited before) in one vectorised pass.
        new = np.flatnonzero(leaf_child == UNVISITED)
        if len(new):
            parent, action = leaf_parent[new], leaf_action[new]
            ids = self.tree_base[trees[new]] + self.num_nodes[trees[new]]
            self.num_nodes[trees[new]] += 1
            self.children[parent * NUM_ACTIONS + action] = ids
            self.cube[ids] = batch_apply_moves(self.cube[parent], action)
            self.last_action[ids] = action
            self.face_count[ids] = next_face_count(self.last_action[parent], self.face_count[parent], action)
            leaf_child[new] = ids
        values = np.ones(len(trees), dtype=np.float64)  # revisited terminal leaves are worth 1.0
        if len(new):
            ids = leaf_child[new]
            legal = legal_action_mask(self.last_action[ids], self.face_count[ids])
            values[new] = self._expand(ids, legal, evaluator)

        # Backup along every path, then the original's second update of the leaf edge.
        for nodes, actions, pos in zip(path_nodes, path_actions, path_trees):
            self.stats[nodes, _N, actions] += 1.0
            self.stats[nodes, _W, actions] += values[pos]
            self.child_visits[nodes] += 1.0
        self.stats[leaf_parent, _N, leaf_action] += 1.0
        self.stats[leaf_parent, _W, leaf_action] += values
        self.child_visits[leaf_parent] += 1.0

    def root_visits(self) -> np.ndarray:
        return self.stats[self.tree_base, _N].astype(np.float32)

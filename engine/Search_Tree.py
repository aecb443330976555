"""The batched search tree shared by PUCT MCTS (``MCTS_Core``) and the Gumbel search (``Gumbel_MCTS``).

Layout (mctx-style): B trees live in flat arrays indexed by ``tree * max_nodes + node`` (node
0 is a tree's root). Per node the child statistics are one ``(2 + prior_rows, A)`` block,
gathered once per tree level: visits N, total return W, then the search's own rows (PUCT:
c_puct * prior; Gumbel: logits and prior probabilities), written at expansion by the
search's ``priors_to_rows``. Per edge the tree keeps the reward and the discount of the move.
The states are the game's state batch with ``B * max_nodes`` rows.

Semantics of one simulation in every tree whose root is expanded:

* Descent: from the root, the search's ``select(tree, nodes, tree_ids, depth) -> actions``
  picks an edge at each expanded node, until the edge leads to a child never created or to a
  terminal child (terminal nodes are never expanded).
* A new child gets its state (``game.step``), its edge reward (``game.reward`` plus the
  search's ``step_reward``) and discount (``game.discount``). It is worth
  ``game.terminal_value`` if terminal, else it is expanded: one evaluator call for the new
  leaves of all trees gives its priors and value. A terminal child reached again is worth its
  stored terminal value. Values are for the player to move at the node.
* Backup from the leaf up: the return of an edge is ``reward + discount * (return below)``,
  the leaf's value at the bottom (mctx); N += 1 and W += return on every edge of the path, so
  W / N is the mean return for the player to move at the edge's parent (discount -1: negamax).
  With ``leaf_quirk`` (the original cube MCTS asks for it where ``game.leaf_quirk`` says so) the
  leaf edge is updated a second time with its return.

Row sums over actions are plain numpy sums of integer-valued floats (exact).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

#: The searches on this tree, as self-play's ``--search`` names them (the cube's and Go's): PUCT
#: (``MCTS_Core``) and Gumbel AlphaZero (``Gumbel_MCTS``).
SEARCHES = ("puct", "gumbel")
UNVISITED = -1  # children value of a child that has no node yet
N_ROW, W_ROW = 0, 1  # rows of the per-node statistics block; the search's rows follow

#: ``evaluate(inputs (n, ...)) -> (priors (n, A) float32, values (n,) float32)`` over the game's
#: ``eval_input`` rows.
Evaluator = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
#: ``priors_to_rows(priors (k, A) float64, legal (k, A) bool) -> (k, prior_rows, A)``: the
#: search's statistics rows of new nodes.
PriorRows = Callable[[np.ndarray, np.ndarray], np.ndarray]
#: ``select(tree, nodes (k,), tree_ids (k,), depth) -> actions (k,)``: the edge taken at ``nodes``.
Select = Callable[["SearchTree", np.ndarray, np.ndarray, int], np.ndarray]


def take_rows(state: dict[str, np.ndarray], rows: np.ndarray) -> dict[str, np.ndarray]:
    """The state batch of ``rows``."""
    return {key: value[rows] for key, value in state.items()}


class SearchTree:
    """B search trees of at most ``max_nodes`` nodes each over ``game``, rooted at ``root_state``."""

    def __init__(
        self,
        game,
        root_state: dict[str, np.ndarray],
        max_nodes: int,
        priors_to_rows: PriorRows,
        prior_rows: int,
        step_reward: float = 0.0,
        leaf_quirk: bool = False,
    ):
        self.game, self.max_nodes, self.leaf_quirk = game, max_nodes, leaf_quirk
        with_room = getattr(game, "with_room", None)  # Go: room in the hash history for the deepest node, so
        if with_room is not None:  # that no step inside the tree widens a state beyond the arrays below
            root_state = with_room(root_state, max_nodes)
        self.priors_to_rows, self.step_reward = priors_to_rows, step_reward
        self.batch = batch = len(game.eval_input(root_state))
        size, actions = batch * max_nodes, game.num_actions
        self.tree_base = np.arange(batch, dtype=np.intp) * max_nodes  # [B] flat index of each root
        self.state = {k: np.zeros((size, *v.shape[1:]), v.dtype) for k, v in root_state.items()}  # [B*M, ...]
        for key, value in root_state.items():
            self.state[key][self.tree_base] = value
        # [B*M + 1] has priors and children; the last slot is an always-False sentinel read for UNVISITED.
        self.expanded = np.zeros(size + 1, dtype=bool)
        self.children = np.full(size * actions, UNVISITED, dtype=np.intp)  # [B*M*A] flat child index
        self.stats = np.zeros((size, 2 + prior_rows, actions), dtype=np.float64)  # [B*M, (N, W, ...), A]
        self.reward = np.zeros((size, actions), dtype=np.float64)  # [B*M, A] reward of each edge
        self.discount = np.zeros((size, actions), dtype=np.float64)  # [B*M, A] discount of each edge
        self.raw_value = np.zeros(size, dtype=np.float64)  # [B*M] evaluator's value of expanded nodes
        self.terminal_value = np.zeros(size, dtype=np.float64)  # [B*M] value of terminal nodes
        self.num_nodes = np.ones(batch, dtype=np.intp)  # [B] nodes allocated per tree

    @staticmethod
    def node_bytes(game, root_state: dict[str, np.ndarray], max_nodes: int, prior_rows: int) -> int:
        """The bytes one node takes in a tree of ``max_nodes`` nodes over ``root_state`` (one state): the
        arrays of ``__init__``, for a caller that sizes a tree to its memory (``gtp.py``'s long searches).
        In Go each node keeps the game's whole hash history, at least ``max_nodes`` wide: a tree's memory
        grows with the square of its nodes."""
        with_room = getattr(game, "with_room", None)
        if with_room is not None:
            root_state = with_room(root_state, max_nodes)
        state = sum(value[0].nbytes for value in root_state.values())
        edges = game.num_actions * ((2 + prior_rows) * 8 + np.dtype(np.intp).itemsize + 2 * 8)
        return state + edges + 8 + 8 + 1  # raw and terminal values, expanded flag

    def __getattr__(self, name: str) -> np.ndarray:
        """The state's arrays read as attributes (``tree.last_action`` of a cube tree)."""
        state = self.__dict__.get("state", {})
        if name in state:
            return state[name]
        raise AttributeError(name)

    # -- expansion ----------------------------------------------------------------------
    def expand(
        self, nodes: np.ndarray, legal: np.ndarray, evaluator: Evaluator, priors_to_rows: PriorRows | None = None
    ) -> np.ndarray:
        """Evaluate the non-terminal ``nodes`` ``[k]`` (``legal`` ``[k, A]``), store their rows.

        Returns the leaf values ``[k]`` float64: ``game.terminal_value`` of terminal nodes
        (stored, never expanded), the evaluator's value of the others. ``priors_to_rows`` replaces
        the tree's for these nodes (a search's roots: root noise, ``MCTS_Core.RootNoise``).
        """
        state = take_rows(self.state, nodes)
        terminal = self.game.is_terminal(state)
        values = np.zeros(len(nodes), dtype=np.float64)
        ends = np.flatnonzero(terminal)
        if len(ends):
            values[ends] = self.terminal_value[nodes[ends]] = self.game.terminal_value(take_rows(state, ends))
        todo = np.flatnonzero(~terminal)
        if len(todo):
            n = nodes[todo]
            priors, v = evaluator(self.game.eval_input(take_rows(state, todo)))
            rows = self.priors_to_rows if priors_to_rows is None else priors_to_rows
            self.stats[n, 2:] = rows(priors.astype(np.float64), legal[todo])
            self.raw_value[n] = values[todo] = v
            self.expanded[n] = True
        return values

    def _add_children(self, trees: np.ndarray, parent: np.ndarray, action: np.ndarray) -> np.ndarray:
        """New nodes for the edges ``(parent, action)`` of ``trees`` ``[k]``; returns their flat ids."""
        ids = self.tree_base[trees] + self.num_nodes[trees]
        self.num_nodes[trees] += 1
        self.children[parent * self.game.num_actions + action] = ids
        before = take_rows(self.state, parent)
        after = self.game.step(before, action)
        for key, value in after.items():
            self.state[key][ids] = value
        self.reward[parent, action] = self.game.reward(before, action, after) + self.step_reward
        self.discount[parent, action] = self.game.discount
        return ids

    # -- one simulation in every tree with an expanded root ------------------------------
    def simulate(self, select: Select, evaluator: Evaluator) -> None:
        trees = np.flatnonzero(self.expanded[self.tree_base])  # a terminal root is never searched
        node = self.tree_base[trees]
        pos = np.arange(len(trees))  # positions (into ``trees``) of the trees still descending
        path: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # per depth: (nodes, actions, positions)
        # Per tree, the last edge taken; when the descent ends it is the leaf's edge.
        leaf_parent = np.empty(len(trees), dtype=np.intp)
        leaf_action = np.empty(len(trees), dtype=np.intp)
        leaf_child = np.empty(len(trees), dtype=np.intp)
        while len(pos):
            action = select(self, node, trees[pos], len(path))
            child = self.children[node * self.game.num_actions + action]
            path.append((node, action, pos))
            leaf_parent[pos], leaf_action[pos], leaf_child[pos] = node, action, child
            go_on = self.expanded[child]  # UNVISITED reads the always-False sentinel
            node, pos = child[go_on], pos[go_on]

        # Children never visited before become nodes and are evaluated in one pass; a revisited
        # leaf is terminal and worth its stored value.
        new = np.flatnonzero(leaf_child == UNVISITED)
        if len(new):
            leaf_child[new] = self._add_children(trees[new], leaf_parent[new], leaf_action[new])
        values = self.terminal_value[leaf_child]
        if len(new):
            ids = leaf_child[new]
            values[new] = self.expand(ids, self.game.legal_mask(take_rows(self.state, ids)), evaluator)
        self._backup(path, values, leaf_parent, leaf_action)

    def _backup(self, path, values: np.ndarray, leaf_parent: np.ndarray, leaf_action: np.ndarray) -> None:
        """Returns up the paths (``values`` ``[k]``: the leaves'), then the leaf quirk if asked for."""
        leaf_return = self.reward[leaf_parent, leaf_action] + self.discount[leaf_parent, leaf_action] * values
        for nodes, actions, pos in reversed(path):
            values[pos] = self.reward[nodes, actions] + self.discount[nodes, actions] * values[pos]
            self.stats[nodes, N_ROW, actions] += 1.0
            self.stats[nodes, W_ROW, actions] += values[pos]
        if self.leaf_quirk:
            self.stats[leaf_parent, N_ROW, leaf_action] += 1.0
            self.stats[leaf_parent, W_ROW, leaf_action] += leaf_return

    def root_stats(self) -> np.ndarray:
        """``[B, 2 + prior_rows, A]`` the roots' statistics blocks."""
        return self.stats[self.tree_base]

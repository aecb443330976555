"""A plain, one-tree-at-a-time MCTS written like the original (node objects, one evaluation per
simulation). It documents the semantics and is the oracle the batched engine is tested
against; ``bench/bench_mcts.py`` also times it."""

from __future__ import annotations

import math

import numpy as np

from Rubik2x2Env import NUM_ACTIONS, Rubik2x2Env, apply_move_idx, encode_onehot, is_solved


class MCTSNode:
    def __init__(self, cube, obs, action_mask, parent=None, prior=0.0, last_action=None, repeat_count=0):
        self.cube = cube
        self.obs = obs  # as the original's node: the observation is stored with the cube
        self.action_mask = action_mask
        self.parent = parent
        self.prior = prior
        self.children: dict[int, MCTSNode] = {}
        self.N = 0
        self.W = 0.0
        self.Q = 0.0
        self.last_action = last_action
        self.repeat_count = repeat_count

    def is_expanded(self) -> bool:
        return len(self.children) > 0


class ReferenceMCTS:
    """``evaluate(cube (24,), obs (144,)) -> (priors (12,), value)``: one state per call.

    Written as the original describes its MCTS: nodes hold cube and observation, and the mask
    of each new child comes from a ``mask_env`` synced with the child's cube and move history.
    """

    def __init__(self, evaluate, c_puct=1.3, num_simulations=200):
        self.evaluate = evaluate
        self.c_puct = c_puct
        self.num_simulations = num_simulations
        self.mask_env = Rubik2x2Env(use_action_mask=True)

    def run(self, root_cube, root_action_mask=None, last_action=None, repeat_count=0):
        mask = np.ones(NUM_ACTIONS, bool) if root_action_mask is None else np.asarray(root_action_mask, bool)
        cube = np.asarray(root_cube).reshape(24).astype(np.int8)
        root = MCTSNode(cube, encode_onehot(cube), mask, last_action=last_action, repeat_count=repeat_count)
        for _ in range(self.num_simulations):
            leaf, path = self._select(root)
            value = self._expand_and_evaluate(leaf)
            self._backup(path, value, leaf)
        counts = np.zeros(NUM_ACTIONS, dtype=np.float32)
        for a, child in root.children.items():
            counts[a] = child.N
        return counts

    def _select(self, node):
        path = []
        while node.is_expanded():
            total_n = sum(child.N for child in node.children.values())
            best, best_score = None, -math.inf
            for a in range(NUM_ACTIONS):  # ascending, strict '>': ties go to the lowest action
                if a not in node.children:
                    continue
                child = node.children[a]
                q = child.W / child.N if child.N > 0 else 0.0
                u = self.c_puct * child.prior * np.sqrt(total_n + 1e-8) / (1 + child.N)
                score = q + u
                if score > best_score:
                    best, best_score = a, score
            path.append((node, best))
            node = node.children[best]
        return node, path

    def _expand_and_evaluate(self, leaf):
        if is_solved(leaf.cube):
            return 1.0
        priors, value = self.evaluate(leaf.cube, leaf.obs)
        for a in range(NUM_ACTIONS):
            if not leaf.action_mask[a]:
                continue
            if leaf.last_action is not None and leaf.last_action // 2 == a // 2:
                count = leaf.repeat_count + 1
            else:
                count = 1
            new_cube = apply_move_idx(leaf.cube, a)
            self.mask_env.set_state(new_cube, a, count)
            child_mask = self.mask_env._legal_action_mask()
            leaf.children[a] = MCTSNode(new_cube, encode_onehot(new_cube), child_mask, leaf, float(priors[a]), a, count)
        return float(value)

    def _backup(self, path, value, leaf):
        for node, a in path:
            child = node.children[a]
            child.N += 1
            child.W += value
            child.Q = child.W / child.N
        # The original also updates the leaf node itself (for a non-root leaf: its edge again).
        leaf.N += 1
        leaf.W += value
        leaf.Q = leaf.W / leaf.N


class GameNode:
    """A node of ``ReferenceGameMCTS``: one state (a 1-row state batch) and the edge into it."""

    def __init__(self, state, prior=0.0, reward=0.0):
        self.state = state
        self.prior = prior
        self.reward = reward  # of the move into this node, for the player who made it
        self.children: dict[int, GameNode] = {}
        self.N = 0
        self.W = 0.0  # sum of the returns for the player to move at the parent


class ReferenceGameMCTS:
    """A plain one-tree PUCT MCTS over a ``Games.Game`` with reward and discount per move: with
    discount -1 (two players) it is negamax, the value negated at each ply. No leaf quirk.

    ``evaluate(inputs) -> (priors (A,), value)`` for one state's ``game.eval_input`` row.
    Simulation 1 expands the root; every later one descends by the same PUCT rule as
    ``ReferenceMCTS`` over the legal children, reaches a terminal leaf (worth
    ``game.terminal_value``) or a new one (expanded, worth the evaluator's value), and adds
    ``reward + discount * (return below)`` to W of each edge on the way up.
    """

    def __init__(self, game, evaluate, c_puct=1.3, num_simulations=200):
        self.game, self.evaluate = game, evaluate
        self.c_puct, self.num_simulations = c_puct, num_simulations

    def run(self, state) -> tuple[np.ndarray, np.ndarray]:
        """``(visits (A,), Q (A,))`` at the root of one state (a 1-row state batch); Q = W / N, 0 unvisited."""
        root = GameNode(state)
        for _ in range(self.num_simulations):
            path = self._select(root)
            leaf = path[-1] if path else root
            self._backup(path, self._expand_and_evaluate(leaf))
        visits, q = np.zeros(self.game.num_actions, np.float32), np.zeros(self.game.num_actions)
        for a, child in root.children.items():
            visits[a], q[a] = child.N, child.W / child.N if child.N else 0.0
        return visits, q

    def _select(self, node) -> list[GameNode]:
        path = []
        while node.children:
            total_n = sum(child.N for child in node.children.values())
            best, best_score = None, -math.inf
            for a in sorted(node.children):  # strict '>': ties go to the lowest action
                child = node.children[a]
                q = child.W / child.N if child.N > 0 else 0.0
                score = q + self.c_puct * child.prior * np.sqrt(total_n + 1e-8) / (1 + child.N)
                if score > best_score:
                    best, best_score = a, score
            node = node.children[best]
            path.append(node)
        return path

    def _expand_and_evaluate(self, leaf) -> float:
        if self.game.is_terminal(leaf.state)[0]:
            return float(self.game.terminal_value(leaf.state)[0])
        priors, value = self.evaluate(self.game.eval_input(leaf.state)[0])
        for a in np.flatnonzero(self.game.legal_mask(leaf.state)[0]):
            action = np.array([a])
            child = self.game.step(leaf.state, action)
            reward = float(self.game.reward(leaf.state, action, child)[0])
            leaf.children[int(a)] = GameNode(child, float(priors[a]), reward)
        return float(value)

    def _backup(self, path, value) -> None:
        for node in reversed(path):
            value = node.reward + self.game.discount * value
            node.N += 1
            node.W += value

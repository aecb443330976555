"""A plain, one-tree-at-a-time Gumbel AlphaZero search (node objects, python loops over the 12
actions, one simulation at a time). It documents the semantics of ``Gumbel_MCTS`` and is the
oracle the batched engine is tested against. Sums run left to right over the actions in index
order, as the engine's, so both give the same floats."""

from __future__ import annotations

import math

import numpy as np

from Rubik2x2Env import NUM_ACTIONS, apply_move_idx, is_solved, legal_action_mask

C_VISIT, C_SCALE, EPSILON = 50.0, 0.1, 1e-8
PRIOR_FLOOR = float(np.finfo(np.float32).tiny)
ACTIONS = range(NUM_ACTIONS)


def halving_schedule(m: int, n: int) -> list[int]:
    """Sequential Halving as mctx schedules it: the visit count of the action each of the n
    simulations goes to, for m considered actions."""
    if m <= 1:
        return list(range(n))
    phases = math.ceil(math.log2(m))
    schedule: list[int] = []
    level = 0
    while len(schedule) < n:
        for _ in range(max(1, n // (phases * m))):
            schedule += [level] * m
            level += 1
        m = max(2, m // 2)
    return schedule[:n]


def softmax(x: list[float]) -> list[float]:
    top = max(x)
    e = [math.exp(v - top) for v in x]  # exp(-inf) = 0
    total = 0.0
    for v in e:
        total += v
    return [v / total for v in e]


class Node:
    def __init__(self, cube, last_action, face_count):
        self.cube = cube
        self.last_action = last_action
        self.face_count = face_count
        self.legal = [bool(x) for x in legal_action_mask(last_action, face_count)]
        self.children: dict[int, Node] = {}
        self.N = [0] * NUM_ACTIONS
        self.W = [0.0] * NUM_ACTIONS
        self.logits: list[float] = []
        self.probs: list[float] = []
        self.raw_value = 0.0
        self.expanded = False


class ReferenceGumbel:
    """``evaluate(cubes (1, 24)) -> (priors (1, 12), values (1,))``."""

    def __init__(self, evaluate, num_simulations, max_considered=16, step_reward=-0.03):
        self.evaluate = evaluate
        self.step_reward = step_reward
        self.num_simulations = num_simulations
        self.max_considered = max_considered

    def run(self, cube, gumbel, last_action=-1, face_count=0, legal=None):
        """Returns ``(action, policy (12,), value, visits (12,))``; None for a solved root."""
        root = Node(np.asarray(cube, np.int8).reshape(24), last_action, face_count)
        if legal is not None:
            root.legal = [bool(x) for x in legal]
        if is_solved(root.cube):
            return None
        self.expand(root)
        m = min(self.max_considered, sum(root.legal))
        for considered in halving_schedule(m, self.num_simulations):
            self.simulate(root, gumbel, considered)
        sigma = self.sigma(root)
        best = max(root.N)
        action = self.root_choice(root, gumbel, sigma, best)
        policy = softmax([root.logits[a] + sigma[a] for a in ACTIONS])
        w_total = 0.0
        for a in ACTIONS:
            w_total += root.W[a]
        value = (root.raw_value + w_total) / (1 + sum(root.N))
        return action, policy, value, list(root.N)

    def expand(self, node):
        """The leaf value: 1.0 if solved (never expanded), else the network's."""
        if is_solved(node.cube):
            return 1.0
        priors, values = self.evaluate(node.cube[None])
        node.logits = [math.log(max(float(priors[0][a]), PRIOR_FLOOR)) if node.legal[a] else -math.inf for a in ACTIONS]
        node.probs = softmax(node.logits)
        node.raw_value = float(values[0])
        node.expanded = True
        return node.raw_value

    def sigma(self, node):
        """sigma(q_hat) per action: completed Q (mixed value when unvisited), min-max rescaled
        over the legal actions, times (c_visit + max N) * c_scale."""
        visited = [n > 0 for n in node.N]
        q = [node.W[a] / node.N[a] if visited[a] else 0.0 for a in ACTIONS]
        total = sum(node.N)
        sum_p = 0.0
        for a in ACTIONS:
            if visited[a]:
                sum_p += node.probs[a]
        weighted = 0.0
        for a in ACTIONS:
            if visited[a]:
                weighted += node.probs[a] * q[a] / sum_p
        v_mix = (node.raw_value + total * weighted) / (total + 1)
        completed = [q[a] if visited[a] else v_mix for a in ACTIONS]
        legal_q = [completed[a] for a in ACTIONS if node.legal[a]]
        low, high = min(legal_q), max(legal_q)
        return [(C_VISIT + max(node.N)) * C_SCALE * ((c - low) / max(high - low, EPSILON)) for c in completed]

    def root_choice(self, root, gumbel, sigma, considered):
        top = max(root.logits)
        best, best_score = None, -math.inf
        for a in ACTIONS:  # strict '>': ties go to the lowest action
            if root.legal[a] and root.N[a] == considered:
                score = gumbel[a] + (root.logits[a] - top) + sigma[a]
                if best is None or score > best_score:
                    best, best_score = a, score
        return best

    def interior_choice(self, node):
        sigma = self.sigma(node)
        pi = softmax([node.logits[a] + sigma[a] for a in ACTIONS])
        total = sum(node.N)
        best, best_score = None, -math.inf
        for a in ACTIONS:
            if node.legal[a]:
                score = pi[a] - node.N[a] / (1 + total)
                if best is None or score > best_score:
                    best, best_score = a, score
        return best

    def simulate(self, root, gumbel, considered):
        path = [(root, self.root_choice(root, gumbel, self.sigma(root), considered))]
        while True:
            node, a = path[-1]
            assert node.legal[a]
            child = node.children.get(a)
            if child is None:  # a new leaf
                count = node.face_count + 1 if node.last_action // 2 == a // 2 and node.last_action >= 0 else 1
                child = node.children[a] = Node(apply_move_idx(node.cube, a), a, count)
                value = self.expand(child)
                break
            if not child.expanded:  # a solved leaf, visited again
                value = 1.0
                break
            path.append((child, self.interior_choice(child)))
        for node, a in reversed(path):  # an edge's return: the step reward plus the return below it
            value += self.step_reward
            node.N[a] += 1
            node.W[a] += value

"""Gumbel AlphaZero search (Danihelka et al., ICLR 2022), many trees advanced in lockstep.

The semantics follow DeepMind mctx's ``gumbel_muzero_policy`` with
``qtransform_completed_by_mix_value``; ``tests/reference_gumbel.py`` is a plain one-tree
implementation that this engine is tested against (same numbers, bit for bit).

* Environment: the game's (``Games``; default the 2x2: single agent, deterministic, no
  discount). A leaf is worth the game's terminal value if terminal (never expanded; a solved
  cube: 1.0 at every visit), else the network's value, as in ``MCTS_Core``. A two-player game
  (discount -1) negates the return at each ply (``Search_Tree``). Every move earns
  ``step_reward`` (default ``-game.move_cost``: the cube's -0.03 of the network's value scale,
  v = 1 - 0.03 * moves to solve, read as a cost per move; 0 for a game), so an edge's return is the step
  reward plus the return below it, and Q(a) = W(a) / N(a) is the mean return through a
  (mctx: Q = reward + discount * value). ``step_reward=0`` gives ``MCTS_Core``'s convention,
  but then a subtree that found any solution averages towards 1 however long its way, and
  with an exact evaluator the chosen move gets worse as simulations grow (tests show it).
* The root is evaluated first (not a simulation); then each of the ``n`` simulations adds
  exactly one visit to one root action. No seed quirk here: backup adds 1 to N and the return
  to W of every edge on the path, once.
* Logits: ``log(prior)`` of the network's softmax priors (floored at float32's tiny), -inf for
  illegal actions at every node (masks from ``legal_action_mask`` with the move history; at
  the root the real history of the episode), so that illegal actions get no probability.
* sigma(q) = (c_visit + max_b N(b)) * c_scale * q_hat (c_visit = 50, c_scale = 0.1), where
  q_hat is the completed Q rescaled to [0, 1] by the min and max over the node's legal
  actions (denominator at least 1e-8). Completed Q: Q(a) for visited actions, the mixed
  value v_mix = (v_raw + sum N * sum_{visited} p(a) Q(a) / sum_{visited} p(a)) / (1 + sum N)
  for unvisited ones (mctx ``_compute_mixed_value``). Deviation from mctx: mctx takes min
  and max over all actions, illegal ones included (they hold v_mix); we use legal ones only.
* Root: g(a) ~ Gumbel(0, 1) * gumbel_scale per action from a numpy Generator. Sequential
  Halving uses mctx's schedule (``get_sequence_of_considered_visits``): with m =
  min(max_considered, #legal) and L = ceil(log2 m), each phase gives
  max(1, floor(n / (L * k))) visits to each of the k actions still considered, then k
  becomes max(2, k // 2), until n simulations are scheduled. Simulation i visits the action
  with the best g + logits + sigma(q_hat) among the legal actions whose visit count equals
  the schedule's entry i; the first m simulations thus visit the top m actions by g + logits,
  and the halving happens implicitly, one simulation at a time.
* Interior nodes (deterministic, mctx): argmax over legal a of pi'(a) - N(a) / (1 + sum N),
  pi' = softmax(logits + sigma(completed Q)); ties go to the lowest action.
* Outputs per root: the Sequential Halving winner (best g + logits + sigma(q_hat) among the
  actions with the most visits), the policy target softmax(logits + sigma(completed Q))
  (0 for illegal actions), the root value (v_raw + sum W) / (1 + sum N), the visit counts.
  A terminal root is not searched: action ``NO_ACTION``, zero policy and visits, value the
  game's terminal value (a solved cube: 1.0).

Layout as ``MCTS_Core``: one ``Search_Tree.SearchTree`` of B trees in flat arrays indexed by
``tree * max_nodes + node``; per node the child statistics (N, W, logits, prior probabilities)
are one ``(4, A)`` block gathered once per tree level; one evaluator call per simulation step for the new leaves
of all trees. Row sums are sequential (``cumsum``), so that they equal a plain loop exactly.

This module is the search only; episodes played with it and their targets are ``Gumbel_Self_Play``'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from engine.Games import Game, get_game
from engine.Search_Tree import N_ROW, W_ROW, Evaluator, SearchTree, take_rows
from MCTS_Core import NetworkEvaluator

C_VISIT, C_SCALE, EPSILON = 50.0, 0.1, 1e-8  # mctx defaults (maxvisit_init, value_scale, epsilon)
PRIOR_FLOOR = float(np.finfo(np.float32).tiny)  # keeps log(prior) finite for a legal action
NO_ACTION = -1  # the action of a terminal root, which is not searched
_LOGIT, _PROB = 2, 3  # the search rows of the tree's per-node statistics, after N and W


# --------------------------------------------------------------------------- Sequential Halving schedule
def considered_visits(max_considered: int, num_simulations: int) -> np.ndarray:
    """``[n]`` the visit count an action must have to be chosen at each root simulation (mctx)."""
    if max_considered <= 1:
        return np.arange(num_simulations)
    log2max = math.ceil(math.log2(max_considered))
    sequence: list[int] = []
    visits, considered = 0, max_considered  # the considered actions all have ``visits`` visits
    while len(sequence) < num_simulations:
        extra = max(1, num_simulations // (log2max * considered))
        for _ in range(extra):
            sequence += [visits] * considered
            visits += 1
        considered = max(2, considered // 2)
    return np.array(sequence[:num_simulations], dtype=np.int64)


def considered_visit_table(max_considered: int, num_simulations: int) -> np.ndarray:
    """``[max_considered + 1, n]``: row m is ``considered_visits(m, n)``."""
    return np.stack([considered_visits(m, num_simulations) for m in range(max_considered + 1)])


# --------------------------------------------------------------------------- the q transform and policies
def _rowsum(x: np.ndarray) -> np.ndarray:
    """Sum over the last axis, left to right (a plain loop's rounding)."""
    return np.cumsum(x, axis=-1)[..., -1]


def _softmax(x: np.ndarray) -> np.ndarray:
    """Softmax over the last axis of ``[k, 12]``; -inf entries get 0."""
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / _rowsum(e)[..., None]


def transformed_q(
    visits: np.ndarray,
    value_sums: np.ndarray,
    probs: np.ndarray,
    raw_value: np.ndarray,
    legal: np.ndarray,
    c_visit: float = C_VISIT,
    c_scale: float = C_SCALE,
) -> np.ndarray:
    """``[k, 12]`` sigma(q_hat) of k nodes: completed Q (v_mix for unvisited actions) rescaled to
    [0, 1] over the legal actions, times ``(c_visit + max N) * c_scale``.

    ``visits``, ``value_sums`` (W), ``probs`` (prior probabilities), ``legal``: ``[k, 12]``;
    ``raw_value``: ``[k]`` the network's value of each node.
    """
    visited = visits > 0
    q = value_sums / np.maximum(visits, 1.0)  # [k, 12]
    total = _rowsum(visits)  # [k]
    sum_p = _rowsum(np.where(visited, probs, 0.0))
    weighted = _rowsum(np.where(visited, probs * q / np.where(sum_p > 0, sum_p, 1.0)[:, None], 0.0))
    v_mix = (raw_value + total * weighted) / (total + 1.0)  # [k]
    completed = np.where(visited, q, v_mix[:, None])
    low = np.where(legal, completed, np.inf).min(axis=1, keepdims=True)
    high = np.where(legal, completed, -np.inf).max(axis=1, keepdims=True)
    q_hat = (completed - low) / np.maximum(high - low, EPSILON)
    return (c_visit + visits.max(axis=1, keepdims=True)) * c_scale * q_hat


def _root_scores(gumbel, logits, sigma, visits, considered) -> np.ndarray:
    """``[k, 12]`` g + logits + sigma(q_hat) where N(a) equals ``considered`` ``[k]`` (else -inf)."""
    score = gumbel + (logits - logits.max(axis=1, keepdims=True)) + sigma
    return np.where((visits == considered[:, None]) & (logits > -np.inf), score, -np.inf)


# --------------------------------------------------------------------------- search
@dataclass
class GumbelResult:
    """What ``GumbelMCTS.run_batch`` returns for B roots."""

    action: np.ndarray  # [B] int64 Sequential Halving winner (NO_ACTION for a solved root)
    policy: np.ndarray  # [B, 12] float32 softmax(logits + sigma(completed Q)), 0 where illegal
    value: np.ndarray  # [B] float32 (v_raw + sum W) / (1 + sum N) at the root
    visits: np.ndarray  # [B, 12] float32 root visit counts (each row sums to n)
    q_values: np.ndarray  # [B, 12] float64 W / N at the root (0 where unvisited)
    gumbel: np.ndarray  # [B, 12] float64 the draw used (gumbel_scale included)
    tree: SearchTree | None = None  # the search tree, for inspection

    def best_q(self) -> np.ndarray:
        """``[B]`` float32 the largest Q among the visited root moves (1.0 for a solved root). The
        root ``value`` averages the returns of every visit, and Sequential Halving visits every
        considered move at least once, so at few simulations it reads a cube about as far as its
        average child; the best move's return estimates the optimal value instead."""
        best = np.where(self.visits > 0, self.q_values, -np.inf).max(axis=1)
        return np.where(self.visits.sum(axis=1) > 0, best, 1.0).astype(np.float32)


class GumbelMCTS:
    """Gumbel AlphaZero search over B roots in lockstep (see the module docstring).

    ``evaluator`` (optional) replaces the network: the game's evaluator inputs (the cube's
    stickers ``(n, 24)``) -> ``(priors (n, A), values (n,))``; by default a caching
    ``NetworkEvaluator`` of ``model``. ``step_reward`` (None: ``-game.move_cost``, the cube's
    -0.03) is added to every edge's reward.
    """

    def __init__(
        self,
        model: torch.nn.Module | None = None,
        num_simulations: int = 32,
        max_considered: int = 16,
        gumbel_scale: float = 1.0,
        c_visit: float = C_VISIT,
        c_scale: float = C_SCALE,
        step_reward: float | None = None,
        device: torch.device | str | None = None,
        evaluator: Evaluator | None = None,
        use_cache: bool = True,
        game: str | Game | None = None,
    ):
        if num_simulations < 1 or max_considered < 1:
            raise ValueError("num_simulations and max_considered must be at least 1")
        self.game = get_game(game)
        if evaluator is None:
            if model is None:
                raise ValueError("GumbelMCTS needs a model or an evaluator")
            evaluator = NetworkEvaluator(model, device, use_cache=use_cache, game=self.game)
        self.evaluator = evaluator
        self.num_simulations, self.max_considered = int(num_simulations), int(max_considered)
        self.gumbel_scale, self.c_visit, self.c_scale = float(gumbel_scale), float(c_visit), float(c_scale)
        self.step_reward = -float(self.game.move_cost) if step_reward is None else float(step_reward)
        self.table = considered_visit_table(self.max_considered, self.num_simulations)  # [m_max + 1, n]

    def run_batch(
        self,
        roots,
        root_action_masks: np.ndarray | None = None,
        *history,
        rng: np.random.Generator | None = None,
        gumbel: np.ndarray | None = None,
    ) -> GumbelResult:
        """Search B roots: a state batch (dict), or B positions for ``game.new_states(roots,
        *history)`` (the cube's: ``(B, 24)`` stickers, the last actions and face counts; default
        no history). The game's mask of each root applies unless ``root_action_masks`` is given.
        ``gumbel`` ``(B, A)``: a fixed draw (used as is); else ``gumbel_scale * rng.gumbel(size=(B,
        A))``, drawn for every root, terminal ones included."""
        state = roots if isinstance(roots, dict) else self.game.new_states(roots, *history)
        batch, actions = len(self.game.eval_input(state)), self.game.num_actions
        legal = self.game.legal_mask(state) if root_action_masks is None else np.asarray(root_action_masks, bool)
        legal = legal.reshape(batch, actions)
        if gumbel is None:
            rng = np.random.default_rng() if rng is None else rng
            gumbel = self.gumbel_scale * rng.gumbel(size=(batch, actions))
        gumbel = np.asarray(gumbel, dtype=np.float64).reshape(batch, actions)
        result = GumbelResult(
            action=np.full(batch, NO_ACTION, np.int64),
            policy=np.zeros((batch, actions), np.float32),
            value=np.zeros(batch, np.float32),
            visits=np.zeros((batch, actions), np.float32),
            q_values=np.zeros((batch, actions)),
            gumbel=gumbel,
        )
        terminal = self.game.is_terminal(state)
        result.value[terminal] = self.game.terminal_value(take_rows(state, np.flatnonzero(terminal)))
        todo = np.flatnonzero(~terminal)  # [B'] the roots searched
        if len(todo) == 0:
            return result
        if not legal[todo].any(axis=1).all():
            raise ValueError("every non-terminal root needs a legal action")
        tree = self._search(take_rows(state, todo), legal[todo], gumbel[todo])
        s = tree.root_stats()  # [B', 4, A]
        n, w, logits = s[:, N_ROW], s[:, W_ROW], s[:, _LOGIT]
        raw = tree.raw_value[tree.tree_base]
        sigma = transformed_q(n, w, s[:, _PROB], raw, logits > -np.inf, self.c_visit, self.c_scale)
        result.action[todo] = _root_scores(gumbel[todo], logits, sigma, n, n.max(axis=1)).argmax(axis=1)
        result.policy[todo] = _softmax(logits + sigma)
        result.value[todo] = (raw + _rowsum(w)) / (1.0 + _rowsum(n))
        result.visits[todo] = n
        result.q_values[todo] = w / np.maximum(n, 1.0)
        result.tree = tree
        return result

    def _search(self, state: dict, legal: np.ndarray, gumbel: np.ndarray) -> SearchTree:
        """The tree of ``num_simulations`` simulations from the non-terminal roots ``state``."""
        tree = SearchTree(self.game, state, self.num_simulations + 1, _logit_rows, 2, self.step_reward)
        tree.expand(tree.tree_base, legal, self.evaluator)
        considered = self.table[np.minimum(self.max_considered, legal.sum(axis=1))]  # [B', n] schedule per root

        def select(tree: SearchTree, nodes: np.ndarray, tree_ids: np.ndarray, depth: int) -> np.ndarray:
            s = tree.stats[nodes]  # [k, 4, A], one gather per level
            n, logits = s[:, N_ROW], s[:, _LOGIT]
            legal = logits > -np.inf
            sigma = transformed_q(n, s[:, W_ROW], s[:, _PROB], tree.raw_value[nodes], legal, self.c_visit, self.c_scale)
            if depth == 0:  # the roots: Sequential Halving
                return _root_scores(gumbel[tree_ids], logits, sigma, n, considered[tree_ids, sim]).argmax(axis=1)
            score = _softmax(logits + sigma) - n / (1.0 + _rowsum(n))[:, None]
            score[~legal] = -np.inf
            return score.argmax(axis=1)

        for sim in range(self.num_simulations):
            tree.simulate(select, self.evaluator)
        return tree


def _logit_rows(priors: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """``[k, 2, A]`` logits ``log(prior)`` (-inf where illegal) and their softmax of new nodes."""
    logits = np.where(legal, np.log(np.maximum(priors, PRIOR_FLOOR)), -np.inf)
    return np.stack([logits, _softmax(logits)], axis=1)

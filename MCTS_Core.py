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

Performance design: the B trees are one ``Search_Tree.SearchTree`` (flat arrays, mctx-style)
whose per-node block holds N, W and c_puct * P (-inf for illegal actions, so that they can never
win the argmax), gathered once per tree level. One network call per simulation step evaluates
the new leaves of all B trees together; an optional cache keyed by the exact state skips states
evaluated before (masks depend on the path, not the state, so only the raw network output is
cached).

The game (``Games``; default the 2x2) gives the states, masks, terminal values, reward and
discount; with discount -1 (two players) the backup is negamax, and the original's leaf quirk
applies only where the game asks for it (the cubes do).

Root noise (beyond the original; AlphaZero's exploration in self-play) is an argument of the search,
as mctx passes its ``dirichlet_fraction``: ``search(..., root_noise=RootNoise(fraction, draw))`` mixes
``draw``'s noise into the roots' priors only (the evaluator's cached outputs stay clean).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from engine import Precision
from engine.Games import Game, get_game
from engine.Search_Tree import N_ROW, W_ROW, Evaluator, SearchTree


class NetworkEvaluator:
    """Batched network evaluation of a game's evaluator inputs (``game.eval_input`` rows; the
    cube's stickers), with an optional exact-state cache keyed by ``game.state_keys``.

    The cache stores the network's raw output per state; it is only valid for fixed
    weights, so create a new evaluator (or call ``clear()``) after training.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        device: torch.device | str | None = None,
        use_cache: bool = True,
        game: str | Game | None = None,
        precision: str = "fp32",
    ):
        self.model = model
        self.game = get_game(game)
        self.device = torch.device(device) if device is not None else next(model.parameters()).device
        # ``Precision.PRECISIONS``: bf16 reads the network faster where the CPU has it (the 3x3's 1.8x, a go9
        # move's 1.35x: docs/puzzles.md and docs/go.md, "bfloat16"); fp32, the default, is what the bit-exact
        # tests pin.
        Precision.resolve(precision, self.device)  # an unknown name fails here, not at the first call
        self.precision = precision
        self.use_cache = use_cache
        self._index: dict[int, int] = {}
        self._priors = np.empty((0, self.game.num_actions), dtype=np.float32)  # [capacity, A] rows of _index
        self._values = np.empty((0,), dtype=np.float32)  # [capacity]
        self.network_states = 0  # states sent to the network (for throughput reports)
        self.requested_states = 0

    def clear(self) -> None:
        self._index.clear()

    def trim(self, max_states: int) -> None:
        """Forget every cached state once the cache holds more than ``max_states``: a player that searches
        on for hours (``gtp.py``'s analysis) would otherwise keep every position it ever evaluated."""
        if len(self._index) > max_states:
            self.clear()

    @torch.inference_mode()
    def forward(self, inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Network outputs ``(priors (n, A), values (n,))`` for ``n`` evaluator inputs, no cache."""
        self.network_states += len(inputs)
        obs = torch.from_numpy(self.game.encode(inputs)).to(self.device, non_blocking=True)
        with Precision.autocast(self.precision, self.device):
            logits, value = self.model(obs)
        if logits.dtype.itemsize < 4:  # bf16 products: the softmax in float32 (wider logits as they come)
            logits = logits.float()
        priors = torch.softmax(logits, dim=-1)
        return priors.float().cpu().numpy(), value.float().reshape(-1).cpu().numpy()

    def _store(self, keys: list[int], priors: np.ndarray, values: np.ndarray) -> None:
        start = len(self._index)
        if start + len(keys) > len(self._values):  # grow by doubling: amortised O(1) per state
            capacity = max(2 * len(self._values), start + len(keys), 1024)
            self._priors = np.resize(self._priors, (capacity, self.game.num_actions))
            self._values = np.resize(self._values, capacity)
        self._priors[start : start + len(keys)] = priors
        self._values[start : start + len(keys)] = values
        self._index.update(zip(keys, range(start, start + len(keys))))

    def __call__(self, inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.requested_states += len(inputs)
        if not self.use_cache:
            return self.forward(inputs)
        keys = self.game.state_keys(inputs)
        get = self._index.get
        rows = np.fromiter(map(get, keys.tolist(), itertools.repeat(-1)), dtype=np.int64, count=len(keys))
        miss = np.flatnonzero(rows < 0)
        if len(miss):
            # The same state can appear twice in one batch: evaluate it once.
            uniq_keys, first, inverse = np.unique(keys[miss], return_index=True, return_inverse=True)
            priors, values = self.forward(inputs[miss[first]])
            rows[miss] = len(self._index) + inverse
            self._store(uniq_keys.tolist(), priors, values)
        return self._priors[rows], self._values[rows]


@dataclass(frozen=True)
class RootNoise:
    """Noise mixed into the priors of a search's roots: ``(1 - fraction) P + fraction * draw(legal)``.

    ``draw(legal)``: ``legal`` ``(k, A)`` bool, the masks of the k roots the search expands (its
    non-terminal roots, in order), to ``(k, A)`` float64 noise. It is called once per search, when
    the roots are evaluated, so a caller that draws from generators draws the same numbers in the
    same order as long as nothing else draws from them during the search."""

    fraction: float
    draw: Callable[[np.ndarray], np.ndarray]


class MCTS:
    """The original's search object. ``run`` searches one root, ``run_batch`` B roots in lockstep.

    ``evaluator`` (optional) replaces the network: any function of the game's evaluator inputs
    (the cube's: stickers ``(n, 24)``) to ``(priors (n, A), values (n,))``; tests use it to
    feed both engines the same numbers. ``num_actions``, if given, must be the game's. ``c_puct``
    (None: the game's own, ``game.c_puct``; the cubes' is the original's default) is PUCT's
    exploration constant.
    """

    def __init__(
        self,
        model: torch.nn.Module | None,
        num_actions: int | None = None,
        c_puct: float | None = None,
        num_simulations: int = 200,
        device: torch.device | str | None = None,
        evaluator: Evaluator | None = None,
        use_cache: bool = True,
        game: str | Game | None = None,
    ):
        self.game = get_game(game)
        if num_actions is not None and num_actions != self.game.num_actions:
            raise ValueError(f"the game {self.game.name} has {self.game.num_actions} actions, not {num_actions}")
        if num_simulations < 1:
            raise ValueError("num_simulations must be at least 1")
        self.model = model
        self.num_actions = self.game.num_actions
        if c_puct is None:
            c_puct = getattr(self.game, "c_puct", None)
            if c_puct is None:
                raise ValueError(f"the game {self.game.name} has no c_puct of its own: give MCTS one")
        self.c_puct = float(c_puct)
        self.num_simulations = int(num_simulations)
        self.device = device
        if evaluator is None:
            if model is None:
                raise ValueError("MCTS needs a model or an evaluator")
            evaluator = NetworkEvaluator(model, device, use_cache=use_cache, game=self.game)
        self.evaluator = evaluator

    # -- the original API--------------------------------------------------------------------
    def run(self, root_cube: np.ndarray, root_obs=None, root_action_mask=None) -> np.ndarray:
        """Visit counts ``(A,)`` float32 of one search from ``root_cube`` (one position).

        ``root_obs`` is accepted for the original's signature (the observation is derived from
        the cube); ``root_action_mask`` restricts the root's legal actions.
        """
        masks = None if root_action_mask is None else np.asarray(root_action_mask, dtype=bool)[None]
        return self.run_batch(np.asarray(root_cube)[None], masks)[0]

    def run_batch(
        self, roots, root_action_masks: np.ndarray | None = None, *history, root_noise: RootNoise | None = None
    ) -> np.ndarray:
        """Visit counts ``(B, A)`` float32 of B independent searches run in lockstep (``search``)."""
        tree = self.search(roots, root_action_masks, *history, root_noise=root_noise)
        return tree.root_stats()[:, N_ROW].astype(np.float32)

    def search(
        self, roots, root_action_masks: np.ndarray | None = None, *history, root_noise: RootNoise | None = None
    ) -> SearchTree:
        """The trees of B independent searches run in lockstep.

        ``roots``: a state batch (dict), or B positions for ``game.new_states(roots, *history)``
        (the cube's: ``(B, 24)`` or ``(B, 6, 2, 2)`` stickers; ``history``: the last actions and
        face counts that produced them, default none, which the mask of the root's children
        depends on). ``root_action_masks``: legal root actions (default: the game's mask).
        ``root_noise``: noise mixed into the roots' priors (``RootNoise``; default none, the original's).
        """
        tree = self.start(roots, root_action_masks, *history, root_noise=root_noise)
        if tree.batch:
            for _ in range(self.num_simulations - 1):
                self.simulate(tree)
        return tree

    def start(
        self,
        roots,
        root_action_masks: np.ndarray | None = None,
        *history,
        max_nodes: int | None = None,
        root_noise: RootNoise | None = None,
    ):
        """Trees of room for ``max_nodes`` nodes each (default: ``num_simulations + 1``) after simulation 1
        (the roots expanded, ``root_noise`` mixed into their priors): ``search`` without its loop, for a
        caller that simulates on (``simulate``) until a clock or its input says stop (``gtp.py``'s timed
        moves and analysis)."""
        state = roots if isinstance(roots, dict) else self.game.new_states(roots, *history)
        batch = len(self.game.eval_input(state))
        masks = self.game.legal_mask(state) if root_action_masks is None else np.asarray(root_action_masks, bool)
        nodes = self.num_simulations + 1 if max_nodes is None else max_nodes
        tree = SearchTree(self.game, state, nodes, self._priors_to_rows, 1, leaf_quirk=self.game.leaf_quirk)
        if batch:
            # Simulation 1: the roots are the leaves; their own values are not used by selection.
            root_rows = None if root_noise is None else self._noisy_rows(root_noise)
            tree.expand(tree.tree_base, masks.reshape(batch, self.num_actions), self.evaluator, root_rows)
        return tree

    def simulate(self, tree: SearchTree) -> None:
        """One more simulation in every tree of ``start`` (the caller keeps within its ``max_nodes``)."""
        tree.simulate(self._select, self.evaluator)

    def _priors_to_rows(self, priors: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """``[k, 1, A]`` c_puct * prior, -inf where illegal (same float64 product as the reference's)."""
        return np.where(legal, self.c_puct * priors, -np.inf)[:, None]

    def _noisy_rows(self, noise: RootNoise):
        """``_priors_to_rows`` of priors with ``noise`` mixed in: the roots' rows."""

        def rows(priors: np.ndarray, legal: np.ndarray) -> np.ndarray:
            return self._priors_to_rows((1 - noise.fraction) * priors + noise.fraction * noise.draw(legal), legal)

        return rows

    @staticmethod
    def _select(tree: SearchTree, nodes: np.ndarray, tree_ids: np.ndarray, depth: int) -> np.ndarray:
        """``argmax_a Q(a) + c_puct * P(a) * sqrt(sum_b N(b) + 1e-8) / (1 + N(a))`` at ``nodes``
        (unvisited Q = 0; ties go to the lowest action)."""
        s = tree.stats[nodes]  # [k, 3, A], one gather per level
        n_visits = s[:, N_ROW]
        q = s[:, W_ROW] / np.maximum(n_visits, 1.0)  # W is 0 where N is 0: unvisited Q = 0
        u = s[:, 2] * np.sqrt(n_visits.sum(axis=1) + 1e-8)[:, None]
        u /= n_visits + 1.0
        u += q
        return u.argmax(axis=1)

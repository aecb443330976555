"""Gumbel AlphaZero self-play (``main.py --search gumbel``, ``Solvers``' ``gumbel`` solver): episodes whose
every move is the Sequential Halving winner of a ``Gumbel_MCTS.GumbelMCTS`` search, played in lockstep by
``Self_Play.play_lockstep``, and the value targets that read the search (the root value, n-step returns).

The search itself lives in ``Gumbel_MCTS``; this module only drives it through episodes and turns what it
returns into training targets.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from engine.Games import Game, get_game
from engine.Gumbel_MCTS import GumbelMCTS
from engine.Precision import eval_mode
from engine.Search_Tree import Evaluator
from engine.Value_Scale import VALUE_PER_MOVE
from Self_Play import EpisodeResults, play_lockstep

#: Value targets that read the search (``main.py --value-target``), beyond ``Self_Play.VALUE_TARGETS``.
SEARCH_VALUE_TARGETS = ("search", "bootstrap", "bootstrap-max")
#: What those targets read from a search (``main.py --search-value``): ``GumbelResult.value``, ``.best_q()``.
SEARCH_VALUES = ("mean", "best")
BOOTSTRAP_STEPS = 4  # default n of the n-step target (main.py --bootstrap-steps)


def bootstrap_returns(
    root_values: np.ndarray,
    solved: bool,
    steps: int,
    start_depth: int | None = None,
    step_reward: float = -VALUE_PER_MOVE,
    best_of_steps: bool = False,
) -> np.ndarray:
    """``[n]`` float32 n-step return of each of the n searched states of one episode.

    The state t moves in gets ``k * step_reward + V(t + k)`` with ``k = min(steps, moves left)``:
    the moves actually played, each costing ``step_reward`` as in the search, then the value of
    the state reached. That value is 1 for the solved cube that ends a solved episode, else the
    root value of the search from that state (an unsolved episode's last searched state is as
    far as it can look). ``steps=0`` is the search's root value itself; a solved episode with
    ``steps >= n`` gives ``1 + step_reward * moves to go``, the value scale's exact distance along
    the path played. Clipped to [-1, 1], the range of the network's tanh value.

    ``start_depth``: the episode started from a scramble of that many moves, so the state t
    moves in is at most ``start_depth + t`` moves from solved (undo the moves played, then the
    scramble), and its target is at least ``1 + step_reward * (start_depth + t)``. Without it,
    an episode that wanders only ever backs up values lowered by the step cost: measured from
    scratch, cubes 4 and 5 moves out then read 9.3 and 10.7 moves (4.6 and 5.8 with it).

    ``best_of_steps`` (``--value-target bootstrap-max``): the largest of the 0- to n-step
    returns. Each k-step return is the value of one way on: the k moves played, then the search
    from there; the distance is the shortest way, and a move sampled under Gumbel noise is often
    a detour that the n-step return alone counts in full. Measured (``docs/value_target_quality.py``
    on a 90-minute self-play model: 200 episodes from 16-move scrambles, 32 simulations), the
    4-step return read cubes 10-12 moves out 0.5-0.8 moves too far, and its mean error over all
    searched states was 0.11 moves; the largest of the 0- to 4-step returns, 0.05 (but 0.3 and
    1.5 moves too near at distances 12 and 13, where the network's value is too near itself).
    """
    values = np.asarray(root_values, dtype=np.float64)
    n = len(values)
    end = n if solved else n - 1  # the last state whose value is known
    t = np.arange(n)
    returns = []
    for k in range(0 if best_of_steps else steps, steps + 1):
        reach = np.minimum(t + k, end)  # [n] the state each target bootstraps from
        tail = np.where(reach == n, 1.0, values[np.minimum(reach, n - 1)])
        returns.append((reach - t) * step_reward + tail)
    low = -1.0 if start_depth is None else np.maximum(-1.0, 1.0 + step_reward * (start_depth + t))
    return np.clip(np.max(returns, axis=0), low, 1.0).astype(np.float32)


@dataclass
class GumbelEpisodeResults(EpisodeResults):
    """``Self_Play.EpisodeResults`` (``policies`` are the Gumbel policy targets) plus the search's
    two values of every searched state, and the start cubes' scramble length where known."""

    root_values: list[np.ndarray] = field(default_factory=list)  # per episode: [n_e] float32
    best_q: list[np.ndarray] = field(default_factory=list)  # per episode: [n_e] float32 GumbelResult.best_q()
    start_depth: int | None = None  # scramble length of the start cubes, if known (a bound on their distance)

    def state_values(
        self,
        value_target: str = "episode",
        bootstrap_steps: int = BOOTSTRAP_STEPS,
        search_value: str = "mean",
        depth_bound: bool = True,
    ):
        """Per episode, the value target of each searched state: ``Self_Play``'s targets from the
        episode's outcome, or from the search (``bootstrap_returns``): ``"search"`` its value of
        the state, ``"bootstrap"`` the ``bootstrap_steps``-step return. Outcome targets know only
        how an episode ended; the search grades every state, solved episode or not.
        ``search_value``: the search's value of a state is the root's ``"mean"`` value (mctx's)
        or the ``"best"`` root move's Q (``GumbelResult.best_q``). ``depth_bound``: bound the
        targets below by ``start_depth`` (``bootstrap_returns``) where it is known."""
        if value_target not in SEARCH_VALUE_TARGETS:
            return super().state_values(value_target)
        if search_value not in SEARCH_VALUES:
            raise ValueError(f"search_value must be one of {SEARCH_VALUES}, got {search_value!r}")
        steps = 0 if value_target == "search" else bootstrap_steps
        read = self.root_values if search_value == "mean" else self.best_q
        depth = self.start_depth if depth_bound else None
        best = value_target == "bootstrap-max"
        return [bootstrap_returns(v, s, steps, depth, best_of_steps=best) for v, s in zip(read, self.solved)]


def play_gumbel_episodes(
    model_or_evaluator: torch.nn.Module | Evaluator | None,
    start_cubes,
    num_simulations: int,
    max_episode_steps: int,
    rng: np.random.Generator | None = None,
    *,
    max_considered: int = 16,
    gumbel_scale: float = 0.0,
    step_reward: float | None = None,
    device=None,
    use_cache: bool = True,
    search: GumbelMCTS | None = None,
    game: str | Game | None = None,
) -> GumbelEpisodeResults:
    """Play one episode from each of ``start_cubes`` (E positions, e.g. ``(E, 24)`` cubes, or a
    state batch) in lockstep (``Self_Play.play_lockstep``), each move being the Sequential
    Halving winner of a Gumbel search from the current state (with the episode's history).
    ``gumbel_scale``: 0 (default, greedy evaluation) plays deterministically; 1 samples the
    move as the paper's self-play does. Per searched state: the state, the policy target, the
    root value and the best root move's Q. A cube solved at the start counts as solved in 0
    moves. ``search`` reuses a ``GumbelMCTS`` (its game and evaluation cache) and then
    overrides the other search settings.
    """
    rng = np.random.default_rng() if rng is None else rng
    if search is None:
        model, evaluator = (
            (model_or_evaluator, None)
            if isinstance(model_or_evaluator, torch.nn.Module)
            else (None, model_or_evaluator)
        )
        search = GumbelMCTS(
            model,
            num_simulations,
            max_considered,
            gumbel_scale,
            step_reward=step_reward,
            device=device,
            evaluator=evaluator,
            use_cache=use_cache,
            game=game,
        )

    def choose(states: dict):
        out = search.run_batch(states, rng=rng)
        return out.action, out.policy, {"root_values": out.value, "best_q": out.best_q()}

    extras = ("root_values", "best_q")
    return play_lockstep(search, start_cubes, max_episode_steps, choose, GumbelEpisodeResults, extras)


def gumbel_self_play(
    model: torch.nn.Module,
    num_episodes: int,
    max_episode_steps: int,
    num_simulations: int,
    scramble_len: int,
    rng: np.random.Generator,
    *,
    gumbel_scale: float = 1.0,
    max_considered: int = 16,
    device=None,
    game: str | Game | None = None,
) -> GumbelEpisodeResults:
    """``main.py --search gumbel``'s self-play: ``num_episodes`` episodes from random scrambles of
    ``scramble_len`` moves (drawn from ``rng``) of ``game`` (a puzzle; default the 2x2), each move the
    Sequential Halving winner under Gumbel noise of ``gumbel_scale`` (1: the paper's self-play, a sample
    of the improved policy), ``model`` in eval mode meanwhile. The policy targets are the completed-Q
    policies."""
    with eval_mode(model):
        start_cubes, _ = get_game(game).scramble(rng, num_episodes, scramble_len)
        results = play_gumbel_episodes(
            model,
            start_cubes,
            num_simulations,
            max_episode_steps,
            rng,
            max_considered=max_considered,
            gumbel_scale=gumbel_scale,
            device=device,
            game=game,
        )
    results.start_depth = scramble_len
    return results

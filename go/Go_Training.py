"""Go self-play and training as library functions (the seed's AlphaZero loop; ``main.py --game go5`` drives it).

One iteration (``train_iteration``): ``games`` self-play games in lockstep (``Self_Play.play_lockstep``),
each move a PUCT search (``MCTS_Core.MCTS``) of ``simulations`` simulations with Dirichlet noise mixed into
the root's priors (``(1 - noise) P + noise Dir(alpha)`` over the legal moves), the move drawn from the visit
counts at temperature 1 for the first ``opening_moves`` moves of a game and the most visited move after
that (with ``sampled_side``, in that share of the games one colour draws every move from its counts, at
``sampled_temperature``, with probability ``sampled_epsilon`` plays a uniformly random move instead, and
searches ``sampled_simulations`` at ``sampled_c_puct`` where they are set);
every searched state becomes a sample (evaluator row, visit-count policy, outcome +-1 for its player to
move: ``Self_Play.OUTCOME_TARGET``). The games go into a ``GameBuffer`` (a replay buffer of whole games)
that keeps the last ``buffer_fraction`` of all games played (at least ``buffer_min_games``); then
``train_steps`` steps of SGD (momentum 0.9; batches of ``batch_size`` drawn uniformly from the buffer,
each sample under one of the board's 8 symmetries drawn at random with ``augment``) on value MSE + policy cross-entropy
(``Train_Network.alphazero_loss``'s two terms, unweighted as the seed's), the learning rate dropping by
10 at each of ``lr_milestones`` (counted in steps since the start).

``GoRecipe``'s defaults are the seed's (SPEC section 10): 5x5, c_puct 0.3, noise 0.25 of Dir(0.3), 30
simulations, 10 games an iteration, the last 12.5% of all games, temperature 1 for 15% of an expected
game of 0.6 N^2 moves, 50 steps of batch 32 an iteration at 1e-2, 1e-3 after 400 steps, 1e-4 after 600;
the network of ``Go_Net``. The seed's quirks (no komi, only empty points as area, ko by one-stone capture,
ties as losses) are not copied: the rules are ``Go_Board``'s (docs/go.md, "Rules").

Each game of an iteration draws from its own generator, seeded from the run's (``game_seeds``), and every
network call has the same number of rows (``ChunkedEvaluator``), so a game does not depend on the games
beside it: ``--workers N`` (``Workers.WorkerPool.go_self_play``, local processes or Ray) splits the games
and trains the same weights as one process. ``search="gumbel"`` plays Gumbel AlphaZero's self-play instead
of PUCT (``gumbel_chooser``).

Beyond the seed (issue 48, KataGo's): ``komi_input`` with ``komi_spread`` draws each game's komi around the
board's fair komi and shows it to the network; ``score_heads`` trains score and ownership heads on each
game's final margin and owners (``score_samples``, ``score_losses``) and ``score_utility`` mixes the
expected margin into the search's value; ``full_search_share`` below 1 is playout cap randomization (the
other moves searched with ``fast_simulations``, no noise, kept out of the buffer).
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import asdict, dataclass

import numpy as np
import torch

from Action_MCTS import pick_actions_batch
from engine.Games import register_game
from engine.Gumbel_MCTS import GumbelMCTS
from engine.Precision import autocast, eval_mode
from go.Arena import agent_player, run_match
from go.Go_Board import FAIR_KOMI
from go.Go_Game import DEFAULT_HISTORY, GoGame, go_game
from go.Go_Net import BLOCKS, FILTERS, GoNet, belief_targets
from MCTS_Core import MCTS, NetworkEvaluator, RootNoise
from Self_Play import (
    OUTCOME_TARGET,
    RECORDED,
    SIMULATIONS,
    EpisodeResults,
    play_lockstep,
    take_rows,
    visits_to_policy,
)
from Train_Network import alphazero_loss


@dataclass(frozen=True)
class GoRecipe:
    """Every setting of Go self-play and training; the defaults are the seed's (module docstring)."""

    size: int = 5
    komi: float | None = None  # None: Go_Board's default for the size (24.5 on 5x5)
    max_moves: int | None = None  # None: 2 N^2 actions
    history: int = DEFAULT_HISTORY
    filters: int = FILTERS
    blocks: int = BLOCKS
    simulations: int = 30
    c_puct: float = 0.3
    dirichlet_alpha: float = 0.3
    noise_fraction: float = 0.25
    opening_moves: int | None = None  # None: 15% of 0.6 N^2 moves, rounded
    games: int = 10  # self-play games an iteration, played in lockstep
    buffer_fraction: float = 0.125
    buffer_min_games: int = 10
    train_steps: int = 50
    batch_size: int = 32
    lr: float = 1e-2
    lr_milestones: tuple[int, ...] = (400, 600)
    # Shares of the run's --time-budget at which the learning rate drops by 10 instead (a run's iterations
    # a second depend on the machine and on how long its games last, so step milestones land anywhere)
    lr_drops: tuple[float, ...] = ()
    momentum: float = 0.9
    augment: bool = False  # a random board symmetry per training sample
    # The share of PUCT self-play games in which one colour, drawn at random, draws every move from its
    # visit counts (a fallible opponent: the other colour learns which positions make it err; 0: the seed's)
    sampled_side: float = 0.0
    # How the sampled colour errs: its visit counts drawn at this temperature, and with this probability a
    # move drawn uniformly from its legal moves other than pass instead (1.0 and 0: the plain draw)
    sampled_temperature: float = 1.0
    sampled_epsilon: float = 0.0
    # The sampled colour's own search (0: ``simulations``, ``c_puct``): a weaker one errs the way a weak
    # player does (docs/design_notes.md, "the sampled colour's search"); with ``sampled_temperature`` 0 it
    # plays its most visited move, as the other colour does
    sampled_simulations: int = 0
    sampled_c_puct: float = 0.0
    # Above 0: a training sample whose value the network puts below -hopeless for its player to move trains
    # the value only, not the policy (as KataGo's soft resignation; why: docs/design_notes.md, "hopeless")
    hopeless: float = 0.0
    # Playout cap randomization (KataGo): this share of the other colour's moves is searched with
    # ``simulations`` and root noise and becomes a training sample; the rest is searched with
    # ``fast_simulations``, no noise, and trains nothing (1: every move a full search and a sample, the seed's)
    full_search_share: float = 1.0
    fast_simulations: int = 0
    # Komi as the network's input, and each self-play game's komi drawn around the board's fair komi
    # (Go_Board.FAIR_KOMI, a normal of this spread rounded to a half point; a tenth of the games four times
    # as wide, as KataGo), so that one network plays every komi (0: every game at --komi)
    komi_input: bool = False
    komi_spread: float = 0.0
    # Score and ownership heads trained on each game's final area margin and owners (KataGo's auxiliary
    # targets; loss weights below), and the score term's share in the search's utility (Go_Game)
    score_heads: bool = False
    score_weight: float = 0.1
    ownership_weight: float = 1.0
    score_utility: float = 0.0
    # A score belief head (a distribution over the final board margin, with --komi-input and --score-heads)
    # from which the search reads its win value given the komi exactly (Go_Net.belief_value), trained by
    # cross-entropy with this weight
    score_belief: bool = False
    belief_weight: float = 1.0
    search: str = "puct"  # self-play's search: Search_Tree.SEARCHES
    # The network's matrix products in self-play and training (Precision.PRECISIONS): bf16 (autocast) plays a go9
    # move 1.35x as fast where the CPU multiplies it natively (docs/go.md, "bfloat16"); auto picks it there and
    # fp32 elsewhere, resolved again by each session of a run
    precision: str = "fp32"
    gate_games: int = 30  # the seed's arena after each iteration's training (0: none; ``gate``)
    gate_threshold: float = 0.55  # the trained network is kept if it scores more than this share

    def game(self) -> GoGame:
        return go_game(self.size, self.komi, self.max_moves, self.history, self.komi_input, self.score_utility)

    def opening(self) -> int:
        """Moves played at temperature 1 before greedy play."""
        return round(0.15 * 0.6 * self.size**2) if self.opening_moves is None else self.opening_moves

    def network(self) -> GoNet:
        planes = self.game().obs_shape[0]
        return GoNet(
            self.size, planes, self.filters, self.blocks, self.score_heads, self.score_utility, self.score_belief
        )


#: The state batch's key of each game's index in a ``play_games`` call (the rules ignore keys they do not
#: know), so that a chooser knows which games' generators draw for the games still on.
GAME_INDEX = "game_index"


#: States per network call in self-play: every call has exactly this many rows (``ChunkedEvaluator``).
EVAL_CHUNK = 16


class ChunkedEvaluator(NetworkEvaluator):
    """A ``NetworkEvaluator`` whose network calls all have ``EVAL_CHUNK`` rows (the last chunk padded with
    copies of its first row). CPU kernels round differently at different batch sizes (up to 1e-6 here),
    and a game's searches would then depend on which other games share its calls; at one fixed size a row
    comes out the same wherever it sits, so a game is the same whichever worker plays it."""

    def forward(self, inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pad = -len(inputs) % EVAL_CHUNK
        padded = np.concatenate([inputs, np.repeat(inputs[:1], pad, axis=0)])
        forward = super().forward  # (a comprehension has no zero-argument super)
        parts = [forward(padded[i : i + EVAL_CHUNK]) for i in range(0, len(padded), EVAL_CHUNK)]
        self.network_states -= pad  # the states asked for, not the padding
        return tuple(np.concatenate(part)[: len(inputs)] for part in zip(*parts))


def dirichlet_noise(alpha: float, fraction: float, root_rngs: list[np.random.Generator]) -> RootNoise:
    """The search's root noise of self-play: ``(1 - fraction) P + fraction Dir(alpha)`` over each root's legal
    moves, root ``b`` drawing from ``root_rngs[b]`` (each game's own generator, so a game's noise does not
    depend on which other games share its search)."""

    def draw(legal: np.ndarray) -> np.ndarray:
        if len(root_rngs) != len(legal):
            raise ValueError(f"root_rngs holds {len(root_rngs)} generators for {len(legal)} roots")
        return np.concatenate([dirichlet_over(legal[b : b + 1], alpha, rng) for b, rng in enumerate(root_rngs)])

    return RootNoise(fraction, draw)


def dirichlet_over(legal: np.ndarray, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """``(k, A)`` float64: per row a Dir(alpha) draw over the row's legal moves, 0 elsewhere."""
    draws = np.where(legal, rng.gamma(alpha, size=legal.shape), 0.0)
    total = draws.sum(axis=1, keepdims=True)
    return np.divide(draws, total, out=np.zeros_like(draws), where=total > 0)


def sampled_colours(rngs: list[np.random.Generator], share: float) -> np.ndarray:
    """``(games,)`` int8: per game the colour that draws every move from its visit counts (``sampled_side``):
    Black (1) or White (-1) each with probability ``share / 2``, else 0 (none). Each game draws from its own
    generator, and none draws at all when ``share`` is 0 (the games stay those of runs before the flag)."""
    if share <= 0:
        return np.zeros(len(rngs), np.int8)
    draws = np.array([rng.random() for rng in rngs])
    return np.where(draws < share / 2, 1, np.where(draws < share, -1, 0)).astype(np.int8)


def fallible_move(legal: np.ndarray, rng: np.random.Generator) -> int:
    """The sampled colour's error (``sampled_epsilon``): a move drawn uniformly from the legal moves other
    than pass (the last action), pass only when nothing else is legal."""
    points = np.flatnonzero(legal[:-1])
    return int(rng.choice(points)) if len(points) else len(legal) - 1


def sampled_side_search(recipe: GoRecipe) -> tuple[int, float] | None:
    """``(simulations, c_puct)`` of the sampled colour's own search, or None when it searches as the other."""
    own = (recipe.sampled_simulations or recipe.simulations, recipe.sampled_c_puct or recipe.c_puct)
    return None if recipe.sampled_side == 0 or own == (recipe.simulations, recipe.c_puct) else own


def puct_chooser(model, recipe: GoRecipe, game: GoGame, rngs: list[np.random.Generator]):
    """``(search, choose)`` of PUCT self-play with root noise: the move drawn from the visit counts (each
    game's own generator) for the opening moves, the most visited after; policy target the visit counts.
    The sampled colour (``sampled_side``) searches with its own settings where they differ."""
    # one cache for both searches: the weights are fixed
    evaluator = ChunkedEvaluator(model, game=game, precision=recipe.precision)

    def new_search(simulations: int, c_puct: float) -> MCTS:
        return MCTS(model, c_puct=c_puct, num_simulations=simulations, evaluator=evaluator, game=game)

    def noise(games: np.ndarray) -> RootNoise:
        return dirichlet_noise(recipe.dirichlet_alpha, recipe.noise_fraction, [rngs[g] for g in games])

    search = new_search(recipe.simulations, recipe.c_puct)
    own = sampled_side_search(recipe)
    sampled_search = search if own is None else new_search(*own)
    opening = recipe.opening()
    sampled_colour = sampled_colours(rngs, recipe.sampled_side)
    draws_all = recipe.sampled_temperature > 0  # 0: the sampled colour picks its moves as the other does

    def visits_of(states: dict, masks: np.ndarray, games: np.ndarray, fallible: np.ndarray) -> np.ndarray:
        """Each root's visit counts, the sampled colour's from its own search (each game's noise is drawn
        from its own generator, so the split changes no game)."""
        if sampled_search is search:
            return search.run_batch(states, masks, root_noise=noise(games))
        visits = np.zeros(masks.shape, np.float32)
        for chosen, rows in ((search, np.flatnonzero(~fallible)), (sampled_search, np.flatnonzero(fallible))):
            if len(rows):
                visits[rows] = chosen.run_batch(take_rows(states, rows), masks[rows], root_noise=noise(games[rows]))
        return visits

    fast_search = new_search(recipe.fast_simulations, recipe.c_puct) if recipe.full_search_share < 1 else None

    def choose(states: dict):
        masks, games = game.legal_mask(states), states[GAME_INDEX]
        fallible = states["to_play"] == sampled_colour[games]
        fast = fast_moves(fallible, games)
        if fast.any():  # KataGo's cheap searches: no noise, no sample
            visits, full = np.zeros(masks.shape, np.float64), ~fast
            if full.any():
                visits[full] = visits_of(take_rows(states, full), masks[full], games[full], fallible[full])
            visits[fast] = fast_search.run_batch(take_rows(states, fast), masks[fast])
        else:
            visits = visits_of(states, masks, games, fallible)
        modes = np.where((fallible & draws_all) | (states["move_count"] < opening), "sample", "greedy")
        actions = [
            fallible_move(masks[b], rngs[g])
            if fallible[b] and recipe.sampled_epsilon > 0 and rngs[g].random() < recipe.sampled_epsilon
            else pick_actions_batch(
                visits[b : b + 1],
                modes[b],
                recipe.sampled_temperature if fallible[b] and draws_all else 1.0,
                rngs[g],
                masks[b : b + 1],
            )[0]
            for b, g in enumerate(games)
        ]
        simulations = np.where(fallible, sampled_search.num_simulations, search.num_simulations)
        simulations = np.where(fast, recipe.fast_simulations, simulations)
        return np.array(actions), visits_to_policy(visits), {SIMULATIONS: simulations, RECORDED: ~fast}

    def fast_moves(fallible: np.ndarray, games: np.ndarray) -> np.ndarray:
        """Which states get the cheap search: none at a full share (no draw: the seed's games unchanged);
        else the other colour's, each with probability ``1 - full_search_share`` from its game's generator."""
        if fast_search is None:
            return np.zeros(len(games), dtype=bool)
        return np.array([not f and rngs[g].random() >= recipe.full_search_share for f, g in zip(fallible, games)])

    return search, choose


def gumbel_chooser(model, recipe: GoRecipe, game: GoGame, rngs: list[np.random.Generator]):
    """``(search, choose)`` of Gumbel self-play (``Gumbel_MCTS``, the paper's: Gumbel noise of scale 1 on
    every root, each game's from its own generator): the move is the Sequential Halving winner, the policy
    target the completed-Q improved policy. No Dirichlet noise and no opening temperature: the Gumbel
    draw is the exploration."""
    evaluator = ChunkedEvaluator(model, game=game, precision=recipe.precision)
    search = GumbelMCTS(model, recipe.simulations, evaluator=evaluator, game=game)

    def choose(states: dict):
        gumbel = np.stack([rngs[g].gumbel(size=game.num_actions) for g in states[GAME_INDEX]])
        out = search.run_batch(states, rng=None, gumbel=gumbel)
        return out.action, out.policy, {}

    return search, choose


#: The share of self-play games whose komi is drawn with four times ``komi_spread`` (KataGo's wide draws).
WIDE_KOMI_SHARE = 0.1


def draw_komi(recipe: GoRecipe, rng: np.random.Generator) -> float:
    """One self-play game's komi: the board's fair komi plus a normal of ``komi_spread`` (in a tenth of
    the games four times that), rounded to a half point, so that no game is a draw."""
    fair = FAIR_KOMI.get(recipe.size, recipe.game().komi)
    spread = recipe.komi_spread * (4 if rng.random() < WIDE_KOMI_SHARE else 1)
    return math.floor(fair + spread * rng.standard_normal()) + 0.5


def game_seeds(rng: np.random.Generator, games: int) -> np.ndarray:
    """``(games,)`` int64: one seed per game of an iteration, drawn from the run's generator."""
    return rng.integers(0, 2**63 - 1, size=games, dtype=np.int64)


def play_games(model: torch.nn.Module, recipe: GoRecipe, seeds) -> EpisodeResults:
    """One self-play game from the empty board per seed, all in lockstep: the ``EpisodeResults``
    (evaluator rows, policy targets, moves, final values). Game ``g`` draws only from
    ``default_rng(seeds[g])``, so a game is the same whichever other games share the call (``--workers``
    splits the seeds)."""
    game = recipe.game()
    register_game(game)  # the results name their game; targets and datasets look it up by that name
    rngs = [np.random.default_rng(int(seed)) for seed in seeds]
    chooser = gumbel_chooser if recipe.search == "gumbel" else puct_chooser
    search, choose = chooser(model, recipe, game, rngs)
    starts = game.initial_state(len(rngs))
    starts[GAME_INDEX] = np.arange(len(rngs))
    if recipe.komi_spread > 0:  # drawn first, from each game's own generator
        starts["komi"] = np.array([draw_komi(recipe, rng) for rng in rngs], dtype=np.float32)
    with eval_mode(model):
        extras = (RECORDED,) if chooser is puct_chooser else ()  # (Gumbel self-play records every move)
        return play_lockstep(search, starts, game.rules.max_moves, choose, extra_fields=extras)


def self_play(model: torch.nn.Module, recipe: GoRecipe, rng: np.random.Generator, games: int | None = None, pool=None):
    """``games`` (default ``recipe.games``) self-play games (``play_games``), their seeds drawn from ``rng``;
    with ``pool`` (a ``Workers.WorkerPool``) the games are split over its workers, with the same results."""
    seeds = game_seeds(rng, recipe.games if games is None else games)
    if pool is None:
        return play_games(model, recipe, seeds)
    register_game(recipe.game())
    return pool.go_self_play(model, recipe, seeds)


class GameBuffer:
    """The samples of the last games: ``(rows, policies, values)`` per game, with ``score_targets`` also
    each state's final margin and owners (``score_targets``); it keeps the last ``max(min_games,
    ceil(fraction * games added so far))`` games."""

    def __init__(self, fraction: float, min_games: int, score_targets: bool = False):
        self.fraction, self.min_games, self.score_targets = fraction, min_games, score_targets
        self.games: list[tuple[np.ndarray, ...]] = []
        self.games_added = 0

    def add(self, results: EpisodeResults, game: GoGame | None = None) -> None:
        """Every searched state of ``results``'s games (of ``game``), with its outcome target."""
        if self.score_targets:
            games = score_samples(results, game)
        else:
            games = list(zip(results.states, results.policies, results.state_values(OUTCOME_TARGET)))
        recorded = getattr(results, RECORDED, None)  # playout cap randomization: the full searches only
        if recorded is not None:
            games = [tuple(part[kept > 0] for part in parts) for parts, kept in zip(games, recorded)]
        self.games += games  # (a game may keep no sample: its count still rules the window)
        self.games_added += len(results.states)
        keep = max(self.min_games, math.ceil(self.fraction * self.games_added))
        del self.games[:-keep]

    def __len__(self) -> int:
        return sum(len(parts[2]) for parts in self.games)

    def arrays(self) -> tuple[np.ndarray, ...]:
        """All samples: ``rows (n, ...)``, ``policies (n, A)``, ``values (n,)`` (and with score targets
        ``margins (n,)``, ``owners (n, N*N)``)."""
        return tuple(np.concatenate(part) for part in zip(*self.games))


def score_samples(results: EpisodeResults, game: GoGame) -> list[tuple[np.ndarray, ...]]:
    """Per game ``(rows, policies, values, margins, owners)``: each searched state's targets from its
    player to move's side: the outcome (+1, -1, 0 by the final area score), the final area margin after
    komi (float32) and each point's final owner (int8: 1 the player's, -1 the opponent's, 0 neither)."""
    black_margins, black_owners = game.final_targets(results.final_inputs)
    out = []
    for rows, pis, margin, owner in zip(results.states, results.policies, black_margins, black_owners):
        side = rows[:, -1].astype(np.float32)  # the player to move: 1 Black, -1 White
        margins = (margin * side).astype(np.float32)
        out.append((rows, pis, np.sign(margins), margins, (owner[None, :] * side[:, None]).astype(np.int8)))
    return out


def sample_batch(game: GoGame, data, size: int, rng: np.random.Generator, augment: bool) -> list[torch.Tensor]:
    """``[obs, pis, zs]`` (and with score targets ``margins``, ``owners``) float32 tensors of ``size``
    samples drawn uniformly from ``data`` (``arrays()``); with ``augment`` each under one of the 8 board
    symmetries drawn at random (owners mapped as the board)."""
    rows, pis, zs, *score = data
    pick = rng.integers(len(zs), size=size)
    rows, pis = rows[pick], pis[pick]
    score = [part[pick] for part in score]
    if augment:
        pairs = game.symmetries(rows, pis)
        which = rng.integers(len(pairs), size=size)
        rows = np.stack([r for r, _ in pairs])[which, np.arange(size)]
        pis = np.stack([p for _, p in pairs])[which, np.arange(size)]
        if score:
            score[1] = np.take_along_axis(score[1], game.rules.symmetry_maps[which], axis=1)
    tensors = [game.encode(rows), np.asarray(pis, np.float32), zs[pick], *score]
    return [torch.from_numpy(np.asarray(t, dtype=np.float32)) for t in tensors]


def lr_at(recipe: GoRecipe, share_of_budget: float) -> float:
    """The learning rate of ``lr_drops`` once ``share_of_budget`` of the time budget is spent: ``lr``
    divided by 10 at each drop passed."""
    return recipe.lr * 0.1 ** sum(share_of_budget >= drop for drop in recipe.lr_drops)


def make_optimizer(model: torch.nn.Module, recipe: GoRecipe):
    """SGD with momentum and the learning rate divided by 10 at each milestone step."""
    optimizer = torch.optim.SGD(model.parameters(), lr=recipe.lr, momentum=recipe.momentum)
    return optimizer, torch.optim.lr_scheduler.MultiStepLR(optimizer, list(recipe.lr_milestones), 0.1)


def train_steps(model, optimizer, scheduler, buffer: GameBuffer, recipe: GoRecipe, rng) -> dict[str, float]:
    """``recipe.train_steps`` SGD steps on batches from ``buffer``; the mean losses."""
    game, data = recipe.game(), buffer.arrays()
    device = next(model.parameters()).device
    sums, hopeless = np.zeros(7), 0
    model.train()
    for _ in range(recipe.train_steps):
        obs, pis, zs, *score = (t.to(device) for t in sample_batch(game, data, recipe.batch_size, rng, recipe.augment))
        with autocast(recipe.precision, device):
            out = model.heads(obs) if recipe.score_heads else dict(zip(("logits", "value"), model(obs)))
        out = {name: part.float() for name, part in out.items()}  # the losses in float32 (a no-op at fp32)
        weights = hopeless_weights(out["value"], recipe.hopeless)
        _, policy_loss, value_loss = alphazero_loss(out["logits"], out["value"], pis, zs, sample_weights=weights)
        hopeless += 0 if weights is None else int((weights[:, 0] == 0).sum())
        loss = value_loss + policy_loss  # the seed's loss: the two terms unweighted
        terms = score_losses(out, obs, *score, recipe) if recipe.score_heads else dict.fromkeys(SCORE_TERMS, 0.0)
        loss = loss + recipe.score_weight * terms["score_loss"] + recipe.ownership_weight * terms["ownership_loss"]
        loss = loss + recipe.belief_weight * terms["belief_loss"]
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        extra = [float(torch.as_tensor(terms[name]).detach()) for name in SCORE_TERMS]
        sums += [loss.item(), policy_loss.item(), value_loss.item(), *extra]
    model.eval()
    loss, policy, value, score_loss, owner_loss, score_error, belief = (sums / max(1, recipe.train_steps)).tolist()
    metrics = {"loss": loss, "policy_loss": policy, "value_loss": value}
    if recipe.score_heads:
        metrics.update(score_loss=score_loss, ownership_loss=owner_loss, score_error=score_error)
    if recipe.score_belief:
        metrics["belief_loss"] = belief
    if recipe.hopeless > 0:
        metrics["hopeless_share"] = hopeless / max(1, recipe.train_steps * recipe.batch_size)
    return metrics


#: ``score_losses``' terms, in the order ``train_steps`` sums them.
SCORE_TERMS = ("score_loss", "ownership_loss", "score_error", "belief_loss")


def score_losses(
    out: dict, obs: torch.Tensor, margins: torch.Tensor, owners: torch.Tensor, recipe: GoRecipe
) -> dict[str, torch.Tensor | float]:
    """``SCORE_TERMS`` by name: the score head's Huber loss on the final margin (in units of the board's
    side, as it predicts), the ownership head's cross-entropy on each point's final owner (mean over points;
    its tanh output read as ``P(own) = (1 + o) / 2``, a point owned by neither as 1/2), the score head's
    mean absolute error in points (reported, not trained), and the score belief's cross-entropy on the
    board margin (0 without one; ``Go_Net.belief_targets`` reads each sample's komi from its input ``obs``)."""
    size = recipe.size
    score = out["score"].reshape(-1)
    score_loss = torch.nn.functional.smooth_l1_loss(score, margins / size)
    owned = ((out["ownership"] + 1) / 2).clamp(1e-6, 1 - 1e-6)
    owner_loss = torch.nn.functional.binary_cross_entropy(owned, (owners + 1) / 2)
    belief = 0.0
    if "belief" in out:
        belief = torch.nn.functional.cross_entropy(out["belief"], belief_targets(obs, margins, size))
    error = (score.detach() * size - margins).abs().mean()
    return dict(zip(SCORE_TERMS, (score_loss, owner_loss, error, belief)))


def hopeless_weights(values: torch.Tensor, hopeless: float) -> torch.Tensor | None:
    """``(B, 2)`` loss weights (policy, value): the policy's 0 where the network values the position below
    ``-hopeless`` for its player to move; None (the plain loss) when ``hopeless`` is 0."""
    if hopeless <= 0:
        return None
    policy = (values.detach().reshape(-1) >= -hopeless).float()
    return torch.stack([policy, torch.ones_like(policy)], 1)


def gate(model: torch.nn.Module, kept: dict, recipe: GoRecipe, rng: np.random.Generator) -> float:
    """The seed's arena: ``recipe.gate_games`` games, colours alternating, of ``model`` against the network
    of the weights ``kept``; both PUCT at ``recipe.simulations`` without noise, the first ``opening()``
    moves of a game drawn from the visit counts (each player from its own generator, seeded from ``rng``),
    the most visited after. The score of ``model``: (wins + draws / 2) / games."""
    previous = recipe.network().to(next(model.parameters()).device)
    previous.load_state_dict(kept)
    seeds = rng.integers(0, 2**63 - 1, size=2)
    players = [
        agent_player(net, recipe.simulations, recipe.c_puct, name=name, sample_moves=recipe.opening(),
                     rng=np.random.default_rng(int(seed)))
        for net, name, seed in ((model, "trained", seeds[0]), (previous, "kept", seeds[1]))
    ]  # fmt: skip
    with eval_mode(model), eval_mode(previous):
        return run_match(recipe.game(), *players, recipe.gate_games).summary()["win_rate"]


def train_iteration(
    model, optimizer, scheduler, buffer: GameBuffer, recipe: GoRecipe, rng, pool=None
) -> dict[str, float]:
    """One iteration: self-play games into ``buffer`` (split over ``pool``'s workers if given), training,
    and with ``recipe.gate_games`` the seed's arena (``gate``): the trained network is kept if it scores
    more than ``gate_threshold`` against the one before, else the weights before training come back.
    Returns its metrics (losses, games, samples, mean game length, Black's win rate, seconds of each
    part; ``gate_score`` and ``gate_kept`` with the arena)."""
    start = time.perf_counter()
    results = self_play(model, recipe, rng, pool=pool)
    played = time.perf_counter()
    buffer.add(results, recipe.game())
    white_to_move_at_end = results.lengths % 2 == 1  # Black moved first
    black_value = np.where(white_to_move_at_end, -results.final_values, results.final_values)
    kept = copy.deepcopy(model.state_dict()) if recipe.gate_games else None
    metrics = train_steps(model, optimizer, scheduler, buffer, recipe, rng)
    if kept is not None:
        score = gate(model, kept, recipe, rng)
        if score <= recipe.gate_threshold:
            model.load_state_dict(kept)
        metrics.update(gate_score=score, gate_kept=float(score > recipe.gate_threshold))
    metrics.update(
        games=len(results.states),
        samples=int(results.lengths.sum()),
        buffer_samples=len(buffer),
        mean_length=float(results.lengths.mean()),
        black_wins=float((black_value > 0).mean()),
        self_play_seconds=played - start,
        train_seconds=time.perf_counter() - played,
    )
    return metrics


def recipe_table(recipe: GoRecipe) -> dict:
    """The recipe as plain values (for a run's logs)."""
    table = asdict(recipe)
    table["lr_milestones"] = list(recipe.lr_milestones)
    table["lr_drops"] = list(recipe.lr_drops)
    return table

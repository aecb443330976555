"""Self-play: episodes of MCTS-guided play, all episodes of a call advanced together.

Each episode (as in the original): start from a scrambled cube; for up to ``max_episode_steps``
moves run MCTS from the current cube, record ``(observation, pi = visits / sum)`` (uniform
when the sum is 0), pick a move (``"greedy"``: argmax; ``"sample"``: ``p ∝ N^(1/T)``) and
play it; stop when solved. Every state of an episode gets the same target value: solved in
n moves -> ``max(0.4, 1 - 0.03 n)``, unsolved -> -1.

The episodes of one call share one batched search per move (``MCTS.run_batch``) and one
evaluation cache (the weights do not change during a call), which is where the speed comes
from: consecutive moves of an episode revisit most of the previous tree's states.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import torch
from tqdm.auto import tqdm

from Action_MCTS import pick_action_from_mcts, pick_actions_batch
from engine.Games import DEFAULT_GAME, Game, get_game
from engine.Precision import eval_mode
from engine.Search_Tree import take_rows
from engine.Value_Scale import solved_value
from MCTS_Core import MCTS, Evaluator

UNSOLVED_VALUE = -1.0
#: The original passes temperature 0.3 to its greedy evaluation episodes; greedy play ignores it.
EVAL_TEMPERATURE = 0.3
VALUE_TARGETS = ("episode", "remaining")
#: A game's value target: each state gets the final state's terminal value, times the discount
#: once per move between them (two players: the sign of the player to move).
OUTCOME_TARGET = "outcome"

#: ``choose(states) -> (actions (A,), policy targets (A, num_actions), extras {name: (A,)})``: one
#: search over the A active episodes' states (a state batch). The extras are per-state numbers;
#: ``play_lockstep`` keeps those named in its ``extra_fields`` (float32 arrays under those names). An
#: extra named ``SIMULATIONS`` gives each state's simulations, where they differ from the search's own.
SIMULATIONS = "simulations"
#: An extra named ``RECORDED`` (1 or 0) says which searched states become training samples (Go's playout cap
#: randomization searches the others cheaply and keeps nothing of them).
RECORDED = "recorded"
Chooser = Callable[[dict], tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]]


@dataclass
class EpisodeResults:
    """What a batch of episodes produced. Per-episode arrays have length E. States are the
    game's evaluator inputs (``game.eval_input``; the cube's: ``(24,)`` int8 stickers)."""

    start_cubes: np.ndarray  # [E, ...] the start states' evaluator inputs (cubes: [E, 24] int8)
    actions: list[list[int]]  # moves played, per episode
    solved: np.ndarray  # [E] bool: the episode reached a terminal state (a cube: solved)
    states: list[np.ndarray] = field(default_factory=list)  # per episode: [n_e, ...] the states searched
    policies: list[np.ndarray] = field(default_factory=list)  # per episode: [n_e, A] float32 pi targets
    simulations: int = 0  # MCTS simulations run in total (every move's search counted)
    seconds: float = 0.0
    network_states: int = 0  # states the network evaluated (after the cache)
    game: str = DEFAULT_GAME  # the registry name of the game played
    final_values: np.ndarray | None = None  # [E] float64 terminal value of each ended episode's last state, else 0
    final_inputs: np.ndarray | None = None  # [E, ...] the evaluator input of each episode's last state

    @property
    def lengths(self) -> np.ndarray:
        return np.array([len(a) for a in self.actions])

    @property
    def solve_rate(self) -> float:
        return float(self.solved.mean()) if len(self.solved) else 0.0

    def values(self) -> np.ndarray:
        """``[E]`` target value z of each episode."""
        return np.array([solved_value(len(a)) if s else UNSOLVED_VALUE for a, s in zip(self.actions, self.solved)])

    def state_values(self, value_target: str = "episode") -> list[np.ndarray]:
        """Per episode, the target value of each searched state.

        ``"episode"`` (the original): every state of an episode solved in n moves gets
        ``max(0.4, 1 - 0.03 n)``. ``"remaining"`` (beyond the original): the state t moves into
        that episode gets ``max(0.4, 1 - 0.03 (n - t))``, the moves still needed from it, so
        the value can tell a state close to solved from one far away. Unsolved: -1 either way.
        """
        if value_target == OUTCOME_TARGET:
            return self.outcome_values()
        if value_target not in VALUE_TARGETS:
            raise ValueError(f"value_target must be one of {VALUE_TARGETS}, got {value_target!r}")
        out = []
        for actions, solved, z in zip(self.actions, self.solved, self.values()):
            n = len(actions)
            if solved and value_target == "remaining":
                out.append(solved_value(n - np.arange(n)).astype(np.float32))
            else:
                out.append(np.full(n, z, dtype=np.float32))
        return out

    def outcome_values(self) -> list[np.ndarray]:
        """Per episode ``[n_e]`` float32: the state t moves in gets ``final_value * discount ** (n_e - t)``
        (its value for its player to move when the game ended as it did; 0 for unfinished episodes)."""
        discount = get_game(self.game).discount
        return [
            (final * discount ** (len(actions) - np.arange(len(actions)))).astype(np.float32)
            for actions, final in zip(self.actions, self.final_values)
        ]

    def dataset(self, value_target: str = "episode", **options) -> list[tuple[np.ndarray, np.ndarray, float]]:
        """The original's dataset: ``(observation (obs_shape), pi (A,), z)`` for every searched state,
        episode by episode (``options`` go to ``state_values``)."""
        data = []
        encode = get_game(self.game).encode
        for inputs, pis, zs in zip(self.states, self.policies, self.state_values(value_target, **options)):
            for obs, pi, z in zip(encode(inputs), pis, zs.tolist()):
                data.append((obs, pi, z))
        return data


def visits_to_policy(visits: np.ndarray) -> np.ndarray:
    """``pi = N / sum(N)`` per row, uniform where a row has no visits."""
    total = visits.sum(axis=1, keepdims=True)
    uniform = np.full_like(visits, 1.0 / visits.shape[1])
    return np.where(total > 0, visits / np.where(total > 0, total, 1.0), uniform).astype(np.float32)


def play_lockstep(
    search,
    starts,
    max_episode_steps: int,
    choose: Chooser,
    results: type[EpisodeResults] = EpisodeResults,
    extra_fields: tuple[str, ...] = (),
    progress: bool = False,
    desc: str = "self-play",
) -> EpisodeResults:
    """Play one episode from each of the E ``starts`` (a state batch of ``search.game``, or E
    positions for ``game.new_states``), all in lockstep: every move, ``choose`` searches the
    states of the episodes not ended yet and its actions are played, for up to
    ``max_episode_steps`` moves. An episode starting in a terminal state ends there with 0
    moves. ``search`` (an ``MCTS`` or a ``GumbelMCTS``) gives the game, the simulations per
    move and the evaluator whose network states are counted. Returns a ``results`` (an
    ``EpisodeResults`` class) with the searched states, policy targets, the moves, the counts,
    and per episode an array of each of ``choose``'s extras named in ``extra_fields``.
    """
    game, evaluator = search.game, search.evaluator
    start_state = starts if isinstance(starts, dict) else game.new_states(starts)
    state = {key: np.array(value) for key, value in start_state.items()}
    first = game.eval_input(state)
    n_episodes = len(first)
    out = results(first.copy(), [[] for _ in range(n_episodes)], game.is_terminal(state), game=game.name)
    states: list[list[np.ndarray]] = [[] for _ in range(n_episodes)]
    policies: list[list[np.ndarray]] = [[] for _ in range(n_episodes)]
    extras: dict[str, list[list[float]]] = {key: [[] for _ in range(n_episodes)] for key in extra_fields}
    start = time.perf_counter()
    net_before = getattr(evaluator, "network_states", 0)
    bar = tqdm(range(max_episode_steps), desc=desc, unit="move", leave=False, disable=not progress)
    for _ in bar:
        active = np.flatnonzero(~out.solved)  # [A]
        if len(active) == 0:
            break
        bar.set_postfix(active=len(active))
        now = take_rows(state, active)
        actions, pis, extra = choose(now)
        searched = extra.get(SIMULATIONS)
        out.simulations += len(active) * search.num_simulations if searched is None else int(np.sum(searched))
        inputs = game.eval_input(now)
        for j, e in enumerate(active.tolist()):
            states[e].append(inputs[j].copy())
            policies[e].append(pis[j])
            for key, lists in extras.items():
                lists[e].append(float(extra[key][j]))
            out.actions[e].append(int(actions[j]))
        after = game.step(now, actions)
        for key, value in after.items():
            state[key][active] = value
        out.solved[active] = game.is_terminal(after)
    bar.close()
    out.states = [np.array(s, dtype=first.dtype).reshape(-1, *first.shape[1:]) for s in states]
    out.policies = [np.array(p, dtype=np.float32).reshape(-1, game.num_actions) for p in policies]
    for key, lists in extras.items():
        setattr(out, key, [np.array(v, dtype=np.float32) for v in lists])
    ended = np.flatnonzero(out.solved)
    out.final_values = np.zeros(n_episodes)
    out.final_values[ended] = game.terminal_value(take_rows(state, ended))
    out.final_inputs = game.eval_input(state)
    out.seconds = time.perf_counter() - start
    out.network_states = getattr(evaluator, "network_states", 0) - net_before
    return out


def play_episodes(
    model: torch.nn.Module | None,
    start_cubes,
    max_episode_steps: int,
    num_simulations: int,
    select_mode: str = "greedy",
    temperature: float = 1.0,
    rng: np.random.Generator | None = None,
    device=None,
    c_puct: float | None = None,
    use_cache: bool = True,
    progress: bool = False,
    desc: str = "self-play",
    mcts: MCTS | None = None,
    game: str | Game | None = None,
) -> EpisodeResults:
    """Play one episode from each of ``start_cubes`` (B positions, e.g. ``(E, 24)`` cubes, or a
    state batch), all in lockstep (``play_lockstep``), each move picked from the visit counts
    of a PUCT search (``select_mode``, ``temperature``: ``pick_actions_batch``).

    The move mask follows the game's rules (the cube's: no inverse of the last move; no third
    turn of a face). A cube that is already solved at the start counts as solved in 0 moves.
    ``mcts`` may be given to reuse a search object (and its cache) across calls with the
    same weights (its game is then played); otherwise one is made here.
    """
    rng = np.random.default_rng() if rng is None else rng
    if mcts is None:
        mcts = MCTS(
            model, c_puct=c_puct, num_simulations=num_simulations, device=device, use_cache=use_cache, game=game
        )

    def choose(states: dict):
        masks = mcts.game.legal_mask(states)
        visits = mcts.run_batch(states, masks)
        return pick_actions_batch(visits, select_mode, temperature, rng, masks), visits_to_policy(visits), {}

    return play_lockstep(mcts, start_cubes, max_episode_steps, choose, progress=progress, desc=desc)


def play_greedy(
    model,
    start_cubes: np.ndarray,
    num_simulations: int,
    max_episode_steps: int,
    *,
    device,
    seed: int,
    c_puct: float | None = None,
    progress: bool = False,
    desc: str = "eval",
    mcts: MCTS | None = None,
    game: str | Game | None = None,
) -> EpisodeResults:
    """Greedy MCTS episodes from all ``start_cubes`` (E positions of ``game``, default the 2x2's
    ``(E, 24)`` cubes) in one lockstep batch, as ``evaluate.py`` plays them (``model`` in eval mode
    meanwhile; None: ``mcts`` searches, and its game is played)."""
    with eval_mode(model) if model is not None else contextlib.nullcontext():
        return play_episodes(
            model,
            start_cubes,
            max_episode_steps,
            num_simulations,
            select_mode="greedy",
            temperature=EVAL_TEMPERATURE,
            rng=np.random.default_rng(seed),
            device=device,
            c_puct=c_puct,
            progress=progress,
            desc=desc,
            mcts=mcts,
            game=game,
        )


def greedy_solve(
    model: torch.nn.Module | None,
    env,
    num_simulations: int,
    max_steps: int,
    *,
    device=None,
    c_puct: float | None = None,
    evaluator: Evaluator | None = None,
    game: str | Game | None = None,
) -> Iterator[int]:
    """Solve the cube of ``env`` (a cube env of ``game``: default the 2x2 and its ``Rubik2x2Env``)
    by greedy MCTS, the way ``test.py`` and the GUI do: yields each move after playing it on ``env``,
    until the cube is solved or ``max_steps`` moves were played.

    Every move is a fresh search (as the original) from the env's cube AND its move
    history: the mask of the root's children depends on the last move and how often that
    face was just turned (the env's rule, as in ``play_episodes``). One search object
    serves the whole solve, so its evaluation cache carries over between moves.
    ``evaluator`` replaces the network (the GUI wraps it to cancel a solve).
    With a single simulation no root move gets a visit: the first legal move is played.
    """
    mcts = MCTS(model, c_puct=c_puct, num_simulations=num_simulations, device=device, evaluator=evaluator, game=game)
    for _ in range(max_steps):
        state = mcts.game.new_states(env.cube[None], np.array([env.last_action]), np.array([env.face_count]))
        if mcts.game.is_terminal(state)[0]:
            return
        mask = mcts.game.legal_mask(state)  # (1, 12)
        visits = mcts.run_batch(state, mask)[0]
        # (greedy_solve must repeat itself: no random choice among the legal moves here)
        action = pick_action_from_mcts(visits, mask=mask[0]) if visits.sum() > 0 else int(np.flatnonzero(mask[0])[0])
        env.step(action)
        yield action


def generate_self_play_data(
    model: torch.nn.Module,
    num_episodes: int,
    max_episode_steps: int,
    num_simulations: int,
    scramble_len: int,
    select_mode: str = "sample",
    temperature: float = 1.0,
    device=None,
    rng: np.random.Generator | None = None,
    c_puct: float | None = None,
    use_cache: bool = True,
    progress: bool = False,
    return_results: bool = False,
    value_target: str = "episode",
    game: str | Game | None = None,
):
    """The original's entry point: ``(dataset, solve_rate)`` for ``num_episodes`` episodes from
    random scrambles of ``scramble_len`` moves (drawn from ``rng``) of ``game`` (a puzzle, by name
    or entry; default the 2x2).

    With ``return_results=True`` the ``EpisodeResults`` (timings, moves, ...) come third.
    ``value_target``: see ``EpisodeResults.state_values`` (default: the original's).
    """
    rng = np.random.default_rng() if rng is None else rng
    with eval_mode(model):
        start_cubes, _ = get_game(game).scramble(rng, num_episodes, scramble_len)
        results = play_episodes(
            model,
            start_cubes,
            max_episode_steps,
            num_simulations,
            select_mode,
            temperature,
            rng=rng,
            device=device,
            c_puct=c_puct,
            use_cache=use_cache,
            progress=progress,
            game=game,
        )
    dataset = results.dataset(value_target)
    if return_results:
        return dataset, results.solve_rate, results
    return dataset, results.solve_rate

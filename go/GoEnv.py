"""Go as a Gymnasium environment, one per board size (``Go5x5-v0``, ``Go7x7-v0``, ``Go9x9-v0`` ... ``Go19x19-v0``);
the rules are ``Go_Board``'s."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from go.Go_Board import BLACK, MAX_SIZE, MIN_SIZE, GoBoard, format_vertex


class GoEnv(gym.Env):
    """Go on an N x N board, both colours played through the same env (self-play or two agents taking turns).

    ## Description
    Black and White take turns placing stones on the points of the board; chains of stones left without
    liberties are captured. The rules are Tromp-Taylor's with positional superko: suicide is illegal, no
    move may recreate an earlier whole-board position, a pass is always legal, and the game ends after two
    passes in a row (or the move cap). Area scoring: stones plus empty regions that reach only one colour;
    White receives ``komi``.

    ## Action Space
    ``Discrete(N*N + 1)``: action ``row * N + col`` places a stone on that point (row 0 is the top row,
    printed as row ``N``; columns ``A..T`` without ``I``; ``A1`` is the bottom-left corner), action ``N*N``
    passes. ``Go_Board.parse_vertex`` and ``format_vertex`` convert to and from coordinates.

    ## Observation Space
    ``Box(0, 1, (3, N, N), float32)`` from the side to move: plane 0 own stones, plane 1 the opponent's
    stones, plane 2 all ones when Black is to move (``GoBoard.encode`` with ``history=1``).

    ## Rewards
    0 for every move but the last; when the game ends, +1 if the player who made the last move wins on
    area score, -1 if they lose, 0 for a draw (an integer komi).

    ## Starting State
    The empty board, Black to move. ``reset(seed=...)`` seeds ``self.np_random`` (the start is the same
    for every seed; the seed is for agents that draw from the env's generator).

    ## Episode End
    ``terminated`` after two passes in a row; ``truncated`` when ``max_moves`` actions (passes included)
    have been played; the final move's reward is the area result in both cases.

    ## Info
    ``action_mask`` (bool ``(N*N+1,)``): the legal actions; ``to_play`` (1 Black, -1 White: the player to
    move next), ``move_count``, ``passes`` (consecutive) and ``score`` (Black's area minus White's minus
    komi, of the board as it stands).

    ## Arguments
    ``GoEnv(size=5, komi=None, max_moves=None, render_mode=None)``: ``komi`` defaults to
    ``Go_Board.DEFAULT_KOMI`` (24.5 on 5x5, 8.5 on 7x7, 7.5 otherwise), ``max_moves`` to ``2*N*N``;
    ``render_mode`` "ansi" returns the board with coordinates from ``render()``, "human" prints it.

    Stepping an action outside 0..N*N, an illegal move, or a finished game raises ``ValueError``.
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 4}

    def __init__(
        self, size: int = 5, komi: float | None = None, max_moves: int | None = None, render_mode: str | None = None
    ):
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.rules = GoBoard(size, komi=komi, max_moves=max_moves)
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(self.rules.num_actions)
        self.observation_space = spaces.Box(0.0, 1.0, shape=self.rules.obs_shape, dtype=np.float32)
        self.state = self.rules.initial_state(1)
        self.last_action: int | None = None

    def _observation(self) -> np.ndarray:
        return self.rules.encode(self.state)[0]

    def _info(self) -> dict:
        return {
            "action_mask": self.rules.legal_mask(self.state)[0],
            "to_play": int(self.state["to_play"][0]),
            "move_count": int(self.state["move_count"][0]),
            "passes": int(self.state["passes"][0]),
            "score": float(self.rules.score(self.state)[0]),
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if options:
            raise ValueError(f"GoEnv.reset takes no options, got {sorted(options)}")
        self.state = self.rules.initial_state(1)
        self.last_action = None
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info()

    def step(self, action):
        if (
            np.ndim(action) != 0
            or not np.issubdtype(np.asarray(action).dtype, np.integer)
            or not (self.action_space.contains(int(action)))
        ):
            raise ValueError(f"action must be an integer in 0..{self.rules.num_points}, got {action!r}")
        if self.rules.is_terminal(self.state)[0]:
            raise ValueError("the game is over: call reset()")
        mover = int(self.state["to_play"][0])
        self.state = self.rules.step(self.state, [int(action)])
        self.last_action = int(action)
        over = bool(self.rules.is_terminal(self.state)[0])
        terminated = over and int(self.state["passes"][0]) >= 2
        reward = float(np.sign(self.rules.score(self.state)[0]) * mover) if over else 0.0
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, terminated, over and not terminated, self._info()

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("GoEnv.render() without a render_mode: pass render_mode='ansi' or 'human'")
            return None
        text = self.rules.to_text(self.state)
        if self.last_action is not None:
            who = "Black" if self.state["to_play"][0] != BLACK else "White"
            text += f"\nlast move: {who} {format_vertex(self.last_action, self.rules.size)}"
        if self.render_mode == "ansi":
            return text
        print(text)
        return None


def env_id(size: int) -> str:
    """The registered id of the env of one board size, e.g. ``Go5x5-v0``."""
    return f"Go{size}x{size}-v0"


for _size in range(MIN_SIZE, MAX_SIZE + 1):
    if env_id(_size) not in gym.registry:
        gym.register(id=env_id(_size), entry_point="go.GoEnv:GoEnv", kwargs={"size": _size})

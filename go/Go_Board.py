"""Batched Go rules in numpy: any board from 5x5 to 19x19, in the state-batch style of the game interface.

Rules (Tromp-Taylor with positional superko, as GNU Go plays with ``--chinese-rules --positional-superko``):

* Black moves first. A move places a stone of the player to move on an empty point; opponent chains left
  without liberties are removed; a move that leaves its own chain without liberties (suicide) is illegal.
* Positional superko: no move may recreate a whole-board position that occurred earlier in the game
  (positions are compared by 64-bit Zobrist hashes of the board; the side to move does not count).
* Pass is always legal; it is the last action, index ``N*N``. The game is over after two passes in a row
  or after ``max_moves`` actions (passes included; default ``2*N*N``). That cap is a self-play device, no
  rule of Go: games against a person or another engine (GTP, the GUI, matches against GNU Go) use
  ``PLAY_MAX_MOVES``, far beyond any real game (``play_board``).
* Area scoring: a player's area is their stones plus the empty regions that reach only their colour.
  Black wins when ``black area - white area - komi > 0``; an integer komi allows a draw.

Conventions: a board is ``(N*N,)`` int8, ``BLACK = 1``, ``WHITE = -1``, ``EMPTY = 0``; point index
``row * N + col`` with row 0 the TOP row of the printed board (row label ``N``) and col 0 column ``A``.
Coordinates are written as Go players write them: columns ``A..T`` without ``I``, row 1 at the bottom
(``A1`` is the bottom-left corner, index ``(N-1)*N``), ``pass`` for the pass.

A state batch is a dict of arrays with leading batch dimension B (see ``GoBoard.state_keys_doc``):
``board`` (B, N*N) int8, ``to_play`` (B,) int8 (1 Black, -1 White), ``passes`` (B,) int8 (consecutive
passes just played), ``move_count`` (B,) int32 (actions played), ``hash_history`` (B, W) uint64
(``hash_history[b, t]`` is the Zobrist hash of the board after ``t`` actions; entries after
``move_count`` are 0 and unused; W is ``min(max_moves, INITIAL_ROOM) + 1`` at first, so ``max_moves + 1``
for self-play's cap, and ``step`` widens it by doubling when a longer game needs it, never past
``max_moves + 1``: superko compares every position of the game however long) and, when ``history > 1``,
``past`` (B, history-1, N*N) int8 (the previous boards, most recent first, empty boards before the game
began) for the network's history planes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from run.Input_Echo import shown

BLACK, WHITE, EMPTY = 1, -1, 0
#: Column letters as Go players write them (no ``I``); a board has at most 19 columns.
COLUMNS = "ABCDEFGHJKLMNOPQRST"
MIN_SIZE, MAX_SIZE = 5, 19
#: Default komi by size: 5x5 at 24.5 (perfect Black wins by 25, so Black wins by half a point) and
#: 7x7 at 8.5 (believed Black +9); other sizes the common 7.5.
DEFAULT_KOMI = {5: 24.5, 7: 8.5}
OTHER_KOMI = 7.5
#: The area komi at which perfect play draws, where it is known or believed (5x5: Black wins by 25; 7x7: by
#: 9; 9x9: by 7): self-play's komi draws centre on it (``Go_Training.draw_komi``).
FAIR_KOMI = {5: 25.0, 7: 9.0, 9: 7.0}
#: The komi plane of a network that sees komi (``GoBoard(komi_input=True)``): the komi from the player to
#: move's side (positive: the player to move receives it), in units of this many points (KataGo's 20).
KOMI_PLANE_SCALE = 20.0
#: A komi an evaluator row holds: half points in one int8 (``Go_Game.GoGame.eval_input``), so the
#: network sees komi clipped to +-63.5 (scores still count the komi as set).
MAX_INPUT_KOMI = 63.5
#: The move cap of games against a person or another engine (``play_board``): a million actions, thousands
#: of times a real game (a 19x19 game is about 300 moves), so that in practice only two passes end a game.
#: Superko stays exact to there; the cost is 8 bytes of hash history a move in every state kept (a search
#: keeps one per simulation) and a legality check that grows with the game's length.
PLAY_MAX_MOVES = 1_000_000
#: The moves of hash history a new state holds (at most): a capped game's whole (self-play's 2 N^2 is far
#: below it, so its states keep their width and the arrays that gather them never see two widths); a play
#: game's first 4,096 moves, widened by doubling after (``GoBoard.with_room``).
INITIAL_ROOM = 4096
#: The seed fixed for the Zobrist tables: hashes are the same in every process and run.
ZOBRIST_SEED = 20240530
_OFF_BOARD = 2  # the colour of the padding point outside the board


def format_vertex(action: int, size: int) -> str:
    """The Go coordinate of an action: ``"A1"`` (bottom left) ... or ``"pass"`` for ``size*size``."""
    if action == size * size:
        return "pass"
    if not 0 <= action < size * size:
        raise ValueError(f"action {action} is outside 0..{size * size} for a {size}x{size} board")
    row, col = divmod(int(action), size)
    return f"{COLUMNS[col]}{size - row}"


def parse_vertex(text: str, size: int) -> int:
    """The action of a Go coordinate (case-insensitive ``"c3"``, ``"pass"``); ValueError when malformed
    or off the board."""
    word = text.strip().upper()
    if word == "PASS":
        return size * size
    digits = word[1:]  # ASCII only: str.isdigit also takes "٣" and "²"
    if not 2 <= len(word) <= 3 or word[0] not in COLUMNS[:size] or not (digits.isascii() and digits.isdigit()):
        raise ValueError(f"{shown(text)} is not a point of a {size}x{size} board (e.g. A1 or pass)")
    number = int(word[1:])
    if not 1 <= number <= size:
        raise ValueError(f"{shown(text)} is not a point of a {size}x{size} board: rows run 1..{size}")
    return (size - number) * size + COLUMNS.index(word[0])


def board_to_text(board: np.ndarray, size: int, last_action: int | None = None) -> str:
    """An ANSI-free text diagram of one board (N*N,): ``X`` Black, ``O`` White, ``.`` empty, the last move
    in parentheses, column letters above and below, row numbers (1 at the bottom) on both sides."""
    letters = "   " + " ".join(COLUMNS[:size])
    lines = [letters]
    for row in range(size):
        cells = ""
        for col in range(size):
            index = row * size + col
            mark = {BLACK: "X", WHITE: "O"}.get(int(board[index]), ".")
            if index == last_action:
                cells = cells[:-1] + f"({mark})"
            else:
                cells += f"{mark} "
        lines.append(f"{size - row:2d} {cells}{size - row:d}")
    lines.append(letters)
    return "\n".join(lines)


def board_from_text(rows: list[str]) -> np.ndarray:
    """A board (N*N,) int8 from N rows, top row first, of ``X`` (Black), ``O`` (White) and ``.`` (empty);
    spaces are ignored."""
    cells = [row.replace(" ", "") for row in rows]
    size = len(cells)
    if any(len(row) != size for row in cells) or set("".join(cells)) - set("XO."):
        raise ValueError(f"a board is {size} rows of {size} characters X, O or .")
    marks = {"X": BLACK, "O": WHITE, ".": EMPTY}
    return np.array([marks[ch] for row in cells for ch in row], dtype=np.int8)


def _neighbours(size: int) -> np.ndarray:
    """(N*N, 4) int64: the up/down/left/right neighbour of each point, ``N*N`` (the padding point) off the
    board."""
    nn = size * size
    table = np.full((nn, 4), nn, dtype=np.int64)
    for row in range(size):
        for col in range(size):
            for k, (dr, dc) in enumerate(((-1, 0), (1, 0), (0, -1), (0, 1))):
                r, c = row + dr, col + dc
                if 0 <= r < size and 0 <= c < size:
                    table[row * size + col, k] = r * size + c
    return table


def _symmetry_perms(size: int) -> np.ndarray:
    """(8, N*N) int64: ``new_board = board[perms[s]]`` for the 8 symmetries of the square (identity first)."""
    grid = np.arange(size * size).reshape(size, size)
    perms = []
    for flip in (False, True):
        for turns in range(4):
            view = np.rot90(grid.T if flip else grid, turns)
            perms.append(view.reshape(-1))
    return np.stack(perms)


@dataclass(frozen=True)
class Analysis:
    """The chains of a board batch. ``labels`` (B, N*N): each point's component (points of one colour,
    empty included, connected orthogonally) named by its smallest index; ``liberties`` (B, N*N+1): the
    distinct empty points next to the chain named by each label (0 for empty regions and the padding);
    ``chain_hash`` (B, N*N+1) uint64: the XOR of the Zobrist keys of the chain's stones."""

    labels: np.ndarray
    liberties: np.ndarray
    chain_hash: np.ndarray


@dataclass(frozen=True)
class GoBoard:
    """The rules of one board size and komi, batched over states (see the module docstring).

    ``GoBoard(size, komi=None, max_moves=None, history=1, komi_input=False)``: ``komi`` defaults to
    ``DEFAULT_KOMI`` by size, ``max_moves`` to ``2*size*size`` actions, ``history`` is how many positions
    the network sees, ``komi_input`` whether it also sees the komi. A state batch may hold its own komi per
    state (``komi``, (B,) float32: self-play draws one per game); states without it play at ``komi``.
    """

    size: int
    komi: float | None = None
    max_moves: int | None = None
    history: int = 1
    komi_input: bool = False  # the network's input holds a komi plane (``encode``)
    discount: float = field(default=-1.0, init=False)  # two players, zero-sum: negate the value each ply

    def __post_init__(self):
        if not MIN_SIZE <= self.size <= MAX_SIZE:
            raise ValueError(f"board size must be {MIN_SIZE}..{MAX_SIZE}, got {self.size}")
        if self.komi is None:
            object.__setattr__(self, "komi", DEFAULT_KOMI.get(self.size, OTHER_KOMI))
        if self.max_moves is None:
            object.__setattr__(self, "max_moves", 2 * self.size * self.size)
        if self.max_moves < 1 or self.history < 1:
            raise ValueError("max_moves and history must be at least 1")
        nn = self.size * self.size
        rng = np.random.default_rng(ZOBRIST_SEED + self.size)
        keys = np.frombuffer(rng.bytes(8 * 2 * (nn + 1)), dtype=np.uint64).reshape(2, nn + 1).copy()
        keys[:, nn] = 0  # the padding point has no key
        object.__setattr__(self, "_zobrist", keys)  # [0] Black's, [1] White's key of each point
        object.__setattr__(self, "_nbr", _neighbours(self.size))
        object.__setattr__(self, "_perms", _symmetry_perms(self.size))

    # -- shapes ------------------------------------------------------------------------------------------
    @property
    def num_points(self) -> int:
        return self.size * self.size

    @property
    def num_actions(self) -> int:
        """N*N points and the pass (last)."""
        return self.num_points + 1

    @property
    def pass_action(self) -> int:
        return self.num_points

    @property
    def obs_shape(self) -> tuple[int, int, int]:
        """``encode``'s planes: own and opponent stones for each of ``history`` positions, the side to move,
        then (``komi_input``) the komi."""
        return (2 * self.history + 1 + int(self.komi_input), self.size, self.size)

    @property
    def symmetry_maps(self) -> np.ndarray:
        """``(8, N*N)``: the point each point of the ``k``-th image of ``symmetries`` comes from
        (``image[:, p] = board[:, maps[k, p]]``), the identity first."""
        return self._perms

    # -- states --------------------------------------------------------------------------------------------
    def initial_state(self, batch: int = 1) -> dict[str, np.ndarray]:
        """``batch`` empty boards with Black to move."""
        state = {
            "board": np.zeros((batch, self.num_points), dtype=np.int8),
            "to_play": np.full(batch, BLACK, dtype=np.int8),
            "passes": np.zeros(batch, dtype=np.int8),
            "move_count": np.zeros(batch, dtype=np.int32),
            "hash_history": np.zeros((batch, min(self.max_moves, INITIAL_ROOM) + 1), dtype=np.uint64),
        }
        if self.history > 1:
            state["past"] = np.zeros((batch, self.history - 1, self.num_points), dtype=np.int8)
        return state

    def komi_of(self, state) -> np.ndarray:
        """(B,) float64: each state's komi (its own ``komi`` entry, else the rules')."""
        if "komi" in state:
            return np.asarray(state["komi"], dtype=np.float64)
        return np.full(state["board"].shape[0], float(self.komi))

    def with_room(self, state, moves: int) -> dict[str, np.ndarray]:
        """``state`` with hash history for ``moves`` more actions (at most to ``max_moves``): the same dict
        when it has it, else a copy widened by doubling. A search calls it at its root, so that every state
        of its tree has one width (``Search_Tree`` keeps them in one array) and ``step`` never widens there."""
        history = state["hash_history"]
        need = min(int(state["move_count"].max()) + moves, self.max_moves) + 1
        if history.shape[1] >= need:
            return state
        width = min(max(need, 2 * history.shape[1]), self.max_moves + 1)
        wider = np.zeros((history.shape[0], width), dtype=np.uint64)
        wider[:, : history.shape[1]] = history
        return {**state, "hash_history": wider}

    def state_from_board(self, board: np.ndarray, to_play: int = BLACK) -> dict[str, np.ndarray]:
        """A one-state batch of a set-up position (B=1): ``board`` (N*N,) becomes the first position of the
        game (no earlier positions for superko), ``to_play`` moves next."""
        state = self.initial_state(1)
        state["board"][0] = np.asarray(board, dtype=np.int8).reshape(self.num_points)
        state["to_play"][0] = to_play
        state["hash_history"][0, 0] = self.board_hash(state["board"])[0]
        return state

    def board_hash(self, board: np.ndarray) -> np.ndarray:
        """(B,) uint64 Zobrist hashes of boards (B, N*N); the empty board hashes to 0."""
        return np.bitwise_xor.reduce(self._stone_keys(board), axis=1)

    def _stone_keys(self, board: np.ndarray) -> np.ndarray:
        """(B, N*N) uint64: each stone's Zobrist key for its colour, 0 on empty points."""
        black, white = self._zobrist[0, :-1], self._zobrist[1, :-1]
        return np.where(board == BLACK, black, np.where(board == WHITE, white, np.uint64(0)))

    # -- chains --------------------------------------------------------------------------------------------
    def _padded(self, board: np.ndarray) -> np.ndarray:
        return np.concatenate([board, np.full((board.shape[0], 1), _OFF_BOARD, dtype=np.int8)], axis=1)

    def components(self, board: np.ndarray) -> np.ndarray:
        """(B, N*N) int64: each point labelled by the smallest index of its component (same colour,
        empty included, orthogonally connected). Min-label propagation with pointer jumping: each round
        takes the smallest label among same-coloured neighbours, then the label of that label."""
        nn = self.num_points
        across = self._nbr.T  # (4, N*N): one neighbour direction per row, so minima are elementwise
        same = self._padded(board)[:, across] == board[:, None, :]  # (B, 4, N*N)
        rows = np.arange(board.shape[0])[:, None]
        labels = np.broadcast_to(np.arange(nn), board.shape).copy()
        while True:
            around = np.concatenate([labels, np.full((board.shape[0], 1), nn)], axis=1)[:, across]
            around = np.where(same, around, nn)
            new = np.minimum(np.minimum(labels, around[:, 0]), np.minimum(around[:, 1], around[:, 2]))
            new = np.minimum(new, around[:, 3])
            new = new[rows, new]
            if np.array_equal(new, labels):
                return labels
            labels = new

    def analyse(self, board: np.ndarray) -> Analysis:
        """The chains of ``board`` (B, N*N): labels, liberties and Zobrist hash of each chain."""
        batch, nn = board.shape
        labels = self.components(board)
        padded_labels = np.concatenate([labels, np.full((batch, 1), nn)], axis=1)
        around = padded_labels[:, self._nbr]  # (B, N*N, 4) the neighbours' labels
        colours = self._padded(board)[:, self._nbr]
        counted = (board == EMPTY)[:, :, None] & ((colours == BLACK) | (colours == WHITE)) & ~_repeats(around)
        offsets = (np.arange(batch) * (nn + 1))[:, None, None]
        liberties = np.bincount((around + offsets)[counted], minlength=batch * (nn + 1)).reshape(batch, nn + 1)
        chain_hash = np.zeros((batch, nn + 1), dtype=np.uint64)
        np.bitwise_xor.at(chain_hash, (np.arange(batch)[:, None], labels), self._stone_keys(board))
        return Analysis(labels, liberties, chain_hash)

    def _move_effects(self, state, analysis: Analysis, points: np.ndarray):
        """What playing each of ``points`` (B, K) would do for the player to move.

        Returns ``labels`` (B, K, 4) (the neighbours' chain labels, ``N*N`` off the board), ``captures``
        (B, K, 4) bool (the neighbour's chain would be captured; each chain flagged once), ``playable``
        (B, K) bool (empty and not suicide; superko not checked) and ``new_hash`` (B, K) uint64 (the
        board's hash after the move and its captures)."""
        board, to_play = state["board"], state["to_play"].astype(np.int8)[:, None, None]
        rows = np.arange(board.shape[0])[:, None, None]
        neighbours = self._nbr[points]  # (B, K, 4)
        colours = self._padded(board)[rows, neighbours]
        labels = np.concatenate([analysis.labels, np.full((board.shape[0], 1), self.num_points)], axis=1)
        labels = labels[rows, neighbours]
        liberties = analysis.liberties[rows, labels]
        captures = (colours == -to_play) & (liberties == 1) & ~_repeats(labels)
        keeps_liberty = (colours == EMPTY) | ((colours == to_play) & (liberties >= 2))
        empty = board[rows[:, :, 0], points] == EMPTY
        playable = empty & (captures.any(axis=2) | keeps_liberty.any(axis=2))
        captured_hash = np.bitwise_xor.reduce(np.where(captures, analysis.chain_hash[rows, labels], 0), axis=2)
        own_key = self._zobrist[np.where(state["to_play"] == BLACK, 0, 1)[:, None], points]
        current = state["hash_history"][np.arange(board.shape[0]), state["move_count"]][:, None]
        return labels, captures, playable, current ^ own_key ^ captured_hash.astype(np.uint64)

    def _repeats_history(self, state, hashes: np.ndarray) -> np.ndarray:
        """(B, K) bool: the hash (B, K) equals a position of the game so far (positional superko)."""
        upto = int(state["move_count"].max()) + 1  # later entries are unused in every state
        played = np.arange(upto)[None, :] <= state["move_count"][:, None]
        history = state["hash_history"][:, None, :upto]
        return ((hashes[:, :, None] == history) & played[:, None, :]).any(axis=2)

    # -- the game interface -----------------------------------------------------------------------------
    def is_terminal(self, state) -> np.ndarray:
        """(B,) bool: two passes in a row, or ``max_moves`` actions played."""
        return (state["passes"] >= 2) | (state["move_count"] >= self.max_moves)

    def point_moves(self, state) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(playable, superko, new_hash)``, each (B, N*N): the empty points that are not suicide (bool),
        those of them whose move would recreate an earlier position (bool), and the Zobrist hash of the
        board after each point's move and its captures (uint64; meaningless where not playable)."""
        batch = state["board"].shape[0]
        points = np.broadcast_to(np.arange(self.num_points), (batch, self.num_points))
        _, _, playable, new_hash = self._move_effects(state, self.analyse(state["board"]), points)
        return playable, playable & self._repeats_history(state, new_hash), new_hash

    def legal_mask(self, state) -> np.ndarray:
        """(B, N*N+1) bool: empty points that are neither suicide nor a repeat of an earlier position, and
        the pass; all False for a finished game."""
        playable, superko, _ = self.point_moves(state)
        mask = np.concatenate([playable & ~superko, np.ones((playable.shape[0], 1), dtype=bool)], axis=1)
        mask[self.is_terminal(state)] = False
        return mask

    def step(self, state, actions) -> dict[str, np.ndarray]:
        """The next state batch after each state's action (B,); ValueError for an illegal action or a
        finished game."""
        actions = np.asarray(actions, dtype=np.int64).reshape(-1)
        board = state["board"]
        batch = board.shape[0]
        if actions.shape[0] != batch or ((actions < 0) | (actions > self.num_points)).any():
            raise ValueError(f"step needs {batch} actions in 0..{self.num_points}")
        if self.is_terminal(state).any():
            raise ValueError("step on a finished game")
        is_pass = actions == self.pass_action
        points = np.where(is_pass, 0, actions)[:, None]
        analysis = self.analyse(board)
        labels, captures, playable, new_hash = self._move_effects(state, analysis, points)
        illegal = ~is_pass & (~playable[:, 0] | self._repeats_history(state, new_hash)[:, 0])
        if illegal.any():
            b = int(np.flatnonzero(illegal)[0])
            raise ValueError(f"illegal move {format_vertex(int(actions[b]), self.size)} in state {b}")
        rows = np.arange(batch)
        captured_labels = np.where(captures[:, 0] & ~is_pass[:, None], labels[:, 0], -1)
        removed = (analysis.labels[:, :, None] == captured_labels[:, None, :]).any(axis=2)
        new_board = np.where(removed, EMPTY, board).astype(np.int8)
        new_board[rows[~is_pass], actions[~is_pass]] = state["to_play"][~is_pass]
        move_count = state["move_count"] + 1
        hash_history = self.with_room(state, 1)["hash_history"].copy()
        current = hash_history[rows, state["move_count"]]
        hash_history[rows, move_count] = np.where(is_pass, current, new_hash[:, 0])
        new = {
            "board": new_board,
            "to_play": (-state["to_play"]).astype(np.int8),
            "passes": np.where(is_pass, state["passes"] + 1, 0).astype(np.int8),
            "move_count": move_count.astype(np.int32),
            "hash_history": hash_history,
        }
        if self.history > 1:
            new["past"] = np.concatenate([board[:, None], state["past"][:, :-1]], axis=1)
        if "komi" in state:
            new["komi"] = state["komi"]
        return new

    def ownership(self, board: np.ndarray) -> np.ndarray:
        """(B, N*N) int8: each point's owner under area scoring: BLACK or WHITE for a stone and for an empty
        point whose region reaches only that colour, EMPTY for an empty point reaching both or neither."""
        batch, nn = board.shape
        labels = self.components(board)
        colours = self._padded(board)[:, self._nbr]
        offsets = (np.arange(batch) * nn)[:, None]
        empty = board == EMPTY
        counts = []
        for colour in (BLACK, WHITE):
            touching = empty & (colours == colour).any(axis=2)
            reach = np.bincount((labels + offsets)[touching], minlength=batch * nn).reshape(batch, nn) > 0
            counts.append(reach[np.arange(batch)[:, None], labels] & empty)
        black_region, white_region = counts
        owner = np.array(board, dtype=np.int8)
        owner[black_region & ~white_region] = BLACK
        owner[white_region & ~black_region] = WHITE
        return owner

    def area(self, board: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(B,) int Black's and White's area: stones plus empty regions that reach only that colour."""
        owner = self.ownership(board)
        return (owner == BLACK).sum(axis=1), (owner == WHITE).sum(axis=1)

    def score(self, state) -> np.ndarray:
        """(B,) float64: Black's area minus White's area minus komi (positive: Black is ahead)."""
        black, white = self.area(state["board"])
        return (black - white).astype(np.float64) - self.komi_of(state)

    def terminal_value(self, state) -> np.ndarray:
        """(B,) float64: +1 if the player to move wins by the area score, -1 if they lose, 0 for a draw
        (meaningful for finished games; the score of the board as it stands otherwise)."""
        return np.sign(self.score(state)) * state["to_play"]

    def reward(self, state, action, next_state) -> np.ndarray:
        """(B,) float: Go pays only at the end (``terminal_value``), so 0 for every move."""
        return np.zeros(state["board"].shape[0])

    def encode(self, state) -> np.ndarray:
        """(B, 2*history+1, N, N) float32 network input, from the side to move: for the current board and
        each of the ``history-1`` previous ones, a plane of own stones then a plane of opponent stones;
        then a plane of ones when Black is to move (zeros for White); with ``komi_input`` last a plane of the
        komi the player to move receives (White: +komi, Black: -komi), clipped to ``MAX_INPUT_KOMI``, over
        ``KOMI_PLANE_SCALE``."""
        boards = state["board"][:, None]
        if self.history > 1:
            boards = np.concatenate([boards, state["past"]], axis=1)
        batch = boards.shape[0]
        own = state["to_play"][:, None, None]
        planes = np.stack([boards == own, boards == -own], axis=2).reshape(batch, -1, self.num_points)
        side = np.broadcast_to((state["to_play"] == BLACK)[:, None, None], (batch, 1, self.num_points))
        parts = [planes, side]
        if self.komi_input:
            komi = np.clip(self.komi_of(state), -MAX_INPUT_KOMI, MAX_INPUT_KOMI) * -state["to_play"]
            parts.append(np.broadcast_to((komi / KOMI_PLANE_SCALE)[:, None, None], (batch, 1, self.num_points)))
        return np.concatenate(parts, axis=1, dtype=np.float32).reshape(-1, *self.obs_shape)

    def state_keys(self, state) -> np.ndarray:
        """(B,) exact keys (``numpy.bytes_``: hashable, sortable; trailing zero bytes dropped, which keeps
        keys of equal-width rows distinct) of what the network sees and what
        legality depends on: the board, the past boards, the side to move, the passes, the move count and
        the hashes of earlier positions."""
        parts = [state["board"].view(np.uint8), state["to_play"].view(np.uint8)[:, None]]
        parts += [state["passes"].view(np.uint8)[:, None], state["move_count"][:, None].view(np.uint8)]
        if self.history > 1:
            parts.append(state["past"].reshape(state["past"].shape[0], -1).view(np.uint8))
        parts.append(state["hash_history"].view(np.uint8))
        flat = np.ascontiguousarray(np.concatenate(parts, axis=1))
        return flat.view(f"S{flat.shape[1]}").reshape(-1)

    def symmetries(self, state, policy: np.ndarray) -> list[tuple[dict[str, np.ndarray], np.ndarray]]:
        """The 8 (state, policy (B, N*N+1)) pairs under the square's symmetries, the identity first; the
        pass stays last. Board and past boards are transformed; ``hash_history`` is copied unchanged
        (Zobrist hashes do not transform), so the pairs are for the network (``encode``, policy targets),
        not for further play."""
        pairs = []
        for perm in self._perms:
            new = {key: value.copy() for key, value in state.items()}
            new["board"] = state["board"][:, perm]
            if self.history > 1:
                new["past"] = state["past"][:, :, perm]
            new_policy = np.concatenate([policy[:, :-1][:, perm], policy[:, -1:]], axis=1)
            pairs.append((new, new_policy))
        return pairs

    def policy_from_symmetry(self, k: int, policy: np.ndarray) -> np.ndarray:
        """A policy ``(B, N*N+1)`` over the points of the ``k``-th image of ``symmetries`` brought back to
        the board's own points (the inverse of that image's map; the pass stays last)."""
        points = np.empty_like(policy[:, :-1])
        points[:, self._perms[k]] = policy[:, :-1]
        return np.concatenate([points, policy[:, -1:]], axis=1)

    def to_text(self, state, index: int = 0) -> str:
        """One state of the batch as a text board, with whose move it is and the move count."""
        who = "Black (X)" if state["to_play"][index] == BLACK else "White (O)"
        board = board_to_text(state["board"][index], self.size)
        komi = f"{float(state['komi'][index]):g}" if "komi" in state else self.komi
        return f"{board}\n{who} to move, move {int(state['move_count'][index])}, komi {komi}"


def play_board(size: int, komi: float | None = None, history: int = 1, komi_input: bool = False) -> GoBoard:
    """The rules of a game against a person or another engine: ``GoBoard`` with ``PLAY_MAX_MOVES``."""
    return GoBoard(size, komi=komi, max_moves=PLAY_MAX_MOVES, history=history, komi_input=komi_input)


def _repeats(labels: np.ndarray) -> np.ndarray:
    """(..., 4) bool: the label already appears earlier along the last axis (count each chain once)."""
    repeat = np.zeros(labels.shape, dtype=bool)
    for k in range(1, labels.shape[-1]):
        repeat[..., k] = (labels[..., :k] == labels[..., k : k + 1]).any(axis=-1)
    return repeat

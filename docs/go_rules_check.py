"""Check Go_Board's rules against GNU Go over GTP on random legal games, and its area score against a plain
reference count.

Random games (uniform over the legal points, a pass with probability ``--pass-prob``, until two passes or
the move cap) are played in lockstep on ``Go_Board`` and on GNU Go (``--chinese-rules
--positional-superko``). Before every move, the legality of every point for the player to move is compared
with GNU Go's ``is_legal``; after every move, the board with GNU Go's ``list_stones``. When a game ends, the
area score of ``Go_Board.area`` is compared with a flood fill written here independently. Prints one line
of totals (and the first disagreements); exit status 0 when everything agrees, 1 otherwise, 2 for bad
input or a missing GNU Go.

    python docs/go_rules_check.py --size 5 --moves 10000 --seed 0
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from go.Go_Board import BLACK, EMPTY, MAX_SIZE, MIN_SIZE, WHITE, GoBoard, board_to_text, format_vertex  # noqa: E402
from go.GTP_Client import GNUGO_INSTALL_HINT, GNUGO_PATH, GTPClient, GTPError, format_color, gnugo_command  # noqa: E402
from run import Cli  # noqa: E402

MAX_REPORTED = 5  # disagreements printed in full


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = Cli.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=Cli.int_in(MIN_SIZE, MAX_SIZE, "board sizes"), default=5, help="board size")
    parser.add_argument("--moves", type=Cli.int_in(1, 10_000_000, "moves"), default=10_000, help="moves in all")
    parser.add_argument("--seed", type=Cli.seed, default=0, help="seed of the random games")
    parser.add_argument(
        "--pass-prob", type=Cli.fraction, default=0.05, help="chance of a pass when points are legal (0..1)"
    )
    parser.add_argument("--gnugo", type=Cli.nonempty_path, default=GNUGO_PATH, help="the GNU Go binary")
    args = parser.parse_args(argv)
    if args.pass_prob >= 1.0:
        parser.error("--pass-prob must be below 1, or no game would end by moves")
    if not os.access(args.gnugo, os.X_OK):
        parser.error(f"GNU Go is not at {args.gnugo}; {GNUGO_INSTALL_HINT}")
    return args


def reference_area(board: np.ndarray, size: int) -> tuple[int, int]:
    """Black's and White's area of one board (N*N,), by a plain flood fill of each empty region."""
    grid = board.reshape(size, size)
    seen = np.zeros((size, size), dtype=bool)
    area = {BLACK: int((grid == BLACK).sum()), WHITE: int((grid == WHITE).sum())}
    for start in zip(*np.nonzero(grid == EMPTY)):
        if seen[start]:
            continue
        region, borders, todo = 0, set(), [start]
        seen[start] = True
        while todo:
            r, c = todo.pop()
            region += 1
            for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                if 0 <= rr < size and 0 <= cc < size:
                    if grid[rr, cc] != EMPTY:
                        borders.add(int(grid[rr, cc]))
                    elif not seen[rr, cc]:
                        seen[rr, cc] = True
                        todo.append((rr, cc))
        if len(borders) == 1:
            area[borders.pop()] += region
    return area[BLACK], area[WHITE]


class Tally:
    """Counts of what was compared and the disagreements found."""

    def __init__(self):
        self.moves = self.games = self.checks = self.captures = self.superko = self.suicides = 0
        self.long_superko = 0  # superko points that would recreate a position older than the last but one
        self.disagreements: list[str] = []

    def disagree(self, text: str) -> None:
        self.disagreements.append(text)
        if len(self.disagreements) <= MAX_REPORTED:
            print(f"DISAGREEMENT {text}", file=sys.stderr)


def check_legality(rules: GoBoard, state, client: GTPClient, tally: Tally) -> np.ndarray:
    """Compare every point's legality with GNU Go's ``is_legal``; return our legal mask."""
    mask = rules.legal_mask(state)
    playable, superko, new_hash = rules.point_moves(state)
    empty = state["board"][0] == EMPTY
    tally.superko += int(superko.sum())
    moves = int(state["move_count"][0])
    before_last = state["hash_history"][0, moves - 1] if moves else None
    tally.long_superko += int((superko[0] & (new_hash[0] != before_last)).sum())
    tally.suicides += int((empty & ~playable[0]).sum())
    color = format_color(int(state["to_play"][0]))
    for point in range(rules.num_points):
        theirs = client.send(f"is_legal {color} {format_vertex(point, rules.size)}") == "1"
        tally.checks += 1
        if theirs != bool(mask[0, point]):
            tally.disagree(
                f"legality of {color} {format_vertex(point, rules.size)}: ours {bool(mask[0, point])}, GNU Go "
                f"{theirs}\n{rules.to_text(state)}"
            )
    return mask[0]


def play_game(rules: GoBoard, client: GTPClient, rng: np.random.Generator, args, tally: Tally) -> None:
    """One random game played on both boards, compared move by move and scored at the end."""
    client.setup(rules.size, rules.komi)
    state = rules.initial_state(1)
    while not rules.is_terminal(state)[0] and tally.moves < args.moves:
        mask = check_legality(rules, state, client, tally)
        points = np.flatnonzero(mask[:-1])
        action = rules.pass_action if len(points) == 0 or rng.random() < args.pass_prob else rng.choice(points)
        stones_before = int((state["board"][0] != EMPTY).sum())
        color = int(state["to_play"][0])
        state = rules.step(state, [action])
        client.play(color, int(action), rules.size)
        tally.moves += 1
        tally.captures += stones_before + (action != rules.pass_action) - int((state["board"][0] != EMPTY).sum())
        theirs = client.list_stones(rules.size)
        if not np.array_equal(theirs, state["board"][0]):
            tally.disagree(
                f"board after {format_vertex(int(action), rules.size)}: ours\n{rules.to_text(state)}\n"
                f"GNU Go's\n{board_to_text(theirs, rules.size)}"
            )
    if rules.is_terminal(state)[0]:
        tally.games += 1
        ours = tuple(int(x[0]) for x in rules.area(state["board"]))
        reference = reference_area(state["board"][0], rules.size)
        if ours != reference:
            tally.disagree(f"area {ours} against the reference {reference}\n{rules.to_text(state)}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rules = GoBoard(args.size)
    rng = np.random.default_rng(args.seed)
    tally = Tally()
    start = time.perf_counter()
    try:
        with GTPClient(gnugo_command(10, args.gnugo)) as client:
            while tally.moves < args.moves:
                play_game(rules, client, rng, args, tally)
    except GTPError as error:
        print(f"error: GNU Go failed ({error}).", file=sys.stderr)
        return 2
    verdict = "all agree" if not tally.disagreements else f"{len(tally.disagreements)} DISAGREEMENTS"
    print(
        f"{args.size}x{args.size} seed {args.seed}: {tally.moves} moves, {tally.checks} legality checks, "
        f"{tally.games} finished games scored, {tally.captures} stones captured, {tally.suicides} suicide points, "
        f"{tally.superko} superko-forbidden points ({tally.long_superko} beyond a simple ko); {verdict} "
        f"({time.perf_counter() - start:.0f} s)"
    )
    return 0 if not tally.disagreements else 1


if __name__ == "__main__":
    Cli.run_script(main)

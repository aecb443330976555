"""Go matches and games from the command line: ``evaluate.py --game goN`` (``match_main``) and
``test.py --game goN`` (``show_main``), on Arena.py's players.

    python evaluate.py --game go5 --opponent gnugo|random|rollout|checkpoint [--level 10] [--games 200]
        [--komi 24.5] [--colors alternate|black|white] [--sgf-dir DIR] [--checkpoints A B ...] [--resign-threshold V]

plays the agent (each of ``--checkpoints``, or ``--checkpoint``; default ``pretrained/goN_policy_value.pt``)
against the opponent and prints, overall and by the agent's colour, the win rate with its 95% Wilson
interval, the mean margin, the resignations and the games not played with their reasons; it writes
``results.json`` in ``--out-dir``, an SGF file per game (``--sgf-dir``, default ``OUT/sgf/<model>/``) and,
for two or more checkpoints, ``win_rate.png``: the win rate over the checkpoints. ``rollout`` is the pure
rollout MCTS at equal time per move (the agent's mean search time so far); ``checkpoint`` an earlier
network (``--opponent-checkpoint``). With ``--resign-threshold V`` the agent resigns as gtp.py's does
(``Agent_Flags.ResignRule``), a lost game, so that a 9x9 match need not play out every lost game to its end.

    python test.py --game go5 [--opponent self|gnugo|random] [--colour black|white] [--resign-threshold V]

plays one game and prints every position in ASCII, then the final score (the agent resigning as in a match).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import tempfile
import time

import numpy as np
import torch

from engine.Search_Tree import N_ROW, W_ROW
from go.Agent_Flags import (
    RESIGN_MOVES,
    ResignRule,
    add_agent_flags,
    agent_from_args,
    go_name,
    resign_threshold,
    resolve_agent_flags,
)
from go.Arena import (
    COLOURS,
    GameRecord,
    GTPPlayer,
    RandomPlayer,
    RolloutPlayer,
    match_record,
    play_agent,
    play_game,
    run_match,
)
from go.Go_Board import BLACK, format_vertex
from go.Go_Game import go_game, go_play_game, record_actions
from go.Go_Net import expected_margin, load_go_model
from go.GTP_Client import GNUGO_INSTALL_HINT, GNUGO_PATH, gnugo_command
from go.Score_Check import plot_score_check, score_check, summary_lines
from Plot_Scatter import pyplot, save_figure
from run import Cli
from run.Run_IO import CheckpointError, OutputError, check_writable, find_checkpoint, read_json, write_json

OPPONENTS = ("gnugo", "random", "rollout", "checkpoint")


class TimedPlayer:
    """A player that measures its own mean seconds per move (``mean_seconds``), for equal-time opponents."""

    def __init__(self, player):
        self.player, self.name = player, player.name
        self.seconds, self.moves = 0.0, 0

    @property
    def mean_seconds(self) -> float | None:
        return self.seconds / self.moves if self.moves else None

    def genmove(self, state: dict):
        start = time.perf_counter()
        action = self.player.genmove(state)
        self.seconds += time.perf_counter() - start
        self.moves += 1
        return action

    def __getattr__(self, name):  # new_game, observe, close: the player's own
        return getattr(self.player, name)


class ResigningPlayer:
    """The agent (a ``SearchPlayer``: its ``last_value``) resigning by gtp.py's rule (``ResignRule``, never with
    ``threshold`` None): on 9x9 a lost agent never passes and fills its own eyes for 100 moves and more, and
    resigning ends such a game as a loss (``Arena.play_game`` records it as it records GNU Go's resignations)."""

    def __init__(self, player, threshold: float | None):
        self.player, self.name, self.rule = player, player.name, ResignRule(threshold)

    def new_game(self, game, colour: int) -> None:
        self.rule.new_game()
        self.player.new_game(game, colour)

    def genmove(self, state: dict):
        action = self.player.genmove(state)
        return self.rule.apply(int(state["to_play"][0]), action, self.player.last_value)

    def __getattr__(self, name):  # observe, close, last_value: the player's own
        return getattr(self.player, name)


class EqualTimeRollout(RolloutPlayer):
    """The rollout MCTS given, every move, the ``agent``'s mean seconds per move so far (0.1 s before any)."""

    def __init__(self, rng, agent: TimedPlayer):
        super().__init__(rng, seconds=0.1)
        self.agent = agent

    def genmove(self, state: dict):
        self.seconds = self.agent.mean_seconds or self.seconds
        return super().genmove(state)


# --------------------------------------------------------------------------- flags
def add_common_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", type=go_name, required=True, help="the board: go5, go7, go9 ...")
    parser.add_argument(
        "--checkpoint", type=Cli.nonempty_path, help="Go model (default: pretrained/goN_policy_value.pt)"
    )
    add_agent_flags(parser)
    parser.add_argument(
        "--resign-threshold",
        type=resign_threshold,
        metavar="V",
        help=f"the agent resigns, a lost game, once its value of its move (-1..1) has been below V for {RESIGN_MOVES} "
        "of its moves in a row, as gtp.py's --resign-threshold, e.g. -0.9 (default: never; lost 9x9 games are "
        "otherwise played on for 100 moves and more)",
    )
    Cli.add_device_flag(parser)
    parser.add_argument("--komi", type=Cli.nonnegative_float, help="komi (default: the board's; 24.5 on 5x5)")
    parser.add_argument("--level", type=Cli.int_in(0, 10, "GNU Go's levels"), default=10, help="GNU Go's level")
    parser.add_argument("--gnugo", type=Cli.nonempty_path, default=GNUGO_PATH, help="the GNU Go binary")
    parser.add_argument("--seed", type=Cli.seed, default=0, help="seed of the agent's and the opponents' choices")


def parse_match_args(argv=None) -> argparse.Namespace:
    parser = Cli.ArgumentParser(prog="evaluate.py", description=__doc__, formatter_class=Cli.HelpFormatter)
    add_common_flags(parser)
    parser.add_argument("--opponent", choices=OPPONENTS, default="random", help="who the agent plays")
    parser.add_argument("--opponent-checkpoint", type=Cli.nonempty_path, help="the network of --opponent checkpoint")
    parser.add_argument("--games", type=Cli.episodes, default=200, help="games per checkpoint")
    parser.add_argument("--colors", choices=COLOURS, default="alternate", help="the agent's colour")
    parser.add_argument("--checkpoints", type=Cli.nonempty_path, nargs="+", help="match each of these models in turn")
    parser.add_argument(
        "--sample-moves",
        type=Cli.int_in(0, 361),
        help="the game's first moves (after --opening) that the agent draws from its visit counts (default: 2 against "
        "a checkpoint, which plays like the agent, else 0: GNU Go, random and rollout vary their own play)",
    )
    parser.add_argument(
        "--opening",
        metavar="MOVES",
        help='every game\'s first moves, given to both players, e.g. "C3 C4" (Black first; an opening study: how '
        "the opponent answers each reply)",
    )
    parser.add_argument("--sgf-dir", type=Cli.nonempty_path, help="SGF files (default: OUT-DIR/sgf/<model>/)")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the match whose games are in the SGF folder (stopped, or to be given more --games): its "
        "games count and the match goes on from the next (the same settings, checked against match.json there; "
        "without it an earlier run's games are moved aside)",
    )
    parser.add_argument("--out-dir", type=Cli.nonempty_path, default="go_match_results", help="results and chart")
    parser.add_argument(
        "--empty-board",
        type=Cli.nonnegative_float,
        nargs="+",
        metavar="KOMI",
        help="instead of a match: the empty board at each of these komi (the network's value, the search's "
        "value and top moves at --sims, and the agent's greedy game against itself)",
    )
    parser.add_argument(
        "--score-games",
        type=Cli.episodes,
        metavar="N",
        help="instead of a match: N games of the agent against itself, every position's score head against the "
        "margin its game ended with (the mean absolute error, by stage, and the ownership head's accuracy; "
        "score_check.json and score_check.png in --out-dir; --sample-moves default 4)",
    )
    args = resolve_agent_flags(parser.parse_args(argv))
    if args.sample_moves is None:
        args.sample_moves = 4 if args.score_games else 2 if args.opponent == "checkpoint" else 0
    if args.score_games and args.empty_board:
        parser.error("--score-games and --empty-board are one or the other")
    for flag, value in (("--opening", args.opening), ("--resign-threshold", args.resign_threshold)):
        if value is not None and (args.score_games or args.empty_board):
            parser.error(f"{flag} is for matches, not --score-games or --empty-board")
    args.opening_actions = []
    if args.opening is not None:
        try:  # the game of the match: against the project's own players self-play's cap of 2 N^2 moves
            args.opening_actions = record_actions(match_game(args, {}, args.opponent), args.opening)
        except ValueError as exc:
            parser.error(f"--opening: {exc}")
    if args.opponent == "checkpoint" and not args.opponent_checkpoint:
        parser.error("--opponent checkpoint needs --opponent-checkpoint FILE")
    if args.checkpoint and args.checkpoints:
        parser.error("--checkpoint and --checkpoints are one or the other (--checkpoints A B ... lists every model)")
    return args


def check_gnugo(path: str) -> None:
    """Raise FileNotFoundError (one sentence, how to install it) when GNU Go cannot be run from ``path``."""
    if not (os.path.isfile(path) and os.access(path, os.X_OK)) and shutil.which(path) is None:
        raise FileNotFoundError(f"GNU Go was not found at {path}: {GNUGO_INSTALL_HINT}.")


def agent_checkpoint(path: str | None, size: int) -> str:
    """``path``, or by default the board's model file, here or in pretrained/ (none: CheckpointError, which
    says how to train one; a cube's solver flags mean nothing on a board)."""
    name = f"go{size}_policy_value.pt"
    remedy = f"train one with 'python main.py --game go{size}' (it writes ./{name}) or pass --checkpoint PATH"
    return find_checkpoint(path, name, remedy)


def load_agent_model(path: str | None, size: int, device=None):
    """The Go network of ``path`` (default: ``agent_checkpoint``'s) on ``device`` (None: the CPU)."""
    return load_go_model(agent_checkpoint(path, size), size, device or "cpu")


def match_game(args: argparse.Namespace, options: dict, opponent: str):
    """The game of a match or a shown game: against GNU Go (another engine) the game of real play
    (``Go_Game.go_play_game``: two passes end it, as over GTP, so that evaluate.py measures what a GTP
    controller sees); between the project's own players (the agent itself, random, rollout, a checkpoint)
    self-play's cap of 2 N^2 moves, which bounds two programs that never pass. ``options``: the agent
    network's ``GoNet.game_options``."""
    make = go_play_game if opponent == "gnugo" else go_game
    return make(args.game, args.komi, **options)


def make_opponent(args: argparse.Namespace, rng: np.random.Generator, agent: TimedPlayer, first_game: int = 0):
    """The match's opponent; GNU Go seeded for each game from ``first_game`` on (``gnugo_player``)."""
    if args.opponent == "gnugo":
        return gnugo_player(args, first_game)
    if args.opponent == "random":
        return RandomPlayer(rng)
    if args.opponent == "rollout":
        return EqualTimeRollout(rng, agent)
    model = load_go_model(args.opponent_checkpoint, args.game, args.device)
    name = os.path.basename(args.opponent_checkpoint)
    return agent_from_args(model, args, name=name, sample_moves=sampled_until(args), rng=rng, device=args.device)


def sampled_until(args: argparse.Namespace) -> int:
    """The move count below which a searching player draws its move from the visits: ``--sample-moves``
    moves after the given opening (its moves count in the state's move count)."""
    return args.sample_moves + len(args.opening_actions)


# --------------------------------------------------------------------------- a match
def margin_text(s: dict) -> str:
    """The mean area margin of the games counted out (``n/a`` when every game ended by resignation)."""
    return "n/a" if s["mean_margin"] is None else f"{s['mean_margin']:+.1f}"


def summary_line(what: str, s: dict) -> str:
    low, high = s["ci95"]
    if not s["played"]:
        return f"{what:9s}    0 played: no win rate"
    return (
        f"{what:9s} {s['played']:4d} played: {s['wins']:4d} W {s['losses']:4d} L {s['draws']:3d} D | win "
        f"{100 * s['win_rate']:5.1f}% (95% CI {100 * low:.0f}-{100 * high:.0f}%) | margin {margin_text(s)} | "
        f"resigned: agent {s['agent_resigned']}, opponent {s['opponent_resigned']}"
    )


def sgf_dirs(args: argparse.Namespace, paths: list[str]) -> list[str]:
    """Each model's SGF folder: ``OUT-DIR/sgf/<stem>/`` (``--sgf-dir`` itself) for one model; for several,
    ``<NN>_<stem>/`` inside it, numbered in the order given, so that two models of one file name (run_a/x.pt,
    run_b/x.pt) never write the same ``game_NNNN.sgf``."""
    stems = [os.path.splitext(os.path.basename(path))[0] for path in paths]
    if len(paths) == 1:
        return [args.sgf_dir or os.path.join(args.out_dir, "sgf", stems[0])]
    base = args.sgf_dir or os.path.join(args.out_dir, "sgf")
    return [os.path.join(base, f"{index + 1:02d}_{stem}") for index, stem in enumerate(stems)]


def check_outputs(args: argparse.Namespace, sgf_folders: list[str]) -> None:
    """OutputError (one sentence) unless every file the matches write can be written, before the first game:
    results.json, the chart with several models, each SGF folder."""
    check_writable(os.path.join(args.out_dir, "results.json"))
    if len(sgf_folders) > 1:
        check_writable(os.path.join(args.out_dir, "win_rate.png"))
    for folder in sgf_folders:  # (an earlier run's games in it are moved aside: archive_old_games)
        check_writable(folder, folder=True)
        check_writable(os.path.join(folder, MATCH_FILE))


def game_files(folder: str) -> list[str]:
    """The names of the match games' SGF files in ``folder`` (``game_0001.sgf`` ...), in order."""
    return sorted(name for name in os.listdir(folder) if re.fullmatch(r"game_\d{4,}\.sgf", name))


def archive_old_games(folder: str) -> str | None:
    """Move an earlier run's ``game_NNNN.sgf`` files (and its ``match.json``) of ``folder`` into
    ``folder/replaced-<UTC time>-*/``, so that the folder holds this run's games only (a rerun of fewer games
    left the old extra ones beside the new results); the archive's path, or None when there was none."""
    old = game_files(folder)
    if not old:
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    archive = tempfile.mkdtemp(prefix=f"replaced-{stamp}-", dir=folder)  # a new folder even within one second
    for name in old + ([MATCH_FILE] if os.path.isfile(os.path.join(folder, MATCH_FILE)) else []):
        os.replace(os.path.join(folder, name), os.path.join(archive, name))
    return archive


#: The settings of the match whose games an SGF folder holds (``match_settings``), which ``--resume`` checks.
MATCH_FILE = "match.json"
#: Settings ``match_settings`` writes only when given, so that an earlier match's ``match.json`` (written before
#: they existed) still resumes; a match.json that holds one and settings without it are two matches all the same.
OPTIONAL_SETTINGS = ("resign_threshold",)


def file_sha256(path: str) -> str:
    with open(path, "rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def match_settings(args: argparse.Namespace, path: str, komi: float) -> dict:
    """What makes a match's games the games they are: the agent's network (its file's SHA-256) and search, the
    opponent (GNU Go's level, and that it is seeded), komi, colours, opening and seed, and the agent's resignation
    threshold when given (``OPTIONAL_SETTINGS``); not how many games, nor where the files go."""
    opponent = {"opponent": args.opponent}
    if args.opponent == "gnugo":
        # Seeded game by game (``gnugo_player``): a match.json without the key is an earlier match's, whose GNU Go
        # drew from the clock, and --resume refuses to add seeded games to it.
        opponent.update(level=args.level, gnugo_seeded=True)
    if args.opponent == "checkpoint":
        opponent["opponent_sha256"] = file_sha256(args.opponent_checkpoint)
    optional = {key: getattr(args, key) for key in OPTIONAL_SETTINGS if getattr(args, key) is not None}
    return {
        "board": args.game, "komi": komi, "checkpoint_sha256": file_sha256(path), "sims": args.sims,
        "c_puct": args.c_puct, "symmetric": args.symmetric, "precision": args.precision, **opponent,
        "colors": args.colors, "sample_moves": args.sample_moves, "opening": args.opening_actions, "seed": args.seed,
        **optional,
    }  # fmt: skip


def earlier_games(folder: str, settings: dict, games: int, size: int) -> list[GameRecord]:
    """``--resume``: the games already played in ``folder`` by the match of ``settings`` (none in a new or
    empty folder); ValueError (a sentence) where they are another match's, not numbered 1, 2, ... without a gap,
    unreadable, or more than ``games``."""
    names = game_files(folder) if os.path.isdir(folder) else []
    if not names:
        return []
    redo = "; start without --resume to move them aside"
    settings_path = os.path.join(folder, MATCH_FILE)
    if not os.path.isfile(settings_path):
        raise ValueError(f"--resume: {folder} holds games but no {MATCH_FILE} to say whose match they are{redo}")
    try:
        played = read_json(settings_path)
    except (OSError, ValueError) as exc:
        raise ValueError(f"--resume: {settings_path} cannot be read ({exc}){redo}") from None
    keys = [*settings, *(key for key in OPTIONAL_SETTINGS if key not in settings)]
    changed = [key for key in keys if not isinstance(played, dict) or played.get(key) != settings.get(key)]
    if changed:
        was = played.get(changed[0]) if isinstance(played, dict) else None
        raise ValueError(f"--resume: the games in {folder} were played with {changed[0]} {was}, not "
                         f"{settings.get(changed[0])}{redo}")  # fmt: skip
    expected = [f"game_{index + 1:04d}.sgf" for index in range(len(names))]
    if names != expected:
        gap = next(want for want, have in zip(expected, names) if want != have)
        raise ValueError(f"--resume: {folder} has no {gap} among its {len(names)} games{redo}")
    if len(names) > games:
        raise ValueError(f"--resume: {folder} holds {len(names)} games, more than --games {games}")
    records = []
    for name in names:
        try:
            with open(os.path.join(folder, name), "rb") as file:
                records.append(match_record(file.read(), size))
        except (OSError, ValueError) as exc:
            raise ValueError(f"--resume: {os.path.join(folder, name)} is no game of this match ({exc}){redo}") from None
    return records


def json_safe(value):
    """``value`` with every NaN or infinite float as None: JSON has no NaN (a colour with no game played)."""
    if isinstance(value, float):
        return value if np.isfinite(value) else None
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value


def match_one(args: argparse.Namespace, path: str, sgf_dir: str, settings: dict, earlier: list[GameRecord]) -> dict:
    """The match of the model ``path`` (None: the board's model file, here or in pretrained/), its games in
    ``sgf_dir`` after the ``earlier`` ones there (``--resume``), its ``match_settings`` written beside them:
    printed, and its summaries (overall, as Black, as White)."""
    path = agent_checkpoint(path, args.game)
    model = load_go_model(path, args.game, args.device)
    game = match_game(args, model.game_options, args.opponent)
    # Resumed: a fresh generator for the rest (the same games as one run where no choice is random).
    rng = np.random.default_rng([args.seed, len(earlier)] if earlier else args.seed)
    os.makedirs(sgf_dir, exist_ok=True)
    player = agent_from_args(model, args, sample_moves=sampled_until(args), rng=rng, device=args.device)
    agent = TimedPlayer(ResigningPlayer(player, args.resign_threshold))
    opponent = make_opponent(args, rng, agent, first_game=len(earlier))
    archive = None if args.resume else archive_old_games(sgf_dir)
    if archive is not None:
        print(f"  an earlier run's SGF files moved to {archive}/")
    write_json(os.path.join(sgf_dir, MATCH_FILE), settings)
    opening = args.opening_actions
    given = " ".join(format_vertex(a, game.size) for a in opening)
    start = f", from the opening {given}" if opening else ""
    if args.resign_threshold is not None:
        start += f", the agent resigning below {args.resign_threshold:g}"
    print(f"{path} ({args.sims} simulations) against {opponent.name}, komi {game.komi:g}, {args.games} games{start}:")
    if earlier:
        print(f"  resumed: {len(earlier)} games already played in {sgf_dir}/, {args.games - len(earlier)} to play")
    result = run_match(game, agent, opponent, args.games, args.colors, sgf_dir, opening=opening, earlier=earlier)
    rows = {"all": result.summary(), "black": result.summary(BLACK), "white": result.summary(-BLACK)}
    for what, summary in rows.items():
        if summary["games"]:
            print("  " + summary_line(f"as {what}" if what != "all" else "overall", summary))
    for reason in rows["all"]["not_played"]:
        print(f"  not played: {reason}")
    openings = {} if opening else opening_counts(result, game.size)  # with a given opening nobody chose them
    if openings:
        print("  the agent's first moves as Black: " + ", ".join(f"{v} {n}" for v, n in openings.items()))
    distinct = {what: distinct_games(result, game.size, c) for what, c in (("black", BLACK), ("white", -BLACK))}
    for what, games in distinct.items():
        if games:
            print(f"  as {what}, {len(games)} distinct game(s): " + "; ".join(
                f"{g['games']}x {' '.join(g['moves'].split()[:DISTINCT_SHOWN_MOVES])} ... {g['result']}"
                for g in games[:DISTINCT_SHOWN]) + ("; ..." if len(games) > DISTINCT_SHOWN else ""))  # fmt: skip
    print(f"  SGF files in {sgf_dir}/; agent {agent.mean_seconds or 0:.3f} s a move")
    for what in distinct:
        rows[what]["distinct_games"] = distinct[what]
    summary = {"checkpoint": path, "opponent": opponent.name, "komi": game.komi, "opening": given or None}
    return {**summary, "openings": openings, **rows}


#: How many distinct games a match prints per colour, and how many of each one's first moves.
DISTINCT_SHOWN, DISTINCT_SHOWN_MOVES = 6, 6


def distinct_games(result, size: int, colour: int) -> list[dict]:
    """The distinct games (identical move records counted once) that the agent played as ``colour``, most
    frequent first: each one's moves (``C3 C4 B4 ...``), how many games played it and its result. GNU Go at
    a level varies its play little, so a match's games are few distinct ones, and which replies of the
    opponent decide them is what these show."""
    counts: dict[tuple, list] = {}
    for record, agent in zip(result.records, result.agent_colours):
        if agent == colour and record.not_played is None:
            key = (tuple(record.moves), record.result_text())
            counts.setdefault(key, [0])[0] += 1
    order = sorted(counts.items(), key=lambda item: -item[1][0])
    return [
        {"moves": " ".join(format_vertex(int(a), size) for a in moves), "games": n[0], "result": text}
        for (moves, text), n in order
    ]


def opening_counts(result, size: int) -> dict[str, int]:
    """How often the agent opened on each point as Black (most frequent first; the centre is 5x5's winning
    move), over the games with a first move."""
    firsts = [r.moves[0] for r, c in zip(result.records, result.agent_colours) if c == BLACK and r.moves]
    actions, counts = np.unique(firsts, return_counts=True)
    order = np.argsort(-counts, kind="stable")
    return {format_vertex(int(actions[i]), size): int(counts[i]) for i in order}


def checkpoint_label(path: str, index: int) -> str:
    """The x label of a checkpoint in the chart: its iteration (``_iterNNNN``) if named so, else ``final``
    for a run's own model file (``goN_policy_value.pt``), else its index."""
    name = os.path.basename(path)
    found = re.search(r"_iter(\d+)", name)
    if found:
        return str(int(found.group(1)))
    return "final" if re.fullmatch(r"go\d+_policy_value\.pt", name) else str(index + 1)


def plot_win_rates(results: list[dict], path: str) -> None:
    """Win rate with its 95% interval over the checkpoints (one line overall, one per colour played)."""
    plt = pyplot()
    labels = [checkpoint_label(r["checkpoint"], i) for i, r in enumerate(results)]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for what in ("all", "black", "white"):
        if not any(r[what]["played"] for r in results):
            continue  # a colour the agent never had: no line, no legend entry
        rates = [100 * r[what]["win_rate"] if r[what]["played"] else np.nan for r in results]
        errors = np.clip([[rate - 100 * r[what]["ci95"][0] for rate, r in zip(rates, results)],
                          [100 * r[what]["ci95"][1] - rate for rate, r in zip(rates, results)]], 0, None)  # fmt: skip
        # (clipped: a Wilson bound can round to a hair inside a win rate of 0 or 1, which matplotlib refuses)
        ax.errorbar(labels, rates, yerr=errors, marker="o", capsize=3, label=what)
    ax.set(xlabel="checkpoint (iteration)", ylabel="agent's win rate (%)", ylim=(0, 100))
    ax.set_title(f"against {results[0]['opponent']}, komi {results[0]['komi']:g}")
    ax.grid(alpha=0.3)
    ax.legend()
    save_figure(fig, path)


def empty_board(
    model, size: int, komi: float, sims: int, c_puct: float, symmetric: bool = False, precision: str = "fp32"
) -> dict:
    """What the agent thinks of the empty board at ``komi``, all from Black's side: the network's value,
    the search's (the mean return of its ``sims`` simulations) with the root's visit shares, and the area
    margin and winner of the agent's greedy game against itself. A network without the komi input (the
    seed's planes) gives the same value at every komi, and only the self-play game's margin says at which
    komi its play wins; one with it (``--komi-input``) values each komi, and with a score head
    (``network_score``, the score belief's where it has one) expects a margin. ``network_value`` is the
    win value (with a score head, not the search's mix of win and score)."""
    game = go_game(size, komi, **model.game_options)
    state = game.initial_state(1)
    with torch.inference_mode():
        obs = torch.from_numpy(game.encode(game.eval_input(state)))
        heads = model.heads(obs)  # logits and value; score and ownership with score heads
    value = heads["value"]
    agent = play_agent(model, sims, c_puct, symmetric, precision=precision)
    agent.new_game(game, BLACK)
    stats = agent.search.search(state, game.legal_mask(state)).root_stats()[0]
    shares = stats[N_ROW] / stats[N_ROW].sum()
    top = np.argsort(-shares, kind="stable")[:3]
    record = play_game(game, agent, agent)
    return {
        "komi": komi,
        "network_value": float(value.reshape(-1)[0]),
        **({"network_score": float(expected_margin(heads, size)[0])} if "score" in heads else {}),
        "search_value": float(stats[W_ROW].sum() / stats[N_ROW].sum()),
        "top_moves": {format_vertex(int(a), size): round(float(shares[a]), 3) for a in top},
        "selfplay_margin": record.score,
        "selfplay_result": record.result_text(),
    }


def empty_board_main(args: argparse.Namespace) -> dict:
    """``--empty-board KOMI ...``: ``empty_board`` at each komi, printed."""
    model = load_agent_model(args.checkpoint, args.game, args.device)
    print(f"{args.checkpoint or 'the shipped model'}, the empty {args.game}x{args.game} board, Black to move:")
    rows = []
    for komi in args.empty_board:
        row = empty_board(model, args.game, komi, args.sims, args.c_puct, args.symmetric, args.precision)
        moves = ", ".join(f"{v} {100 * share:.0f}%" for v, share in row["top_moves"].items())
        score = f", expected margin {row['network_score']:+.1f}" if "network_score" in row else ""
        print(f"  komi {komi:g}: network value {row['network_value']:+.3f}{score}, "
              f"search value {row['search_value']:+.3f} "
              f"({args.sims} simulations; {moves}); its game against itself: {row['selfplay_result']}")  # fmt: skip
        rows.append(row)
    return {"checkpoint": args.checkpoint, "empty_board": rows}


def score_check_main(args: argparse.Namespace) -> int:
    """``--score-games N``: ``Score_Check.score_check``, printed, with its JSON and chart in ``--out-dir``."""
    paths = [os.path.join(args.out_dir, name) for name in ("score_check.json", "score_check.png")]
    for path in paths:
        check_writable(path)  # before the games
    path = agent_checkpoint(args.checkpoint, args.game)
    model = load_go_model(path, args.game, args.device)
    print(f"{path}: the score head against {args.score_games} games against itself ({args.sims} simulations):")
    result = score_check(
        model, args.game, args.komi, args.score_games, args.sims, args.c_puct, symmetric=args.symmetric,
        sample_moves=args.sample_moves, rng=np.random.default_rng(args.seed), device=args.device,
        precision=args.precision, progress=Cli.show_progress(None),
    )  # fmt: skip
    for line in summary_lines(result):
        print("  " + line)
    write_json(paths[0], {"checkpoint": path, **result})
    plot_score_check(result, paths[1])
    print(f"Results in {paths[0]}, chart {paths[1]}.")
    return 0


def match_main(argv=None) -> int:
    args = parse_match_args(argv)
    torch.set_num_threads(1)  # one search at a time: batch-1 forwards are fastest on one thread
    torch.manual_seed(args.seed)
    try:
        args.device = Cli.resolve_device(args.device)
        if args.empty_board:
            check_writable(os.path.join(args.out_dir, "empty_board.json"))  # before the searches
            write_json(os.path.join(args.out_dir, "empty_board.json"), empty_board_main(args))
            return 0
        if args.score_games:
            return score_check_main(args)
        if args.opponent == "gnugo":
            check_gnugo(args.gnugo)
        paths = [agent_checkpoint(path, args.game) for path in (args.checkpoints or [args.checkpoint])]
        folders = sgf_dirs(args, paths)
        check_outputs(args, folders)
        komi = match_game(args, {}, args.opponent).komi
        settings = [match_settings(args, path, komi) for path in paths]
        earlier = [  # every folder checked before the first game
            earlier_games(folder, done, args.games, args.game) if args.resume else []
            for folder, done in zip(folders, settings)
        ]
        results = [match_one(args, *todo) for todo in zip(paths, folders, settings, earlier)]
        write_json(os.path.join(args.out_dir, "results.json"), json_safe(results))
        if len(results) > 1:
            plot_win_rates(results, os.path.join(args.out_dir, "win_rate.png"))
    except (CheckpointError, OutputError, FileNotFoundError, ValueError, Cli.DeviceError) as exc:
        return Cli.fail(exc)
    print(f"Results in {os.path.join(args.out_dir, 'results.json')}.")
    unplayed = [r["checkpoint"] for r in results if not r["all"]["played"]]
    if unplayed:  # a match of no game measured nothing: not a success, whatever results.json holds
        reasons = results[0]["all"]["not_played"][:1] if results else []
        why = f" (the first: {reasons[0]})" if reasons else ""
        return Cli.fail(f"no game of {', '.join(unplayed)} was played{why}.")
    return 0


# --------------------------------------------------------------------------- one game, shown
def parse_show_args(argv=None) -> argparse.Namespace:
    parser = Cli.ArgumentParser(prog="test.py", description=__doc__, formatter_class=Cli.HelpFormatter)
    add_common_flags(parser)
    parser.add_argument("--opponent", choices=("self", "gnugo", "random"), default="self", help="who the agent plays")
    parser.add_argument("--colour", choices=("black", "white"), default="black", help="the agent's colour")
    return resolve_agent_flags(parser.parse_args(argv))


def show_main(argv=None) -> int:
    """``test.py --game goN``: one game, every position printed, then the result."""
    args = parse_show_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    try:
        args.device = Cli.resolve_device(args.device)
        if args.opponent == "gnugo":
            check_gnugo(args.gnugo)
        model = load_agent_model(args.checkpoint, args.game, args.device)
    except (CheckpointError, FileNotFoundError, Cli.DeviceError) as exc:
        return Cli.fail(exc)
    game = match_game(args, model.game_options, args.opponent)
    rng = np.random.default_rng(args.seed)
    player = agent_from_args(model, args, rng=rng, device=args.device)
    agent = ShowingPlayer(ResigningPlayer(player, args.resign_threshold), game)
    others = {"self": lambda: agent, "random": lambda: RandomPlayer(rng), "gnugo": lambda: gnugo_player(args)}
    other = agent if args.opponent == "self" else ShowingPlayer(others[args.opponent](), game)
    black, white = (agent, other) if args.colour == "black" else (other, agent)
    print(f"{black.name} (Black) against {white.name} (White), komi {game.komi:g}:\n")
    record = play_game(game, black, white)
    other.close()
    state = game.initial_state(1)
    for action in record.moves:
        state = game.step(state, np.array([action]))
    print(game.to_text(state))
    score = "" if record.score is None else f", area score {record.score:+g} for Black after komi"
    why = f" (not played: {record.not_played})" if record.not_played else ""
    print(f"Result: {record.result_text()} after {len(record.moves)} moves{score}{why}")
    return 0


def gnugo_player(args: argparse.Namespace, first_game: int = 0) -> GTPPlayer:
    """GNU Go at ``--level``, each game seeded from ``--seed`` and the game's index from ``first_game`` on
    (``Arena.game_seed``), so that a match, or test.py's one game, plays the same games again."""
    command = gnugo_command(args.level, args.gnugo)
    return GTPPlayer(command, name=f"gnugo-{args.level}", seed=args.seed, first_game=first_game)


class ShowingPlayer(TimedPlayer):
    """A player whose every move is printed with the position before it and its own value estimate."""

    def __init__(self, player, game):
        super().__init__(player)
        self.game = game

    def genmove(self, state: dict):
        action = super().genmove(state)
        move = "resigns" if action is None else format_vertex(action, self.game.size)
        colour = "Black" if state["to_play"][0] == BLACK else "White"
        print(self.game.to_text(state))
        value = getattr(self.player, "last_value", None)
        print(f"{colour} ({self.name}): {move}" + ("" if value is None else f"  value {value:+.2f}") + "\n")
        return action

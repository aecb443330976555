"""The Go window of the GUI: a person plays the agent (``python PyGame.py --game go5``).

    python PyGame.py --game go5 [--checkpoint FILE] [--colour white] [--komi 25.5] [--sims 200]
    SDL_VIDEODRIVER=dummy python PyGame.py --game go5 --moves "C3 D4 pass" --screenshot docs/gui_go5.png \\
        --quit-when-done

Click a point to place a stone; the buttons (keys) Pass (P), Resign, Undo (U: takes back your last move and
the agent's reply), New game (N), Owners (O: the ownership overlay on or off); "Black" / "White" choose your
colour and "-" / "+" the komi (both for the next game; at once while no move is played). The window shows the
stones captured by each side, the agent's value (the mean return of its move, from its side: +1 a sure win)
and its top moves by share of the root visits, and at the end the area score (Tromp-Taylor) with every empty
point shaded by the colour whose area it is. A network with score and ownership heads also gives the
agent's expected final margin in points (from its side, after komi) on the current position, and the
overlay: a square on every point, black or white by whose area the network expects it to end, the more
opaque the surer (``Go_Estimate``); other networks have neither, and O says so. A network with a komi
input sees the komi set here. The agent searches in a worker thread (``Go_Play``): the window keeps drawing
and reacting, and Undo, Resign and New game stop its search at once.

The agent is PUCT over the Go network (``Go_Net``: ``--checkpoint``, else ``go{N}_policy_value.pt`` in ./
or pretrained/); without one it is a pure rollout MCTS (uniform priors, random playouts) and the window
says so. ``--moves`` plays a game record from the empty board (Black first, both colours) as the window
opens; then the agent moves if it is its turn. An illegal or malformed move, a bad flag or a bad
``--checkpoint``: one sentence on stderr and exit status 2. ``--quit-when-done`` (implied by a scripted run
without a display) exits once the agent has moved, printing one line: the moves, the result, the captures,
the agent and its value and expected margin. ``--ownership`` opens the window with the overlay on (as O).
The window: ``GoApp`` (state and events) and the ``draw_*`` functions (rendering only); the board is
``Go_View.GoView``.
"""

from __future__ import annotations

import argparse
import os
import time

import pygame

from go.Agent_Flags import DEFAULT_C_PUCT, add_agent_flags, default_simulations, go_name, resolve_agent_flags
from go.Go_Board import BLACK, WHITE, format_vertex, parse_vertex
from go.Go_Game import DEFAULT_HISTORY, go_play_game
from go.Go_Play import COLOUR_NAMES, GoMatch, search_agent
from gui.Go_Estimate import Estimate, position_estimate
from gui.Go_View import GoView
from gui.Gui_Theme import (
    ACCENT,
    BG,
    DIM,
    ERROR,
    OK,
    PANEL,
    TEXT,
    WARN,
    Button,
    draw_button,
    draw_spinner,
    draw_text,
    fit_text,
    save_png,
)
from gui.Gui_Window import Window
from run import Cli
from run.Cli import DeviceError, add_device_flag, fail, resolve_device
from run.Run_IO import CheckpointError, OutputError, check_writable, find_checkpoint

WIDTH, HEIGHT = 960, 680  # the cube window's size
KOMI_STEP = 1.0
BOARD_RECT = pygame.Rect(30, 84, 560, 560)
PANEL_X, PANEL_W = 620, 310


def _button_rects() -> dict[str, tuple[str, pygame.Rect]]:
    """name -> (label, rectangle) of every button of the side panel."""
    x, w = PANEL_X, 96
    return {
        "Pass": ("Pass", pygame.Rect(x, 90, w, 40)),
        "Resign": ("Resign", pygame.Rect(x + 104, 90, w, 40)),
        "Undo": ("Undo", pygame.Rect(x + 208, 90, w, 40)),
        "New": ("New game", pygame.Rect(x, 140, 2 * w + 8, 40)),
        "Owners": ("Owners", pygame.Rect(x + 208, 140, w, 40)),
        "Black": ("Black", pygame.Rect(x, 222, w, 36)),
        "White": ("White", pygame.Rect(x + 104, 222, w, 36)),
        "komi-": ("-", pygame.Rect(x, 296, 40, 36)),
        "komi+": ("+", pygame.Rect(x + 120, 296, 40, 36)),
    }


class GoApp(Window):
    """The Go window's state and logic (``step_frame`` = events, ``update``, ``draw``, flip, as ``PyGame.App``).
    ``model``: a ``Go_Net.GoNet`` (None: the rollout MCTS agent), ``model_text``: the header's line about it.
    ``buttons`` (name -> Button) and ``view`` are public so that tests can click."""

    def __init__(self, size: int, model=None, model_text: str = "", sims: int | None = None, *,
                 human: int = BLACK, komi: float | None = None, c_puct: float = DEFAULT_C_PUCT, seed: int | None = None,
                 device=None, surface: pygame.Surface | None = None, symmetric: bool = False,
                 precision: str = "fp32"):  # fmt: skip
        pygame.display.init()
        pygame.font.init()
        self.screen = surface if surface is not None else pygame.display.set_mode((WIDTH, HEIGHT))
        pygame.display.set_caption(f"Go {size}x{size} - AlphaZero agent")
        self.clock = pygame.time.Clock()
        self.fonts = {name: pygame.font.Font(None, px) for name, px in (("title", 34), ("big", 28), ("normal", 24))}
        self.fonts["small"] = pygame.font.Font(None, 20)
        sims = default_simulations(size) if sims is None else sims
        self.size, self.model, self.model_text, self.sims = size, model, model_text, sims
        self.game_options = {"history": DEFAULT_HISTORY} if model is None else model.game_options
        agent = search_agent(model, sims, c_puct, device, seed, symmetric, precision)
        self.match = GoMatch(self._game(komi), human, agent)
        self.choice = {"colour": human, "komi": self.match.game.komi}  # the next game's settings
        self.view = GoView(BOARD_RECT, size, self.fonts)
        self.buttons = {name: Button(name, label, rect) for name, (label, rect) in _button_rects().items()}
        self.message = ("Your move." if human == BLACK else "The agent opens.", TEXT)
        self.show_ownership = False  # the overlay (O)
        self._estimate: tuple[dict, Estimate | None] | None = None  # (the state it is of, its estimate)
        self.elapsed = 0.0  # drives the spinner
        self.running = True

    def _game(self, komi: float | None):
        return go_play_game(self.size, komi=komi, **self.game_options)

    def say(self, text: str, color=TEXT) -> None:
        self.message = (text, color)

    def estimate(self) -> Estimate | None:
        """The network's ``Estimate`` of the current position (None without score heads): one forward per
        position, kept until the position changes, since the window asks every frame."""
        state = self.match.state
        if self._estimate is None or self._estimate[0] is not state:  # holding the state keeps its id unique
            self._estimate = (state, position_estimate(self.model, self.match.game, state))
        return self._estimate[1]

    # -- actions ---------------------------------------------------------------------------------
    def human_turn(self) -> bool:
        return not self.match.over and self.match.to_play == self.match.human

    def button_enabled(self, name: str) -> bool:
        if name in ("Pass", "Resign"):
            return self.human_turn() or (name == "Resign" and self.match.thinking)
        return True

    def apply_move(self, action: int) -> None:
        """The person plays ``action`` (a point or the pass) if it is their turn and legal."""
        if not self.human_turn():
            self.say(
                "The game is over: New game starts another." if self.match.over else "The agent is thinking.", WARN
            )
            return
        try:
            self.match.play(action)
        except ValueError as exc:
            self.say(str(exc), WARN)
            return
        self.say(f"You played {format_vertex(action, self.size)}.")
        self._say_result()

    def _say_result(self) -> None:
        result = self.match.result
        if result is None:
            return
        won = result.winner == self.match.human
        self.say(f"Game over: {result.text()}. " + ("You win!" if won else "The agent wins."), OK if won else WARN)

    def undo(self) -> None:
        if self.match.undo():
            self.say("Took back your last move.")
        else:
            self.say("Nothing of yours to take back.", WARN)

    def new_game(self) -> None:
        self.match.restart(self._game(self.choice["komi"]), self.choice["colour"])
        colour = COLOUR_NAMES[self.match.human]
        self.say(f"New game: you play {colour}, komi {self.match.game.komi:g}.")

    def choose(self, colour: int | None = None, komi_step: float = 0.0) -> None:
        """Set the next game's colour or komi; applied at once while the game has no move."""
        if colour is not None:
            self.choice["colour"] = colour
        # Bounded as the --komi flag and GTP's `komi` are (Cli.MAX_KOMI): past it every game is decided at the start.
        self.choice["komi"] = min(max(self.choice["komi"] + komi_step, -Cli.MAX_KOMI), Cli.MAX_KOMI)
        if not self.match.moves:
            self.new_game()
        else:
            self.say(f"Next game: {COLOUR_NAMES[self.choice['colour']]}, komi {self.choice['komi']:g} (New game).")

    def activate(self, name: str) -> None:
        if not self.button_enabled(name):
            self.say("Wait for your turn.", WARN)
            return
        actions = {
            "Pass": lambda: self.apply_move(self.size * self.size),
            "Resign": self.resign,
            "Undo": self.undo,
            "New": self.new_game,
            "Owners": self.toggle_ownership,
            "Black": lambda: self.choose(colour=BLACK),
            "White": lambda: self.choose(colour=WHITE),
            "komi-": lambda: self.choose(komi_step=-KOMI_STEP),
            "komi+": lambda: self.choose(komi_step=KOMI_STEP),
        }
        actions[name]()

    def toggle_ownership(self) -> None:
        if not getattr(self.model, "has_score", False):
            why = "There is no network" if self.model is None else "This network has no ownership head"
            self.say(f"{why}: no ownership map.", WARN)
            return
        self.show_ownership = not self.show_ownership
        on = "Ownership map on: each point's square in the colour expected to own it, fainter where unsure."
        self.say(on if self.show_ownership else "Ownership map off.")

    def resign(self) -> None:
        self.match.resign(self.match.human)
        self._say_result()

    # -- events and time -------------------------------------------------------------------------
    def handle_key(self, event: pygame.event.Event) -> None:
        keys = {pygame.K_p: "Pass", pygame.K_u: "Undo", pygame.K_n: "New", pygame.K_o: "Owners"}
        if event.key in keys:
            self.activate(keys[event.key])

    def update(self, dt: float) -> None:
        self.elapsed += dt
        before = len(self.match.moves)
        error = self.match.update()
        if error is not None:
            self.say(f"The agent's search failed: {error}", ERROR)
        elif len(self.match.moves) > before:
            self.say(f"The agent played {format_vertex(self.match.moves[-1], self.size)}. Your move.")
            self._say_result()

    def hover_point(self) -> int | None:
        """The legal point under the mouse on the person's turn (drawn as a ring), else None."""
        point = self.view.hit(pygame.mouse.get_pos()) if pygame.mouse.get_focused() else None
        return point if point is not None and self.human_turn() and self.match.legal(point) else None

    def draw(self, surface: pygame.Surface) -> None:
        surface.fill(BG)
        match = self.match
        draw_header(surface, self)
        last = match.moves[-1] if match.moves else None
        territory = match.ownership() if match.result is not None and match.result.score is not None else None
        estimate = self.estimate() if self.show_ownership else None
        owners = estimate.ownership if estimate is not None else None
        self.view.draw(surface, match.state["board"][0], self.hover_point(), last_move=last, territory=territory,
                       ownership=owners)  # fmt: skip
        draw_controls(surface, self)
        draw_info(surface, self)
        draw_status(surface, self)

    def close(self) -> None:
        self.match.close()
        pygame.quit()


# --------------------------------------------------------------------------- rendering (reads state only)
def draw_header(surface: pygame.Surface, app: GoApp) -> None:
    match = app.match
    title = f"Go {app.size}x{app.size} - you play {COLOUR_NAMES[match.human]}, komi {match.game.komi:g}"
    draw_text(surface, app.fonts["title"], title, (30, 18))
    color = DIM if app.model is not None else WARN
    draw_text(surface, app.fonts["small"], fit_text(app.fonts["small"], app.model_text, WIDTH - 60), (30, 52), color)


def draw_controls(surface: pygame.Surface, app: GoApp) -> None:
    small, big = app.fonts["small"], app.fonts["big"]
    for button in app.buttons.values():
        chosen = button.name in ("Black", "White") and app.choice["colour"] == (
            BLACK if button.name == "Black" else WHITE
        )
        chosen = chosen or (button.name == "Owners" and app.show_ownership)
        draw_button(surface, button, big, app.button_enabled(button.name), pressed=chosen)
    draw_text(surface, small, "Your colour (next game)", (PANEL_X, 202), DIM)
    draw_text(surface, small, "Komi (next game)", (PANEL_X, 276), DIM)
    minus, plus = app.buttons["komi-"].rect, app.buttons["komi+"].rect
    centre = ((minus.right + plus.left) // 2, minus.centery)
    draw_text(surface, big, f"{app.choice['komi']:g}", centre, anchor="center")


def info_lines(app: GoApp) -> list[tuple[str, tuple]]:
    """The side panel's text: whose move, captures, the agent's last search, the result."""
    match = app.match
    taken = match.captures()
    turn = f"Move {len(match.moves) + 1}: {COLOUR_NAMES[match.to_play]} to play"
    lines = [
        (f"Game over after {len(match.moves)} moves" if match.over else turn, TEXT),
        (f"Captured: by Black {taken[BLACK]}, by White {taken[WHITE]}", TEXT),
    ]
    search = match.last_search
    if search is not None:
        lines.append((f"Agent ({COLOUR_NAMES[-match.human]}) value: {search.value:+.2f} (+1: it wins)", TEXT))
        top = ", ".join(f"{format_vertex(a, app.size)} {share:.0%}" for a, share in search.top)
        lines.append((f"Its top moves: {top}", DIM))
    estimate = app.estimate() if not match.over else None  # once over, the result line has the real margin
    if estimate is not None:
        agent = -match.human
        lines.append((f"Expected margin: {estimate.margin_for(agent):+.1f} points ({COLOUR_NAMES[agent]})", TEXT))
    result = match.result
    if result is not None:
        lines.append((f"Result: {result.text()}", ACCENT))
        if result.score is not None:
            black, white = app.match.game.rules.area(match.state["board"])
            lines.append((f"Area: Black {int(black[0])}, White {int(white[0])}, komi {match.game.komi:g}", TEXT))
    return lines


def draw_info(surface: pygame.Surface, app: GoApp) -> None:
    panel = pygame.Rect(PANEL_X - 10, 350, PANEL_W + 10, 200)
    pygame.draw.rect(surface, PANEL, panel, border_radius=8)
    font, y = app.fonts["normal"], panel.y + 12
    for text, color in info_lines(app):
        draw_text(surface, font, fit_text(font, text, panel.w - 20), (panel.x + 10, y), color)
        y += 28


def draw_status(surface: pygame.Surface, app: GoApp) -> None:
    font, y = app.fonts["normal"], 566
    worker = app.match.worker
    if worker is not None:
        draw_spinner(surface, (PANEL_X + 2, y + 9), app.elapsed)
        seconds = time.monotonic() - worker.started_at
        line = f"The agent is thinking ({app.sims} sims, {seconds:.1f} s)..."
        draw_text(surface, font, fit_text(font, line, PANEL_W - 24), (PANEL_X + 20, y), ACCENT)
        return
    text, color = app.message
    words, line, y = text.split(), "", y
    for word in words:  # wrapped to the panel's width, three lines at most
        if line and font.size(f"{line} {word}")[0] > PANEL_W:
            draw_text(surface, font, line, (PANEL_X, y), color)
            line, y = word, y + 24
        else:
            line = f"{line} {word}".strip()
    draw_text(surface, font, line, (PANEL_X, y), color)
    keys = "Keys: P pass | U undo | N new game | O ownership"
    draw_text(surface, app.fonts["small"], keys, (WIDTH - 20, HEIGHT - 12), DIM, anchor="bottomright")


# --------------------------------------------------------------------------- command line
def parse_args(argv=None) -> argparse.Namespace:
    p = Cli.ArgumentParser(prog="PyGame.py", description=__doc__, formatter_class=Cli.HelpFormatter)
    p.add_argument("--game", type=go_name, default=5, metavar="goN", help="the board: go5, go7, go9 ... go19")
    p.add_argument("--checkpoint", type=Cli.nonempty_path, help="Go model file (default: go{N}_policy_value.pt)")
    add_device_flag(p)
    add_agent_flags(p)
    p.add_argument("--colour", "--color", choices=("black", "white"), default="black", help="your colour")
    p.add_argument("--komi", type=Cli.komi, default=None, help="komi (default: the board's; 24.5 on 5x5)")
    p.add_argument("--seed", type=Cli.seed, default=0, help="seed of the rollout agent and torch")
    g = p.add_argument_group("scripted mode (docs, tests; renders off screen with SDL_VIDEODRIVER=dummy)")
    g.add_argument("--moves", default=None, help='a game record to play first, e.g. "C3 D4 pass" (Black first)')
    g.add_argument("--screenshot", type=Cli.nonempty_path, default=None, metavar="PATH", help="save a PNG when done")
    g.add_argument("--quit-when-done", action="store_true", help="exit once the agent has moved; print one line")
    g.add_argument("--ownership", action="store_true", help="start with the ownership overlay on (key O)")
    args = resolve_agent_flags(p.parse_args(argv))
    try:
        args.moves = [parse_vertex(word, args.game) for word in (args.moves or "").split()]
    except ValueError as exc:
        p.error(f"--moves: {exc}")
    return args


def load_model(args):
    """``(model, header line)``: the Go network of ``--checkpoint`` (CheckpointError when it is bad), else
    the default file if there is one, else None and a line saying that the rollout agent plays."""
    from go.Go_Net import load_go_model  # torch: after the flags, so --help answers at once

    name = f"go{args.game}_policy_value.pt"
    try:
        path = find_checkpoint(args.checkpoint, name)
    except CheckpointError:
        if args.checkpoint:
            raise
        rollout = "the agent is a pure rollout MCTS (uniform priors, random playouts)"
        return None, f"No Go model ({name} not found): {rollout}."
    model = load_go_model(path, args.game, resolve_device(args.device))
    return model, f"Model: {path}  |  {args.sims} simulations a move"


def replay(app: GoApp, moves: list[int]) -> str | None:
    """Play the record ``moves`` from the empty board; the problem's sentence, or None."""
    for index, action in enumerate(moves, start=1):
        try:
            app.match.play(action)
        except ValueError as exc:
            return f"--moves: move {index}: {exc}"
    app._say_result()
    return None


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        device = resolve_device(args.device)
        if args.screenshot is not None:
            check_writable(args.screenshot)
        model, text = load_model(args)
    except (DeviceError, OutputError, CheckpointError) as exc:
        return fail(exc)
    import torch

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # batch-1 searches: one thread, and a core left for the window
    human = BLACK if args.colour == "black" else WHITE
    app = GoApp(args.game, model, text, args.sims, human=human, komi=args.komi, c_puct=args.c_puct,
                seed=args.seed, device=device, symmetric=args.symmetric, precision=args.precision)  # fmt: skip
    if args.ownership:
        app.toggle_ownership()  # a network without the head: the message line says so, the run goes on
    problem = replay(app, args.moves)
    if problem is not None:
        app.close()
        return fail(problem)
    scripted = bool(args.moves) or args.screenshot is not None
    quit_when_done = args.quit_when_done or (os.environ.get("SDL_VIDEODRIVER") == "dummy" and scripted)
    try:
        run_loop(app, args.screenshot, quit_when_done)
        if args.quit_when_done:
            print(summary_line(app))
    finally:
        app.close()
    return 0


def run_loop(app: GoApp, screenshot: str | None, quit_when_done: bool) -> None:
    """Frames until the window closes, or (scripted) until the agent has nothing to do: then the screenshot."""
    while app.running:
        app.step_frame()
        if app.match.thinking or app.match.agent_to_move():
            continue
        if screenshot:
            app.draw(app.screen)
            save_png(app.screen, screenshot)
            screenshot = None  # once
        if quit_when_done:
            return


def summary_line(app: GoApp) -> str:
    """``moves="C3 D4 pass" result=B+0.5 captured_by_black=0 captured_by_white=0 agent=network
    agent_margin=+3.2 agent_value=+0.412`` (``agent_margin``: the expected margin of the panel, n/a without it)."""
    match = app.match
    taken = match.captures()
    value = f"{match.last_search.value:+.3f}" if match.last_search is not None else "n/a"
    result = match.result.text() if match.result is not None else "none"
    agent = "network" if app.model is not None else "rollout"
    estimate = app.estimate() if not match.over else None
    margin = f"{estimate.margin_for(-match.human):+.1f}" if estimate is not None else "n/a"
    return (
        f'moves="{match.record()}" result={result} captured_by_black={taken[BLACK]} '
        f"captured_by_white={taken[WHITE]} agent={agent} agent_margin={margin} agent_value={value}"
    )

"""The Go board's view for the GUI (a ``PyGame.BoardView``, as ``Cube_View.CubeView`` is the cube's): the
wooden board with its lines and coordinates (columns A.. without I, row 1 at the bottom, as ``Go_Board``
writes them), the stones, the last move, and, once a game is over, the area (Tromp-Taylor) territory: every
empty point shaded by the colour whose area it is.

* ``GoView(rect, size, fonts)``: the board of a ``size`` x ``size`` game drawn in ``rect`` (screen pixels);
* ``draw(surface, board, highlight, last_move=None, territory=None, ownership=None)``: ``board`` (N*N,) of
  BLACK / WHITE / EMPTY, ``highlight`` the point a click would play (an accent ring; None: none),
  ``last_move`` marked by a small ring on its stone, ``territory`` (N*N,) each point's owner
  (``GoBoard.ownership``; None: not shown), ``ownership`` (N*N,) a network's expected owner in [-1, 1]
  (+1 Black; ``Go_Estimate``): a square on every point, stones too (a stone under the other colour's square
  is expected to die), black or white, as opaque as the estimate is sure (None: not shown);
* ``hit(pos)``: the point (action ``row*N + col``, row 0 on top) nearest to a click within half the line
  spacing, or None.

Geometry for the drawing and the tests: ``point_center(action)``, ``spacing``, ``stone_radius``. Importing
this module opens no window.
"""

from __future__ import annotations

import numpy as np
import pygame

from go.Go_Board import BLACK, COLUMNS, EMPTY, WHITE
from gui.Gui_Theme import ACCENT, draw_text

WOOD = (214, 172, 96)
LINE = (52, 38, 20)
BLACK_STONE = (22, 22, 24)
WHITE_STONE = (238, 238, 232)
STONE_EDGE = (60, 60, 60)
#: Territory squares: darker and lighter than the wood, so a shaded empty point never looks like a stone.
TERRITORY = {BLACK: (70, 56, 36), WHITE: (246, 236, 210)}
MARGIN = 1.0  # the outer lines' distance from the board's edge, in line spacings (room for the coordinates)
LABEL_GAP = 0.72  # the coordinates' distance from the outer lines, in line spacings (clear of the stones)
TERRITORY_SIDE = 0.42  # a territory square's side, in line spacings
OWNERSHIP_SIDE = 0.34  # an ownership square's side: smaller than territory's, so both show where they meet


class GoView:
    """A ``size`` board drawn in ``rect`` (see the module docstring); ``fonts``: "small" labels the lines."""

    def __init__(self, rect: pygame.Rect, size: int, fonts: dict | None = None):
        self.rect, self.size, self.fonts = pygame.Rect(rect), size, fonts or {}
        side = min(self.rect.w, self.rect.h)
        self.spacing = side / (size - 1 + 2 * MARGIN)
        self.board_rect = pygame.Rect(self.rect.x, self.rect.y, side, side)
        self.origin = (self.rect.x + MARGIN * self.spacing, self.rect.y + MARGIN * self.spacing)
        self.stone_radius = int(self.spacing * 0.46)

    def point_center(self, action: int) -> tuple[int, int]:
        """Screen pixel of point ``action`` (``row*N + col``, row 0 the top line)."""
        row, col = divmod(int(action), self.size)
        return round(self.origin[0] + col * self.spacing), round(self.origin[1] + row * self.spacing)

    # -- the board view interface ----------------------------------------------------------------
    def hit(self, pos) -> int | None:
        """The point nearest to ``pos`` within half a spacing, or None (off the board)."""
        col = round((pos[0] - self.origin[0]) / self.spacing)
        row = round((pos[1] - self.origin[1]) / self.spacing)
        if not (0 <= row < self.size and 0 <= col < self.size):
            return None
        cx, cy = self.point_center(row * self.size + col)
        if max(abs(pos[0] - cx), abs(pos[1] - cy)) > self.spacing / 2:
            return None
        return row * self.size + col

    def draw(
        self,
        surface: pygame.Surface,
        board: np.ndarray,
        highlight: int | None = None,
        last_move: int | None = None,
        territory: np.ndarray | None = None,
        ownership: np.ndarray | None = None,
    ) -> None:
        """The board, the stones of ``board`` and the marks described in the module docstring."""
        self.draw_grid(surface)
        board = np.asarray(board).reshape(-1)
        if territory is not None:
            self.draw_territory(surface, board, np.asarray(territory).reshape(-1))
        for action in np.flatnonzero(board != EMPTY):
            self.draw_stone(surface, int(action), int(board[action]))
        if ownership is not None:
            self.draw_ownership(surface, np.asarray(ownership, dtype=np.float64).reshape(-1))
        if last_move is not None and last_move < board.size and board[last_move] != EMPTY:
            mark = WHITE_STONE if board[last_move] == BLACK else BLACK_STONE
            pygame.draw.circle(surface, mark, self.point_center(last_move), max(4, self.stone_radius // 3), width=2)
        if highlight is not None:
            pygame.draw.circle(surface, ACCENT, self.point_center(highlight), self.stone_radius, width=3)

    # -- pieces ----------------------------------------------------------------------------------
    def draw_grid(self, surface: pygame.Surface) -> None:
        """The wood, the lines and the coordinates around them."""
        pygame.draw.rect(surface, WOOD, self.board_rect, border_radius=6)
        n, font = self.size, self.fonts.get("small")
        first, last = self.point_center(0), self.point_center(n * n - 1)
        for i in range(n):
            x, y = self.point_center(i)[0], self.point_center(i * n)[1]
            pygame.draw.line(surface, LINE, (x, first[1]), (x, last[1]), 2)
            pygame.draw.line(surface, LINE, (first[0], y), (last[0], y), 2)
            if font is not None:
                gap = self.spacing * LABEL_GAP
                draw_text(surface, font, COLUMNS[i], (x, first[1] - gap), LINE, anchor="center")
                draw_text(surface, font, COLUMNS[i], (x, last[1] + gap), LINE, anchor="center")
                draw_text(surface, font, str(n - i), (first[0] - gap, y), LINE, anchor="center")
                draw_text(surface, font, str(n - i), (last[0] + gap, y), LINE, anchor="center")

    def draw_stone(self, surface: pygame.Surface, action: int, colour: int) -> None:
        centre = self.point_center(action)
        pygame.draw.circle(surface, BLACK_STONE if colour == BLACK else WHITE_STONE, centre, self.stone_radius)
        pygame.draw.circle(surface, STONE_EDGE, centre, self.stone_radius, width=1)

    def draw_territory(self, surface: pygame.Surface, board: np.ndarray, owner: np.ndarray) -> None:
        """A square in the owner's territory colour on every empty point of a colour's area."""
        side = round(self.spacing * TERRITORY_SIDE)
        for action in np.flatnonzero((board == EMPTY) & (owner != EMPTY)):
            square = pygame.Rect(0, 0, side, side)
            square.center = self.point_center(int(action))
            pygame.draw.rect(surface, TERRITORY[int(owner[action])], square)
            pygame.draw.rect(surface, STONE_EDGE, square, width=1)

    def draw_ownership(self, surface: pygame.Surface, owner: np.ndarray) -> None:
        """A square on every point in the colour of ``owner``'s sign, its opacity ``|owner|``, blended over
        the wood or the stone below; its outline always drawn, so that the overlay shows where it is unsure."""
        side = round(self.spacing * OWNERSHIP_SIDE)
        for action, value in enumerate(np.clip(owner, -1.0, 1.0)):
            colour = BLACK_STONE if value > 0 else WHITE_STONE
            square = pygame.Surface((side, side), pygame.SRCALPHA)
            square.fill((*colour, round(255 * abs(value))))
            pygame.draw.rect(square, (*STONE_EDGE, 255), square.get_rect(), width=1)
            surface.blit(square, square.get_rect(center=self.point_center(action)))

"""The cube's board view for the GUI: the net of the six faces and a 3-D (isometric) view of
U, F and R, with the geometry of both.

A board view is what ``PyGame.App`` draws in its board area; it knows the puzzle's drawing and
nothing of the controls, the search or the app loop (a Go board plugs in the same way):

* ``CubeView(rect, fonts)``: the view placed in ``rect`` (screen pixels) of the window;
* ``draw(surface, state, highlight)``: the sticker array ``state`` (``(6 n n,)`` colour indices,
  any shape of ``6 n^2`` stickers, so the 2x2 and the 3x3 alike), the face turned by action
  ``highlight`` (the move about to be played, or None) outlined;
* ``hit(pos)``: the action a click at ``pos`` plays, or None (the cube turns by the move
  buttons and keys only, so always None).

Geometry (screen pixels, for the drawing and the tests): ``sticker_rect`` and ``face_rect``
on the net (U above F, D below F, L F R B left to right, row 0 on top, as the env's ASCII
net); ``iso_project``, ``iso_polygon`` and ``iso_sticker_center`` in the 3-D view, whose
centre (the corner where U, F and R meet) is ``iso_center`` and whose half cube side is
``ISO_SCALE`` pixels. Importing this module opens no window.
"""

from __future__ import annotations

import math

import numpy as np
import pygame

from cube.Cube_Model import ACTION_FACE, FACE_NAMES
from gui.Gui_Theme import ACCENT, DIM, STICKER_COLORS, STICKER_EDGE, draw_text, shade

# Net: face -> (column, row) in a 4x3 grid of faces. U above F, D below F, L F R B in a row.
NET_CELLS = {0: (1, 0), 4: (0, 1), 2: (1, 1), 1: (2, 1), 5: (3, 1), 3: (1, 2)}
NET_OFFSET = (40, 24)  # the net's top-left corner from the view's
STICKER = 40  # the 2x2's sticker and gap; a 3x3's nine stickers fill the same face (``sticker_size``)
STICKER_GAP = 3
FACE_GAP = 8
FACE_SIZE = 2 * STICKER + STICKER_GAP

ISO_OFFSET = (700, 154)  # the 3-D view's centre from the view's top-left corner
ISO_SCALE = 64
# The three faces seen from above-front-right, darker the more they turn away from the light.
ISO_SHADE = {0: 1.0, 2: 0.86, 1: 0.70}


def cube_size(cube: np.ndarray) -> int:
    """``n`` of an ``n x n x n`` cube's sticker array (6 n^2 stickers)."""
    return math.isqrt(np.asarray(cube).size // 6)


def sticker_size(n: int = 2) -> tuple[int, int]:
    """``(side, gap)`` in pixels of the stickers of an ``n`` cube's net: ``n`` of them fill a face."""
    gap = STICKER_GAP if n == 2 else 2
    return (FACE_SIZE - (n - 1) * gap) // n, gap


def iso_sticker_corners(face: int, row: int, col: int, n: int = 2) -> list[tuple[float, float, float]]:
    """3-D corners of a sticker of U, F or R of an ``n`` cube, following the env's net conventions:
    U's last row touches F, R's column 0 touches F, row 0 is the top row of F and R."""
    s = 2 / n  # a sticker's side: the cube spans [-1, 1]^3
    a0, a1 = -1 + col * s, -1 + (col + 1) * s  # along the row, left to right (U, F)
    b0, b1 = 1 - row * s, 1 - (row + 1) * s  # down the face, top to bottom (F, R)
    if face == 0:  # U: y = 1, x grows with col, z grows with row
        z0, z1 = -1 + row * s, -1 + (row + 1) * s
        return [(a0, 1, z0), (a1, 1, z0), (a1, 1, z1), (a0, 1, z1)]
    if face == 2:  # F: z = 1
        return [(a0, b0, 1), (a1, b0, 1), (a1, b1, 1), (a0, b1, 1)]
    if face == 1:  # R: x = 1, z shrinks with col
        c0, c1 = 1 - col * s, 1 - (col + 1) * s
        return [(1, b0, c0), (1, b0, c1), (1, b1, c1), (1, b1, c0)]
    raise ValueError("the 3-D view shows faces U (0), R (1) and F (2) only")


def _iso_face_corners(face: int, n: int = 2) -> list[tuple[float, float, float]]:
    """3-D corners of a whole visible face: the outer corners of its corner stickers."""
    last = n - 1

    def corners(row, col):
        return iso_sticker_corners(face, row, col, n)

    return [corners(0, 0)[0], corners(0, last)[1], corners(last, last)[2], corners(last, 0)[3]]


class CubeView:
    """The cube drawn in ``rect`` of the window (see the module's docstring). ``fonts``: the
    app's fonts by name ("small" labels the net's faces, "normal" the 3-D view's); only
    ``draw`` reads them."""

    def __init__(self, rect: pygame.Rect, fonts: dict | None = None):
        self.rect = pygame.Rect(rect)
        self.fonts = fonts or {}
        self.net_origin = (self.rect.x + NET_OFFSET[0], self.rect.y + NET_OFFSET[1])
        self.iso_center = (self.rect.x + ISO_OFFSET[0], self.rect.y + ISO_OFFSET[1])

    # -- the board view interface ------------------------------------------------------
    def draw(self, surface: pygame.Surface, state: np.ndarray, highlight: int | None = None) -> None:
        """The net and the 3-D view of the cube ``state``; the face action ``highlight`` turns is outlined."""
        face = None if highlight is None else ACTION_FACE[highlight // 2]
        self.draw_net(surface, state, face)
        self.draw_iso(surface, state, face)

    def hit(self, pos) -> int | None:
        """No sticker takes a click: the cube turns by the move buttons and keys."""
        return None

    # -- the net ---------------------------------------------------------------------------
    def sticker_rect(self, face: int, row: int, col: int, n: int = 2) -> pygame.Rect:
        """Screen rectangle of one sticker of the net (of an ``n`` cube)."""
        side, gap = sticker_size(n)
        gx, gy = NET_CELLS[face]
        x = self.net_origin[0] + gx * (FACE_SIZE + FACE_GAP) + col * (side + gap)
        y = self.net_origin[1] + gy * (FACE_SIZE + FACE_GAP) + row * (side + gap)
        return pygame.Rect(x, y, side, side)

    def face_rect(self, face: int, n: int = 2) -> pygame.Rect:
        return self.sticker_rect(face, 0, 0, n).union(self.sticker_rect(face, n - 1, n - 1, n))

    def draw_net(self, surface: pygame.Surface, cube: np.ndarray, highlight: int | None) -> None:
        """The six faces, face ``highlight`` (a face index, or None) on an accent background."""
        stickers = np.asarray(cube).reshape(-1)
        n, font = cube_size(cube), self.fonts.get("small")
        for face in range(6):
            back = self.face_rect(face, n).inflate(8, 8)
            pygame.draw.rect(surface, ACCENT if face == highlight else STICKER_EDGE, back, border_radius=6)
            for row in range(n):
                for col in range(n):
                    color = STICKER_COLORS[int(stickers[face * n * n + row * n + col])]
                    rect = self.sticker_rect(face, row, col, n)
                    pygame.draw.rect(surface, color, rect, border_radius=4 if n == 2 else 3)
            centre = self.face_rect(face, n).center
            if n % 2 == 0:  # the face's name on a small cap where its middle stickers meet (off the sticker centres)
                pygame.draw.circle(surface, STICKER_EDGE, centre, 10)
                draw_text(surface, font, FACE_NAMES[face], centre, DIM, anchor="center")
            else:  # on the centre sticker, which never moves: its colour is the face's anyway
                draw_text(surface, font, FACE_NAMES[face], centre, STICKER_EDGE, anchor="center")

    # -- the 3-D view ----------------------------------------------------------------------
    def iso_project(self, x: float, y: float, z: float) -> tuple[float, float]:
        """Isometric projection; x right, y up, z out of F (the cube spans [-1, 1]^3)."""
        c30 = math.cos(math.radians(30))
        cx, cy = self.iso_center
        return (cx + (x - z) * ISO_SCALE * c30, cy - y * ISO_SCALE + (x + z) * ISO_SCALE * 0.5)

    def iso_polygon(self, face: int, row: int, col: int, inset: float = 0.0, n: int = 2) -> list[tuple[float, float]]:
        """The sticker's parallelogram on screen, shrunk towards its centre by ``inset``."""
        corners = np.array(iso_sticker_corners(face, row, col, n), dtype=float)
        centre = corners.mean(axis=0)
        corners = centre + (corners - centre) * (1.0 - inset)
        return [self.iso_project(*p) for p in corners]

    def iso_sticker_center(self, face: int, row: int, col: int, n: int = 2) -> tuple[int, int]:
        pts = self.iso_polygon(face, row, col, n=n)
        return (round(sum(p[0] for p in pts) / 4), round(sum(p[1] for p in pts) / 4))

    def draw_iso(self, surface: pygame.Surface, cube: np.ndarray, highlight: int | None) -> None:
        """U, F and R shaded by ``ISO_SHADE``, face ``highlight`` (if one of them) outlined."""
        stickers = np.asarray(cube).reshape(-1)
        font, (cx, cy) = self.fonts.get("normal"), self.iso_center
        # Face names just outside the faces: U above, F to the left, R to the right.
        reach = 2 * ISO_SCALE * math.cos(math.radians(30)) + 18
        draw_text(surface, font, "U", (cx, cy - 2 * ISO_SCALE - 14), DIM, anchor="center")
        draw_text(surface, font, "F", (cx - reach, cy + ISO_SCALE * 0.5), DIM, anchor="center")
        draw_text(surface, font, "R", (cx + reach, cy + ISO_SCALE * 0.5), DIM, anchor="center")
        n = cube_size(cube)
        for face in (0, 2, 1):  # U, F, R never overlap, so any order works
            outline = [self.iso_project(*p) for p in _iso_face_corners(face, n)]
            pygame.draw.polygon(surface, STICKER_EDGE, outline)
            for row in range(n):
                for col in range(n):
                    color = shade(STICKER_COLORS[int(stickers[face * n * n + row * n + col])], ISO_SHADE[face])
                    pygame.draw.polygon(surface, color, self.iso_polygon(face, row, col, inset=0.1, n=n))
            if face == highlight:
                pygame.draw.polygon(surface, ACCENT, outline, width=3)

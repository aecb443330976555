"""The GUI's palette and text helpers, shared by the window (``PyGame``) and its board views
(``Cube_View``). Drawing only: nothing here holds or changes state."""

from __future__ import annotations

import pygame

# Sticker colours by colour index = home face (U R F D L B), the usual Western scheme.
STICKER_COLORS = (
    (245, 245, 245),  # U white
    (205, 30, 35),  # R red
    (25, 160, 70),  # F green
    (250, 215, 10),  # D yellow
    (255, 130, 0),  # L orange
    (30, 90, 215),  # B blue
)
BG = (28, 31, 38)
PANEL = (40, 44, 54)
TEXT = (230, 232, 236)
DIM = (140, 146, 158)
ACCENT = (255, 210, 60)  # highlight: the move being played, focused box
OK = (110, 210, 120)
WARN = (255, 170, 70)
ERROR = (255, 95, 95)
STICKER_EDGE = (12, 12, 14)


def draw_text(surface: pygame.Surface, font, text: str, pos, color=TEXT, anchor: str = "topleft") -> pygame.Rect:
    """Render ``text`` anti-aliased with its ``anchor`` point (a ``pygame.Rect`` attribute) at
    ``pos``; returns the rectangle it covers."""
    img = font.render(text, True, color)
    rect = img.get_rect(**{anchor: pos})
    surface.blit(img, rect)
    return rect


def fit_text(font, text: str, width: int) -> str:
    """Shorten ``text`` with an ellipsis so that it renders within ``width`` pixels."""
    if font.size(text)[0] <= width:
        return text
    while text and font.size(text + "...")[0] > width:
        text = text[:-1]
    return text + "..."


def shade(color: tuple[int, int, int], k: float) -> tuple[int, int, int]:
    """``color`` with every channel scaled by ``k`` (capped at 255)."""
    return tuple(min(255, int(c * k)) for c in color)

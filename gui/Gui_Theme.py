"""The GUI's palette, text and widget helpers, shared by the windows (``PyGame``, ``Go_Gui``) and their
board views (``Cube_View``, ``Go_View``): drawing only (nothing here holds or changes state), and
``save_png`` for screenshots."""

from __future__ import annotations

import io
import math
import os
from dataclasses import dataclass

import pygame

from run.Run_IO import OutputError, atomic_write

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


@dataclass
class Button:
    name: str  # identifier used by the logic and the tests ("U", "U'", "Solve", "sims+", "Pass", ...)
    label: str
    rect: pygame.Rect
    color: tuple[int, int, int] | None = None  # face colour strip of a move button


def draw_button(surface: pygame.Surface, button: Button, font, enabled: bool, pressed: bool = False) -> None:
    """A rounded button, lighter under the mouse, gold while ``pressed``, greyed out unless ``enabled``."""
    hover = enabled and button.rect.collidepoint(pygame.mouse.get_pos())
    fill = (62, 68, 82) if enabled else (44, 47, 56)
    if hover:
        fill = (80, 88, 106)
    if pressed:
        fill = (110, 96, 40)
    pygame.draw.rect(surface, fill, button.rect, border_radius=6)
    if button.color is not None:  # move buttons: a strip in the colour of the turned face
        strip = pygame.Rect(button.rect.x, button.rect.bottom - 6, button.rect.w, 6)
        pygame.draw.rect(surface, button.color, strip, border_bottom_left_radius=6, border_bottom_right_radius=6)
    draw_text(surface, font, button.label, button.rect.center, TEXT if enabled else (100, 104, 114), anchor="center")


def draw_spinner(surface: pygame.Surface, centre: tuple[int, int], t: float) -> None:
    """Eight dots, the bright one going round with time ``t`` (seconds): visible proof that the UI thread is alive."""
    lead = int(t * 10) % 8
    for i in range(8):
        angle = i * math.pi / 4
        pos = (centre[0] + 10 * math.cos(angle), centre[1] + 10 * math.sin(angle))
        age = (lead - i) % 8
        level = max(60, 255 - age * 30)
        pygame.draw.circle(surface, (level, level, int(level * 0.6)), pos, 3)


def save_png(surface: pygame.Surface, path: str) -> None:
    """A PNG of ``surface`` at ``path``, written atomically; OutputError (one sentence) if it cannot be written."""
    image = io.BytesIO()  # pygame writes a broken BMP into a real file object; a buffer is right
    try:  # the format follows the name's suffix, as when pygame writes the path itself
        pygame.image.save(surface, image, os.path.basename(path))
        atomic_write(path, lambda f: f.write(image.getvalue()))
    except pygame.error as exc:  # a suffix pygame cannot write, ...
        raise OutputError(f"cannot write the screenshot '{path}' ({exc}).") from None

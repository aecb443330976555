"""What the GUI's windows (``PyGame.App`` for the cube, ``Go_Gui.GoApp`` for Go) share: the frame function and
the mouse: a click is a press and release on the same button, or on the same point of the board view, as in
any toolkit. Importing this module opens no window.
"""

from __future__ import annotations

import pygame

FPS = 30


class Window:
    """The frame loop and click handling of a window. A subclass sets ``screen``, ``clock``, ``buttons`` (name
    -> ``Gui_Theme.Button``), ``view`` (a board view with ``hit(pos)``) and ``running``, and defines
    ``activate(name)`` (a button clicked), ``apply_move(action)`` (a board point clicked), ``handle_key(event)``,
    ``update(dt)`` and ``draw(surface)``; ``mouse_down(pos)`` is told of every press."""

    _pressed: str | None = None  # the button under the last mouse-down
    _pressed_action: int | None = None  # the board view's action under it

    def button_at(self, pos) -> str | None:
        for name, button in self.buttons.items():
            if button.rect.collidepoint(pos):
                return name
        return None

    def mouse_down(self, pos) -> None:
        """A press of the left button at ``pos`` (before the click is known)."""

    def handle_event(self, event: pygame.event.Event) -> None:
        if event.type == pygame.QUIT:
            self.running = False
        elif event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            self.mouse_down(event.pos)
            self._pressed = self.button_at(event.pos)
            self._pressed_action = self.view.hit(event.pos)
        elif event.type == pygame.MOUSEBUTTONUP and event.button == 1:
            name = self.button_at(event.pos)
            if name is not None and name == self._pressed:
                self.activate(name)
            elif name is None and self._pressed_action is not None and self.view.hit(event.pos) == self._pressed_action:
                self.apply_move(self._pressed_action)
            self._pressed = self._pressed_action = None
        elif event.type == pygame.KEYDOWN:
            self.handle_key(event)

    def step_frame(self, dt: float | None = None) -> None:
        """One frame: events, update, draw, flip. ``dt`` None = real time at FPS."""
        if dt is None:
            dt = self.clock.tick(FPS) / 1000.0
        for event in pygame.event.get():
            self.handle_event(event)
        self.update(dt)
        self.draw(self.screen)
        pygame.display.flip()

"""pyte's screen with what full-screen programs expect beyond it: answers to queries go back to the program,
the alternate screen (vim, top, less) is restored when the program leaves it, and bracketed paste is known."""
from __future__ import annotations

import copy
from typing import Any, Callable

import pyte
from pyte.screens import Cursor

ALTERNATE_SCREEN_MODES = {47 << 5, 1047 << 5, 1049 << 5}
"""Private modes that switch to the alternate screen (pyte shifts private modes by 5 bits)."""
SCROLLBACK = 5000
APPLICATION_CURSOR = 1 << 5
"""DECCKM: cursor keys send ESC O x."""
BRACKETED_PASTE = 2004 << 5




def _public_only(name: str) -> Callable[..., None]:
    """pyte hands xterm's private variants (`CSI ? 4 m`, `CSI ? 6 n`, which vim sends as queries) to handlers that
    take no `private` flag, and its parser raises; a terminal that does not know a query ignores it."""
    handler = getattr(pyte.Screen, name)

    def public_only(self: pyte.Screen, *params: int, private: bool = False) -> None:
        if not private:
            handler(self, *params)
    return public_only


class TerminalScreen(pyte.HistoryScreen):
    """With SCROLLBACK lines above the screen to page back through (new output pages forward again)."""

    def __init__(self, columns: int, lines: int, reply: Callable[[str], None]) -> None:
        super().__init__(columns, lines, history=SCROLLBACK)
        self._reply = reply
        self._saved: tuple[dict[int, Any], Cursor] | None = None

    @property
    def application_cursor(self) -> bool:
        return APPLICATION_CURSOR in self.mode

    @property
    def bracketed_paste(self) -> bool:
        """The program wants pasted text marked (bash and vim ask), so that a pasted newline runs nothing."""
        return BRACKETED_PASTE in self.mode

    @property
    def scrolled_back(self) -> bool:
        return self.history.position < self.history.size

    def write_process_input(self, data: str) -> None:
        self._reply(data)

    def set_mode(self, *modes: int, **kwargs: Any) -> None:
        if kwargs.get("private") and self._saved is None and {m << 5 for m in modes} & ALTERNATE_SCREEN_MODES:
            self._saved = ({y: copy.copy(self.buffer[y]) for y in range(self.lines)}, copy.copy(self.cursor))
            self.erase_in_display(2)
        super().set_mode(*modes, **kwargs)

    def reset_mode(self, *modes: int, **kwargs: Any) -> None:
        if kwargs.get("private") and self._saved is not None and {m << 5 for m in modes} & ALTERNATE_SCREEN_MODES:
            lines, cursor = self._saved
            self._saved = None
            self.buffer.clear()
            for y, line in lines.items():
                if y < self.lines:
                    self.buffer[y] = line
            self.cursor = cursor
            self.ensure_hbounds()
            self.ensure_vbounds()
            self.dirty.update(range(self.lines))
        super().reset_mode(*modes, **kwargs)

    select_graphic_rendition = _public_only("select_graphic_rendition")
    report_device_status = _public_only("report_device_status")
    cursor_position = _public_only("cursor_position")
    cursor_up = _public_only("cursor_up")
    cursor_down = _public_only("cursor_down")
    cursor_forward = _public_only("cursor_forward")
    cursor_back = _public_only("cursor_back")
    cursor_up1 = _public_only("cursor_up1")
    cursor_down1 = _public_only("cursor_down1")
    cursor_to_line = _public_only("cursor_to_line")
    cursor_to_column = _public_only("cursor_to_column")
    insert_lines = _public_only("insert_lines")
    delete_lines = _public_only("delete_lines")
    insert_characters = _public_only("insert_characters")
    delete_characters = _public_only("delete_characters")
    erase_characters = _public_only("erase_characters")
    clear_tab_stop = _public_only("clear_tab_stop")
    set_margins = _public_only("set_margins")

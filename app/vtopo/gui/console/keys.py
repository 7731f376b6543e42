"""What a key press sends to the program in a terminal, as xterm sends it."""
from __future__ import annotations

from PySide6.QtCore import Qt

Key = Qt.Key
Mod = Qt.KeyboardModifier

ESC = "\x1b"
CURSOR_KEYS = {Key.Key_Up: "A", Key.Key_Down: "B", Key.Key_Right: "C", Key.Key_Left: "D",
               Key.Key_Home: "H", Key.Key_End: "F"}
"""Sent as ESC [ x, or ESC O x in application cursor mode (DECCKM, which vim and less turn on)."""
FIXED_KEYS = {
    Key.Key_Return: "\r", Key.Key_Enter: "\r", Key.Key_Backspace: "\x7f", Key.Key_Tab: "\t",
    Key.Key_Backtab: f"{ESC}[Z", Key.Key_Escape: ESC,
    Key.Key_Insert: f"{ESC}[2~", Key.Key_Delete: f"{ESC}[3~", Key.Key_PageUp: f"{ESC}[5~",
    Key.Key_PageDown: f"{ESC}[6~",
    Key.Key_F1: f"{ESC}OP", Key.Key_F2: f"{ESC}OQ", Key.Key_F3: f"{ESC}OR", Key.Key_F4: f"{ESC}OS",
    Key.Key_F5: f"{ESC}[15~", Key.Key_F6: f"{ESC}[17~", Key.Key_F7: f"{ESC}[18~", Key.Key_F8: f"{ESC}[19~",
    Key.Key_F9: f"{ESC}[20~", Key.Key_F10: f"{ESC}[21~", Key.Key_F11: f"{ESC}[23~", Key.Key_F12: f"{ESC}[24~",
}
CONTROL_PUNCTUATION = {Key.Key_Space: "\x00", Key.Key_At: "\x00", Key.Key_BracketLeft: ESC,
                       Key.Key_Backslash: "\x1c", Key.Key_BracketRight: "\x1d", Key.Key_AsciiCircum: "\x1e",
                       Key.Key_Underscore: "\x1f", Key.Key_Slash: "\x1f", Key.Key_Question: "\x7f"}


FLOW_CONTROL = (Key.Key_S, Key.Key_Q)  # XOFF and XON: in a tab of the designer they would only freeze the session
TERMINAL_CTRL_SHIFT = (Key.Key_C, Key.Key_V)  # the terminal's own copy and paste


def terminal_keeps(key: int, modifiers: Qt.KeyboardModifier) -> bool:
    """Whether a key goes to the program in the terminal even when the designer binds it too: what a shell, vtysh
    or vim reads (typing, Enter, Tab, arrows, Alt+letter, Ctrl+letter, Ctrl+punctuation), and the terminal's own
    Ctrl+Shift+C and Ctrl+Shift+V. The designer keeps Ctrl+S (Save) and Ctrl+Q (Quit), Ctrl+Shift+letter,
    Ctrl+digit, Ctrl+=, Ctrl+- and the function keys (F5 deploys); a key the designer does not bind reaches the
    program all the same."""
    control, shift = bool(modifiers & Mod.ControlModifier), bool(modifiers & Mod.ShiftModifier)
    if Key.Key_F1 <= key <= Key.Key_F35:
        return False
    if not control or key in CONTROL_PUNCTUATION:
        return True
    if Key.Key_A <= key <= Key.Key_Z:
        return key in TERMINAL_CTRL_SHIFT if shift else key not in FLOW_CONTROL
    return False


def key_bytes(key: int, modifiers: Qt.KeyboardModifier, text: str, application_cursor: bool = False) -> bytes:
    """The bytes for one key press; empty for a key that sends nothing (a lone Shift, say)."""
    control = bool(modifiers & Mod.ControlModifier)
    alt = bool(modifiers & Mod.AltModifier)
    sent = ""
    if key in CURSOR_KEYS:
        sent = f"{ESC}{'O' if application_cursor else '['}{CURSOR_KEYS[Key(key)]}"
    elif key in FIXED_KEYS:
        sent = FIXED_KEYS[Key(key)]
    elif control and Key.Key_A <= key <= Key.Key_Z:
        sent = chr(key - Key.Key_A + 1)
    elif control and key in CONTROL_PUNCTUATION:
        sent = CONTROL_PUNCTUATION[Key(key)]
    elif text and text.isprintable():
        sent = text
    elif text and len(text) == 1 and ord(text) < 0x20:
        sent = text  # a control character the platform already made
    if sent and alt:
        sent = ESC + sent  # meta sends escape, as xterm's metaSendsEscape
    return sent.encode()

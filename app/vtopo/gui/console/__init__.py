"""The embedded terminal: a pty-backed process, pyte's screen model drawn in a widget, and a dock of tabs."""

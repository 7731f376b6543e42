"""How the designer looks and feels: its palettes (theme), and forms that a mouse wheel scrolls (wheel_guard)."""

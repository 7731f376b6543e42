"""The designer's actions as data, napari's way: each menu's module (file, edit, view, lab) declares its actions in
the order its menu shows them (spec.Action: id, title, keys, icon, tip, what it does, an enabled-when rule over
context.Context), and builder.Actions makes them into QActions, the menu bar and the toolbar.

Adding an action is adding an Action to the right menu module's MENU: the builder gives it its keys, its place and
its enabled state, and tests/gui/test_action_table.py refuses a key that another action or one of Qt's widgets
already reads."""

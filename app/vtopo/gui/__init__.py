"""The designer: a projection of the model plus commands on a QUndoStack. See app.py for the entry point."""

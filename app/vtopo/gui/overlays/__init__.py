"""Views laid over the canvas: broadcast domains."""

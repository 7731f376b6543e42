"""The Capture dock: live packet lists, one tab per capture, and the controller that starts them from the canvas."""

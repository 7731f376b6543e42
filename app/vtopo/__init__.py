"""vtopo: draw a virtual network, compile it into host operations, deploy it, measure it."""

__version__ = "0.1.0"

"""The vtopo command line: the same engine as the designer, without a screen.

vtopo.cli.main builds the parser and registers each family of commands (agent, capture, check, experiment, interop,
measure, operate); the families share only vtopo.cli.common and never import each other.
"""
from vtopo.cli.main import build_parser, main, run

__all__ = ["build_parser", "main", "run"]

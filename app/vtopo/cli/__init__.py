"""The vtopo command line: the same engine as the designer, without a screen.

vtopo.cli.main builds the parser and registers each family of commands (agent, capture, check, experiment, interop,
measure, operate); the families share only vtopo.cli.common and never import each other. This package itself is the
program's entry point alone: it imports the command line only once it knows how the program will run.
"""
from __future__ import annotations

import gc
import sys

TYPE_CHECKING = False  # typing itself, which the command line imports, is imported after the collector is off
if TYPE_CHECKING:
    from typing import NoReturn

ANSWERS_AND_EXITS = frozenset({"validate", "plan", "kinds", "show", "--help", "-h", "--version"})
"""The first words of the commands that answer and exit. The program runs them without the cycle collector from its
first import on: its passes over the modules they import are ~7 ms of `vtopo validate`'s 150, and what they leave
goes with the process."""


def run() -> NoReturn:
    """`vtopo` as a program: its console script and `python -m vtopo`."""
    if sys.argv[1:2] and sys.argv[1] in ANSWERS_AND_EXITS:
        gc.disable()
    from vtopo.cli.main import run_program

    run_program()

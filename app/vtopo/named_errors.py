"""Exception classes named as "module:Class", so that naming one loads nothing: an error can only have been raised
if its module was imported. The command line and the agent end a request with one line for errors of layers that
they import only when a request needs them."""
from __future__ import annotations

import sys


def loaded(names: tuple[str, ...]) -> tuple[type[BaseException], ...]:
    """The exception classes among `names` whose modules are imported."""
    modules = (name.partition(":") for name in names)
    return tuple(getattr(sys.modules[module], cls) for module, _, cls in modules if module in sys.modules)

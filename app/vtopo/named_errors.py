"""Exception classes named as "module:Class", so that naming one loads nothing: an error can only have been raised
if its module was imported. The command line and the agent end a request with one line for errors of layers that
they import only when a request needs them."""
from __future__ import annotations

import sys


def loaded(names: tuple[str, ...]) -> tuple[type[BaseException], ...]:
    """The exception classes among `names` that exist: their modules are imported, far enough to define them (another
    thread may be importing one meanwhile)."""
    found = (getattr(sys.modules.get(module), cls, None) for module, _, cls in (name.partition(":") for name in names))
    return tuple(error for error in found if error is not None)

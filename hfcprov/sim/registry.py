"""Parts registered by name (links, queues, congestion controls, recovery strategies).

A registry is a dict of name -> the object, or ``"module:attr"`` imported on first use, so
optional parts stay optional and no module of ``hfcprov.sim`` imports another in a loop.
"""

from __future__ import annotations

import importlib


def resolve(registry: dict, name: str):
    """``registry[name]`` (KeyError if absent), importing a ``"module:attr"`` entry once."""
    target = registry[name]
    if isinstance(target, str):
        module, attr = target.split(":")
        target = getattr(importlib.import_module(module), attr)
        registry[name] = target
    return target

"""The built-in bots' registrations: the same hook third-party bot packages implement.

Every built-in policy of :mod:`bots.policy` (``random``, ``greedy``, ...) runs as a
protocol bot process, ``python -m bots.run NAME`` (see :mod:`bots.run`); ``pass`` is a
trivial bot for tests and benchmarks. The example bots in other languages are not
registered (they need ``node`` or a C compiler); run them with ``--cmd``.
"""

from __future__ import annotations

import sys

from arena.hookspecs import hookimpl


def _summary(name: str) -> str:
    from bots.policy import _REGISTRY
    doc = sys.modules[_REGISTRY[name].__module__].__doc__ or ""
    first = doc.strip().splitlines()[0] if doc.strip() else ""
    return first.split(":", 1)[-1].strip() if first.startswith("``") else first


@hookimpl
def arena_register_bots(register) -> None:
    """Register every built-in policy as a process bot, and the trivial ``pass`` bot."""
    from bots.policy import names
    for name in names():
        register(name=name, command=[sys.executable, "-m", "bots.run", name], description=_summary(name))
    register(name="pass", command=[sys.executable, "-m", "bots.run", "pass"],
             description="always passes and places nothing; for tests and benchmarks")

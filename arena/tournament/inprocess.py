"""Built-in bots played without processes, under the name the tournament's callers know it
by; it lives with the unit of work (:mod:`arena.execution.inprocess`)."""

from __future__ import annotations

from ..execution.inprocess import play_inprocess

__all__ = ["play_inprocess"]

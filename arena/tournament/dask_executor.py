"""The Dask executor, under the name the tournament's callers know it by; it is the
cluster's (:mod:`arena.cluster.executor`)."""

from __future__ import annotations

from ..cluster.executor import DaskExecutor, SchedulerLost, tier_line

__all__ = ["DaskExecutor", "SchedulerLost", "tier_line"]

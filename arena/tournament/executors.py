"""The executors a tournament names, under the names the tournament's callers know them by.

They live below the tournament, where leagues, experiments and the cluster's workers reach
them too: the unit of work and :func:`execute` in :mod:`arena.execution.work`, the local
executor in :mod:`arena.execution.local`, the Dask executor in :mod:`arena.cluster.executor`
and :func:`make_executor` (the one an ``executor`` field names) in :mod:`arena.cluster.named`.
"""

from __future__ import annotations

from ..cluster.named import make_executor
from ..execution.local import LocalExecutor
from ..execution.work import MAX_ATTEMPTS, GameFailed, WorkerLost, execute, uses_pool

__all__ = ["MAX_ATTEMPTS", "GameFailed", "LocalExecutor", "WorkerLost", "execute", "make_executor", "uses_pool"]

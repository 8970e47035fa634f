"""The executor a run's ``executor`` field names: local worker processes or a Dask cluster.

Only a run on a cluster loads the cluster's executor (and Dask with it)."""

from __future__ import annotations

from typing import Callable


def make_executor(kind: str, address: str | None, concurrency: int, run: str | None = None,
                  initializer: Callable | None = None):
    """The executor an ``executor`` field names: local worker processes (each starting with
    ``initializer``) or the Dask cluster at ``address`` (``run`` names the run's output, so
    a resumed run replaces what a killed coordinator left on the workers)."""
    if kind == "dask":
        from .executor import DaskExecutor

        return DaskExecutor(address, run=run)
    from ..execution.local import LocalExecutor

    return LocalExecutor(concurrency, initializer=initializer)

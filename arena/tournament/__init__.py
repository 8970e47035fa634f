"""Tournaments from YAML files: validation, scheduling, execution, results, ratings and the SPRT.

``config`` reads and checks a tournament file (and its deal book); ``schedule`` turns it
into seat-rotated groups of games with stable keys, lazily (``swiss`` pairs a Swiss
tournament round by round from the stored results); ``runner`` plays the schedule minus the stored games on
an executor (:mod:`arena.execution.local` for the local process pool,
:mod:`arena.cluster.executor` for a Dask cluster, chosen by :mod:`arena.cluster.named`)
and stores each finished game in ``store``; ``standings``, ``ratings`` and ``sprt`` read
the results; ``index`` writes the results folder's ``index.html``. The guide is
``docs/tournaments.md``.

May import: ``engine``, :mod:`arena.execution` and :mod:`arena.cluster` (to play games),
:mod:`arena.referee`, :mod:`arena.plugins`, :mod:`arena.replay` (for the index's viewers)
and :mod:`arena.errors`.
"""

"""Playing games: the one seam every runner of games calls, below them all.

"Play these games and hand back their records" is said once, here, and the tournament
runner, leagues, experiments, the web site's rounds and the cluster's workers all call it:

- :mod:`.work`: the unit of work -- a game's *payload* (plain, picklable data: the
  referee's request, how it is played, an optional game function of its own) and
  :func:`~.work.execute`, which plays one on the worker that received it, through the
  referee with the worker's pool of bot processes or in-process; what an executor answers
  when a game fails or its worker is lost; :data:`~.work.WAIT`, what a lazy schedule yields
  while its next games need results still in flight; :class:`~.work.Interrupted`, a run of
  games stopped by a signal;
- :mod:`.inprocess`: built-in bots played inside the worker, without bot processes;
- :mod:`.local`: the local executor, a pool of forked worker processes.

The executor of a Dask cluster is the cluster's (:mod:`arena.cluster.executor`): it sends
payloads to the cluster's workers, which play them with :func:`~.work.execute`.

May import: :mod:`arena.referee`, :mod:`arena.process`, :mod:`arena.errors`, ``engine``;
never a tournament, league, experiment or the cluster.
"""

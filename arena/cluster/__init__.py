"""Playing on a cluster with nothing shared but the scheduler.

- :mod:`.bundle` (coordinator side): a command-line bot's program folder packed once into a
  deterministic archive named by its content hash, and the seat's command rewritten to run
  from wherever a worker unpacks it;
- :mod:`.worker` (worker side): the Dask worker plugin that keeps a pool of live bot
  processes, unpacks and builds bundles once per worker, checks the sandbox tier a game
  asks for, and sends the game's replay and bot logs back inside its record;
- :mod:`.landing` (coordinator side): writes the replay and logs a record carries into the
  coordinator's own output folder;
- :mod:`.executor` (coordinator side): the Dask executor, which sends the payloads of
  :mod:`arena.execution.work` to the workers in batches and lands what comes back;
  :mod:`.batching` groups the games into tasks, :mod:`.shipping` sends what they need
  (command-line bots' folders as bundles); :mod:`.named` picks the Dask executor, or the
  local one, for the executor a run names.

It plays the games it is given and knows nothing of tournaments, leagues or experiments.
"""

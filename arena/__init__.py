"""The arena: the host that runs Project L games between bots.

A game's path through the host, and the package that owns each step (``docs/architecture.md``):

1. :mod:`arena.cli` — the ``arena`` command line; the only place that prints.
2. :mod:`arena.tournament` — a YAML file becomes a validated config, a schedule of
   seat-rotated groups, an executor's jobs, stored results and ratings
   (:mod:`arena.league` and :mod:`arena.experiment` build on it).
3. :mod:`arena.referee` — plays one game: the engine's state, one bot process per seat,
   clocks and verdicts, a record and a replay.
4. :mod:`arena.process` — a bot as a process: transport, protocol, sandbox, cgroups,
   clocks, and the conformance check.
5. :mod:`arena.replay` — replays in the terminal and as HTML viewers.
6. :mod:`arena.bench` — benchmarks that print measured figures.

Also built on them: :mod:`arena.league`, :mod:`arena.experiment`, :mod:`arena.web` (the
league website) and :mod:`arena.rl` (reinforcement-learning environments).

Beside them: :mod:`arena.plugins` (the plugin manager and the bot registry),
:mod:`arena.hookspecs` (the host's hooks), :mod:`arena.errors` (the errors that reach the
user as sentences), :mod:`arena.sdk` (the base class of Python bots) and
:mod:`arena.progress` (a line now and then for runs without a progress bar).

May import: ``engine``, ``bots`` (through the plugin manager) and third-party libraries.
``engine`` and ``plugins`` never import it; ``bots`` imports only its hook markers, the
plugin manager and the SDK.
"""

__version__ = "0.1.0"

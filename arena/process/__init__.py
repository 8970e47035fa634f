"""A bot as a process: everything between the referee and a bot program.

Owns, from the wire up:

- :mod:`.transport` — the line transport: a state machine over the pipes, deadlines,
  output caps, and one exception class per fault (``BotTimeout``, ``BotCrashed`` ...);
- :mod:`.protocol` — the JSON messages of ``docs/protocol.md`` (``hello``, requests,
  replies) and their checks;
- :mod:`.botproc` — the facade the referee uses: start, handshake, ask, stop;
- :mod:`.pool` — live bot processes kept by a worker between games, and when to restart one;
- :mod:`.sandbox` and :mod:`.cgroups` — the sandbox tiers (working directory, user,
  namespaces, resource limits) a process is started in;
- :mod:`.timecontrol` — per-move and chess clocks;
- :mod:`.check_bot` — the conformance check behind ``arena check-bot``;
- :mod:`.schema` — the protocol's JSON Schema, shipped as package data.

May import: ``engine`` (only :mod:`.check_bot`, which plays a game), :mod:`arena.errors`,
and each other in the order above. It knows nothing of tournaments.
"""

"""Bot packages: what a bot's files are, between the author's disk and the machine that runs it.

- :mod:`.package` -- a submitted package (a ``.tar.gz`` or ``.zip`` with a ``bot.toml``
  manifest): unpacking it without trusting it, its manifest, its run command;
- :mod:`.build` -- a package's build step and its conformance check, each run in the
  sandbox (:mod:`.checkrun` is the check as one JSON line);
- :mod:`.bundle` -- a command-line bot's program folder packed once, named by its content
  hash, for the workers of a cluster.

Used by the website (``arena serve``), the cluster's workers and the command line alike;
it may import :mod:`arena.botspec`, :mod:`arena.process` and :mod:`arena.errors`, never the
tournament, league, web or cluster layers.
"""

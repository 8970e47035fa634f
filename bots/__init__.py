"""Built-in bots. Each module is a policy that can play in-process or as a protocol bot.

Each bot module is a plugin of the ``arena`` entry-point group (``pyproject.toml``), like
a third-party bot package.

May import: ``engine``, ``engine.stats``, and of the host only its hook markers
(:mod:`arena.hookspecs`), the plugin manager (:mod:`arena.plugins`) and the SDK
(:mod:`arena.sdk`); never the host's tournament, league or experiment code.
"""

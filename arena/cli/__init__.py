"""The command line, ``arena``: one module per command group, registered on one Typer app.

Owns: parsing options, printing tables and JSON, turning errors into one sentence and an
exit code (:mod:`.app`). The work is done elsewhere: each command imports the package
that owns it (``arena.tournament``, ``arena.process``, ``engine`` ...) when it runs, so
``arena --help`` stays fast.

May import: everything. Nothing imports it (but the ``arena`` console script).

Modules, in the order ``arena --help`` lists their commands:

- :mod:`.app` — the Typer app, ``command`` (the error boundary), ``emit_json``;
- :mod:`.game` — ``play`` (``--human`` too), ``cards``, ``replay``: one game;
- :mod:`.bots` — ``bots``, ``check-bot``;
- :mod:`.tournament` — ``validate``, ``run``, ``standings``, ``index``;
- :mod:`.match` — ``match``: a tournament on one command line;
- :mod:`.deals` — ``deals make|check``: deal books;
- :mod:`.variants` — ``variants``, ``plugins``, ``solo``;
- :mod:`.league` — ``league new|add|play|table|retire``;
- :mod:`.experiment` — ``experiment``;
- :mod:`.bench` — ``bench engine|protocol|tournament|serve|...``;
- :mod:`.rl` — ``bench env`` (the reinforcement-learning environment);
- :mod:`.web` — ``serve``, ``submit``, ``league token``: the league website;
- :mod:`.cluster` — ``cluster status|clean``;

and what those share: :mod:`.options` (``--rules`` / ``--param`` / ``--each`` parsing and
the options several commands declare alike), :mod:`.match_document` (the tournament
document ``match`` builds from its options), :mod:`.prechecks` (what ``run`` and ``match``
check before playing), :mod:`.live` (what a run prints while it plays, and its end),
:mod:`.http_client` (``submit``'s client).
"""

from __future__ import annotations

# Registration order is the order of `arena --help`.
from . import game  # noqa: F401  (play, cards, replay)
from . import bots  # noqa: F401  (bots, check-bot)
from . import tournament  # noqa: F401  (validate, run, standings, index)
from . import match  # noqa: F401  (match)
from . import deals  # noqa: F401  (deals make|check)
from . import variants  # noqa: F401  (variants, plugins, solo)
from . import league  # noqa: F401  (league ...)
from . import experiment  # noqa: F401  (experiment)
from . import bench  # noqa: F401  (bench ...)
from . import rl  # noqa: F401  (bench env)
from . import web  # noqa: F401  (serve, submit, league token ...)
from . import cluster  # noqa: F401  (cluster status|clean)
from .app import app

__all__ = ["app", "main"]


def main() -> None:
    """Console entry point (``arena``)."""
    app()

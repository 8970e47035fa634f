"""The Starlette app of ``arena serve``: the routes of the site, its middleware and its lifetime.

The routes come from one module per concern, each a list of :class:`~starlette.routing.Route`
to plain endpoint functions: the public pages (:mod:`.public_pages`), uploads
(:mod:`.uploads`), an author's own page (:mod:`.author`), games followed while they play
(:mod:`.follow`), the read-only JSON API (:mod:`.api`) and withdrawing (:mod:`.withdrawal`).
Their paths interleave (``/api/...`` belongs to five of them), so they are joined into one
list rather than mounted under prefixes. Every endpoint reads the league's
:class:`.state.SiteState` from ``request.app.state.site``. The middleware (security headers,
the response cache, error pages) is :mod:`.middleware`; the background work that runs while
the app does is started and stopped by :func:`.lifetime.lifespan`.

Every route is listed, with the first line of its endpoint's docstring, on the ``/api``
page (:func:`endpoints`), so the list is complete by construction.
"""

from __future__ import annotations

from starlette.applications import Starlette

from . import api, author, challenge, follow, public_pages, uploads, withdrawal
from .lifetime import lifespan
from .middleware import EXCEPTION_HANDLERS, middleware
from .public_pages import endpoints
from .state import SiteState
from .submissions import Settings

__all__ = ["ROUTES", "create_app", "endpoints"]

#: Every route of the site, in the order they are matched and listed.
ROUTES = [*public_pages.routes, *uploads.routes, *author.routes, *follow.routes, *api.routes, *withdrawal.routes,
          *challenge.routes]


def create_app(league_path, settings: Settings = Settings(), play: bool = True, concurrency: int = 2,
               groups_per_round: int = 2, dask: str | None = None, public_url: str = "http://127.0.0.1:8000",
               cache_ttl_s: float = 2.0, refit_interval_s: float = 5.0) -> Starlette:
    """The app serving the league file ``league_path`` (which must exist).

    ``public_url`` is where visitors reach the site (the links of API answers are built on
    it, never on a request's ``Host``); public pages are kept ``cache_ttl_s`` seconds
    (:class:`.cache.ResponseCache`); the ratings are refitted at most every
    ``refit_interval_s`` seconds while games are stored (:class:`.ratings.RatingsKeeper`);
    with ``play``, ``concurrency`` games at once, ``groups_per_round`` groups a round, on the
    Dask cluster at ``dask`` if given (:class:`.player.Player`)."""
    site = SiteState.open(league_path, settings, play=play, concurrency=concurrency,
                          groups_per_round=groups_per_round, dask=dask, public_url=public_url,
                          refit_interval_s=refit_interval_s)
    app = Starlette(routes=ROUTES, middleware=middleware(cache_ttl_s), exception_handlers=EXCEPTION_HANDLERS,
                    lifespan=lifespan)
    app.state.site = site
    # what the command line and the tests reach for by name
    app.state.player, app.state.pipeline, app.state.keeper = site.player, site.pipeline, site.keeper
    app.state.stop_now = site.stop_now
    return app

"""What the site of one league holds while it is served: one :class:`SiteState`, on ``app.state.site``.

Every endpoint reads it from its request (:func:`site_of`): the league file, the settings,
the public URL the links are built on, the background workers (the submissions'
:class:`.submissions.Pipeline`, the ratings' :class:`.ratings.RatingsKeeper`, the league's
:class:`.player.Player`), the uploads being received and the views of the games in flight
already worked out. Nothing here speaks HTTP; the endpoints are in :mod:`.public_pages`,
:mod:`.uploads`, :mod:`.author`, :mod:`.follow`, :mod:`.api` and :mod:`.withdrawal`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from . import views
from .player import Player
from .ratings import RatingsKeeper
from .security import scrub
from .submissions import Pipeline, Settings, packages_dir

#: What the public sees of a game in flight in the list of live games.
LIVE_KEYS = ("group", "rotation", "bots", "started", "state")


class Newest:
    """A few values worked out once and kept under their key; beyond ``size``, the oldest go."""

    def __init__(self, size: int, lock: threading.Lock):
        self.size = size
        self.lock = lock
        self.kept: dict = {}

    def get(self, key):
        """The value kept under ``key``, or None."""
        return self.kept.get(key)

    def put(self, key, value) -> None:
        """Keep ``value`` under ``key``, forgetting the oldest beyond ``size``."""
        with self.lock:
            self.kept[key] = value
            while len(self.kept) > self.size:
                self.kept.pop(next(iter(self.kept)))


class FollowedViews:
    """What the public sees of the games in flight, worked out once per move however many follow them."""

    def __init__(self):
        lock = threading.Lock()
        self.tables = Newest(64, lock)  # (group, rotation, moves read) -> what the public sees of it
        self.pages = Newest(16, lock)  # (group, rotation, moves shown) -> the viewer's page


@dataclass
class SiteState:
    """Everything the endpoints of one served league share (see the module's docstring)."""

    path: Path
    settings: Settings
    base_url: str  # where visitors reach the site, without its last "/"
    pipeline: Pipeline
    keeper: RatingsKeeper
    player: Player | None
    hidden: tuple[str, ...] = ()  # folder names next to the league file, never shown
    uploading: int = 0  # upload bodies being received now
    followed: FollowedViews = field(default_factory=FollowedViews)
    tables: dict = field(default_factory=dict)  # people's games against a bot in play: id -> its table (.challenge)

    @classmethod
    def open(cls, league_path, settings: Settings, play: bool = True, concurrency: int = 2,
             groups_per_round: int = 2, dask: str | None = None, public_url: str = "http://127.0.0.1:8000",
             refit_interval_s: float = 5.0) -> "SiteState":
        """The state of the league file ``league_path``, which must be a league (else a
        sentence, before anything is started)."""
        path = Path(league_path)
        with views.opened(path):  # fails early, with a sentence, if it is not a league
            pass
        pipeline = Pipeline(path, settings)
        player = Player(path, concurrency, groups_per_round, settings=settings, dask=dask) if play else None
        keeper = RatingsKeeper(path, min_interval_s=refit_interval_s)
        hidden = tuple(f"{path.name}.{kind}/" for kind in ("bots", "replays", "logs", "live"))
        return cls(path=path, settings=settings, base_url=public_url.rstrip("/"), pipeline=pipeline,
                   keeper=keeper, player=player, hidden=hidden)

    @property
    def archive_cap(self) -> int:
        """The largest package archive accepted, in bytes."""
        return self.settings.caps.archive_bytes

    @property
    def uploads_dir(self) -> Path:
        """Where upload bodies are spooled while they are received."""
        return packages_dir(self.path) / ".uploads"

    def public(self, value):
        """``value`` as the public may see it: no server path (:func:`.security.scrub`)."""
        return scrub(value, self.hidden)

    def play_status(self) -> str:
        """What the background player is doing ("off" without one)."""
        return self.public(self.player.status) if self.player is not None else "off"

    def live_games(self) -> list[dict]:
        """The games in flight as the public may see them: never their seed (it tells the decks' order)."""
        live = getattr(self.player, "live", None)
        return [self.public({k: g[k] for k in LIVE_KEYS if k in g}) for g in live()] if callable(live) else []

    def start(self) -> None:
        """Start the background work: ratings, submissions, league games."""
        self.keeper.start()
        self.pipeline.start()
        if self.player is not None:
            self.player.start()

    def stop_now(self) -> None:
        """Stop what the server does in the background at once (a signal arrived): games
        in flight are dropped, never half-stored."""
        if self.player is not None:
            self.player.stopping.set()
        self.pipeline.stop()
        self.keeper.stopping.set()


def site_of(request) -> SiteState:
    """The state of the site ``request`` was sent to."""
    return request.app.state.site

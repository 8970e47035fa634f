"""From upload to ladder: unpack, check the manifest, build, run the conformance check, enter.

:func:`receive` does what is quick and can be answered at once (size, safe unpacking,
manifest, toolchain, name and version free, author matching the token) and queues the
submission; :class:`Pipeline` builds and checks queued submissions one at a time in a
thread of its own. A bot that passes becomes the league entry ``name@version``; the
author's earlier versions of that bot are retired unless the submission asks to keep
them. Submissions still in progress when the server stopped are started again on the
next start (their folders are kept).
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import ArenaError
from ..league import LeagueError
from . import build as steps
from . import store
from .package import MANIFEST, Caps, Manifest, PackageError, check_toolchain, parse_manifest, run_argv, unpack

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Settings:
    """How submissions are handled."""

    caps: Caps = Caps()
    build_timeout_s: float = 300
    check_timeout_s: float = 300
    tier: str = "strict"
    move_ms: int = 2000


def packages_dir(league_path: Path) -> Path:
    """Where unpacked packages live: ``LEAGUE.db.bots/`` next to the league file."""
    return Path(f"{league_path}.bots")


def receive(league, author: str, data: bytes, keep_previous: bool = False, settings: Settings = Settings()) -> dict:
    """Check and queue an uploaded archive from ``author``; the queued submission.

    :class:`PackageError` (a sentence) for anything wrong with the package itself."""
    root = packages_dir(league.path)
    root.mkdir(exist_ok=True)
    stamp = f"{time.time_ns():x}"
    dest = root / f"upload-{stamp}"
    folder = unpack(data, dest, settings.caps)
    try:
        manifest = parse_manifest((folder / MANIFEST).read_text(encoding="utf-8", errors="replace"))
        if manifest.author != author:
            raise PackageError(f"bot.toml: author is {manifest.author!r}, but the token belongs to {author}")
        check_toolchain(manifest)
        owner = store.owner_of(league, manifest.name)
        if owner is not None and owner != author:
            raise PackageError(f"the bot name {manifest.name!r} belongs to {owner}; choose another name")
        if store.by_entry(league, manifest.entry) or any(e.name == manifest.entry for e in league.entries()):
            raise PackageError(f"{manifest.entry} was already submitted; raise the version in bot.toml")
        final = root / f"{manifest.name}@{manifest.version}"
        if final.exists():
            shutil.rmtree(final)  # left by a submission that was rejected before
        dest.rename(final)
        folder = final / folder.relative_to(dest)
        sid = store.add_submission(league, author, manifest, folder, keep_previous)
        return store.submission(league, sid)
    finally:
        shutil.rmtree(dest, ignore_errors=True)


def process(league, sid: int, settings: Settings = Settings()) -> dict:
    """Build, check and (if it passes) enter the submission ``sid``; the finished submission."""
    sub = store.submission(league, sid)
    manifest = Manifest(**dict(sub["manifest"], toolchain=tuple(sub["manifest"]["toolchain"])))
    folder = Path(sub["folder"])
    build_log = ""
    if manifest.build:
        store.update_submission(league, sid, status="building")
        step = steps.build(folder, manifest.build, settings.build_timeout_s, settings.tier)
        build_log = f"$ {manifest.build}\n{step.log}" + (f"\n[exit code {step.code}]" if step.code else "")
        store.update_submission(league, sid, build_log=build_log, sandbox={"build": step.sandbox})
        if not step.ok:
            why = "reached the time limit" if step.timed_out else f"exited with code {step.code}"
            return _finish(league, sid, "build failed", f"the build command {why}; see the build log")
    else:
        build_log = "(no build command)"
        store.update_submission(league, sid, build_log=build_log)
    try:
        argv = run_argv(manifest, folder)
    except PackageError as exc:
        return _finish(league, sid, "build failed", str(exc))
    store.update_submission(league, sid, status="checking", argv=argv)
    report, step = steps.check(argv, settings.check_timeout_s, settings.tier, settings.move_ms)
    sandbox = dict(store.submission(league, sid)["sandbox"] or {}, check=step.sandbox)
    store.update_submission(league, sid, check_report=report, sandbox=sandbox)
    if not report.get("ok"):
        failed = [c for c in report.get("checks", []) if not c.get("ok")]
        why = f"{failed[0]['name']}: {failed[0]['detail']}" if failed else report.get("error", "no report")
        return _finish(league, sid, "check failed", f"the conformance check failed ({why})")
    try:
        league.add(manifest.entry, cmd=argv)
    except LeagueError as exc:
        return _finish(league, sid, "rejected", str(exc))
    retired = []
    if not sub["keep_previous"]:
        mine = {s["entry"] for s in store.submissions(league, "author = ? AND name = ? AND status = 'accepted'",
                                                       (sub["author"], sub["name"]))}
        for e in league.entries(active_only=True):
            if e.name in mine and e.name != manifest.entry:
                league.retire(e.name)
                retired.append(e.name)
    note = f"; retired {', '.join(retired)}" if retired else ""
    return _finish(league, sid, "accepted", f"passed every check and entered the ladder as {manifest.entry}{note}")


def _finish(league, sid: int, status: str, verdict: str) -> dict:
    store.update_submission(league, sid, status=status, verdict=verdict, finished=time.time())
    return store.submission(league, sid)


class Pipeline:
    """Processes queued submissions one at a time in a background thread."""

    def __init__(self, league_path: Path, settings: Settings = Settings()):
        self.league_path = Path(league_path)
        self.settings = settings
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="submissions", daemon=True)

    def start(self) -> None:
        """Start the thread (it first picks up what a previous run left in progress)."""
        self.thread.start()

    def stop(self) -> None:
        """Ask the thread to stop after the current step."""
        self.stopping.set()
        self.wake.set()

    def _loop(self) -> None:
        league = store.open_league(self.league_path)
        try:
            while not self.stopping.is_set():
                queued = store.submissions(league, "status IN ('queued', 'building', 'checking')")
                if not queued:
                    self.wake.wait(5)
                    self.wake.clear()
                    continue
                sid = queued[-1]["id"]  # oldest first
                try:
                    process(league, sid, self.settings)
                except (ArenaError, OSError) as exc:
                    _finish(league, sid, "rejected", f"the submission could not be processed ({exc})")
                except Exception as exc:  # keep the server going; the author sees why
                    log.exception("submission %s", sid)
                    _finish(league, sid, "rejected", f"internal error while processing ({type(exc).__name__})")
        finally:
            league.close()

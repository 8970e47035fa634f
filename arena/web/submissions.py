"""From upload to ladder: unpack, check the manifest, build, run the conformance check, enter.

:func:`receive` does what is quick and can be answered at once (size, safe unpacking,
manifest, toolchain, name and version free, author matching the token) and queues the
submission; :class:`Pipeline` builds and checks queued submissions one at a time in a
thread of its own, authors in turn (:func:`next_submission`). A bot that passes becomes
the league entry ``name@version``; the author's earlier versions of that bot are retired
unless the submission asks to keep them. Submissions still in progress when the server
stopped are started again on the next start (their folders are kept).

Fairness: a name belongs to the author of its first accepted version and house bots'
names are reserved (:func:`.store.name_refusal`); a failed submission reserves nothing
(its files are removed, its log kept); an author has at most
``Settings.pending_per_author`` submissions in flight and ``Settings.submissions_per_hour``
an hour (:class:`QuotaExceeded`, HTTP 429); only toolchains the build tier can run are
accepted (:func:`offered_toolchains`).
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import ArenaError
from ..league import LeagueError
from ..packages import build as steps
from . import store
from ..packages.package import MANIFEST, Caps, Manifest, PackageError, parse_manifest, run_argv, unpack

log = logging.getLogger(__name__)
#: Toolchain names a manifest may use for one of :data:`.build.PROBES`.
TOOLCHAIN_ALIASES = {"python": "python3", "nodejs": "node", "c": "cc", "gcc": "cc", "clang": "cc", "cargo": "rust"}


@dataclass(frozen=True)
class Settings:
    """How submissions are handled and how the league is played."""

    caps: Caps = Caps()
    build_timeout_s: float = 300
    check_timeout_s: float = 300
    tier: str = "strict"              # builds and conformance checks
    game_tier: str = "strict"         # league games of submitted bots
    move_ms: int = 2000
    build_memory_mb: int = 1024       # memory of a build's or a check's whole process tree
    submissions_per_hour: int = 10    # per author
    pending_per_author: int = 2       # submissions of one author queued, building or checking at once
    pace: float = 30.0                # league games per minute; 0: as fast as the workers go
    live_delay: int = 0               # moves the public view of a game in flight lags behind it
    public_build_logs: bool = False   # build logs shown to everyone, not only to their author


class QuotaExceeded(PackageError):
    """An author over a submission limit (HTTP 429); ``retry_after`` in seconds."""

    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after


_receiving = threading.Lock()  # one upload is entered at a time (its folder, its name, its quota)


def packages_dir(league_path: Path) -> Path:
    """Where unpacked packages live: ``LEAGUE.db.bots/`` next to the league file (mode 0700:
    a bot reaches its own package only, through the sandbox's bind mount or path bridge)."""
    return Path(f"{league_path}.bots")


def private_paths(league_path: Path) -> list[str]:
    """What no bot and no build may see: the league file (tokens, logs, every author's
    data) with its log and lock files, the folder of packages, the replays, and everything
    else in the league's folder (an operator's backups, the server's log), whatever folder
    it lies in. The folder is named whole, and each thing in it too (the sandbox shows a
    bot its own package, inside the folder of packages, so it covers the rest piece by
    piece: every other entry of the league's folder and every other package)."""
    base = str(league_path)
    out = [base, base + "-wal", base + "-shm", base + ".lock", str(packages_dir(league_path)), base + ".replays"]
    folder = Path(league_path).resolve().parent
    out.append(str(folder))
    for root in (folder, packages_dir(Path(league_path).resolve())):
        try:
            out += [str(root / name) for name in sorted(os.listdir(root))]
        except OSError:
            pass
    return list(dict.fromkeys(out))


def protect(league_path: Path) -> list[str]:
    """Close the league's files to everyone but the server's user: the league file and its
    log, shared-memory and lock files 0600, the folders of packages, replays, bots' stderr
    logs and games in flight 0700 (a bot
    reaches its own package only through the sandbox's bind mount or path bridge).
    Returns what could not be done, as sentences."""
    notes = []
    base = str(league_path)
    for name in (base, base + "-wal", base + "-shm", base + ".lock"):
        if os.path.exists(name):
            try:
                os.chmod(name, 0o600)
            except OSError as exc:
                notes.append(f"cannot make {name} private ({exc.strerror})")
    for folder in (packages_dir(league_path), Path(base + ".replays"), Path(base + ".logs"), Path(base + ".live")):
        try:
            folder.mkdir(mode=0o700, exist_ok=True)
            os.chmod(folder, 0o700)
        except OSError as exc:
            notes.append(f"cannot make {folder} private ({exc.strerror})")
    if os.geteuid() != 0:
        notes.append("the server does not run as root, so bots and builds run as its own user: only the "
                     "strict tier's private view of the file system keeps the league file out of their reach")
    return notes


def offered_toolchains(settings: Settings = Settings()) -> dict[str, str]:
    """The toolchains a package may ask for: those the build tier can really run."""
    return steps.runnable_toolchains(settings.tier)


def check_quota(league, author: str, settings: Settings) -> None:
    """:class:`QuotaExceeded` if ``author`` may not submit now (pending or hourly quota)."""
    now = time.time()
    pending = store.pending_of(league, author)
    if settings.pending_per_author and pending >= settings.pending_per_author:
        raise QuotaExceeded(f"{author} already has {pending} submission{'s' if pending != 1 else ''} waiting or "
                            f"being built (at most {settings.pending_per_author} at once); wait for "
                            f"{'them' if pending != 1 else 'it'} to finish", 60)
    if settings.submissions_per_hour:
        recent = store.submitted_since(league, author, now - 3600)
        if len(recent) >= settings.submissions_per_hour:
            wait = max(1, int(recent[-settings.submissions_per_hour] + 3600 - now) + 1)
            raise QuotaExceeded(f"{author} has made {len(recent)} submissions in the last hour, the most this "
                                f"league takes; try again in {(wait + 59) // 60} min", wait)


def receive(league, author: str, data: bytes, keep_previous: bool = False, settings: Settings = Settings()) -> dict:
    """Check and queue an uploaded archive from ``author``; the queued submission.

    :class:`PackageError` (a sentence) for anything wrong with the package itself,
    :class:`QuotaExceeded` for an author over a limit."""
    with _receiving:
        check_quota(league, author, settings)
        root = packages_dir(league.path)
        root.mkdir(mode=0o700, exist_ok=True)
        os.chmod(root, 0o700)
        stamp = f"{time.time_ns():x}"
        dest = root / f"upload-{stamp}"
        folder = unpack(data, dest, settings.caps)
        try:
            manifest = parse_manifest((folder / MANIFEST).read_text(encoding="utf-8", errors="replace"))
            if manifest.author != author:
                raise PackageError(f"bot.toml: author is {manifest.author!r}, but the token belongs to {author}")
            offered = offered_toolchains(settings)
            missing = [t for t in manifest.toolchain if TOOLCHAIN_ALIASES.get(t, t) not in offered]
            if missing:
                have = ", ".join(offered) or "none of the known ones"
                raise PackageError(f"bot.toml: this server has no {missing[0]!r} toolchain that its sandboxed "
                                   f"builds can run (they can run: {have})")
            refusal = store.name_refusal(league, manifest.name, author)
            if refusal:
                raise PackageError(refusal)
            if store.live_submission(league, manifest.entry) or any(e.name == manifest.entry for e in league.entries()):
                raise PackageError(f"{manifest.entry} was already submitted; raise the version in bot.toml")
            final = root / f"{manifest.name}@{manifest.version}"
            if final.exists():
                shutil.rmtree(final)  # left by a submission that failed before (it reserves nothing)
            dest.rename(final)
            folder = final / folder.relative_to(dest)
            try:
                sid = store.add_submission(league, author, manifest, folder, keep_previous)
            except sqlite3.IntegrityError:
                raise PackageError(f"{manifest.entry} was already submitted; raise the version in bot.toml") from None
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
        step = steps.build(folder, manifest.build, settings.build_timeout_s, settings.tier, settings.build_memory_mb,
                           hide=private_paths(league.path))
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
    report, step = steps.check(argv, settings.check_timeout_s, settings.tier, settings.move_ms, program_dir=folder,
                               memory_mb=settings.build_memory_mb, hide=private_paths(league.path))
    sandbox = dict(store.submission(league, sid)["sandbox"] or {}, check=step.sandbox)
    store.update_submission(league, sid, check_report=report, sandbox=sandbox)
    if not report.get("ok"):
        failed = [c for c in report.get("checks", []) if not c.get("ok")]
        why = f"{failed[0]['name']}: {failed[0]['detail']}" if failed else report.get("error", "no report")
        return _finish(league, sid, "check failed", f"the conformance check failed ({why})")
    refusal = store.name_refusal(league, manifest.name, sub["author"])
    if refusal:  # another author's version of the name was accepted while this one waited
        return _finish(league, sid, "rejected", refusal)
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
    sub = store.submission(league, sid)
    if status != "accepted":  # its log and verdict are kept; its files will never run
        root = packages_dir(league.path)
        top = root / sub["entry"]
        if top.parent == root and top.is_dir() and not top.is_symlink():
            shutil.rmtree(top, ignore_errors=True)
    return sub


def next_submission(waiting: list[dict], served: dict[str, float]) -> dict | None:
    """The fair next one of ``waiting`` (submissions in progress or queued, any order).

    One interrupted by a restart (building, checking) goes first; otherwise authors take
    turns: the author served longest ago (``served``: author -> when their last submission
    was taken; never served counts as first) gets their oldest queued submission. So one
    author's many submissions delay another author's by at most one submission."""
    if not waiting:
        return None
    started = [s for s in waiting if s["status"] != "queued"]
    if started:
        return min(started, key=lambda s: s["id"])
    oldest: dict[str, dict] = {}
    for s in sorted(waiting, key=lambda s: s["id"]):
        oldest.setdefault(s["author"], s)
    author = min(oldest, key=lambda a: (served.get(a, 0.0), oldest[a]["id"]))
    return oldest[author]


class Pipeline:
    """Processes waiting submissions one at a time, authors in turn, in a background thread."""

    def __init__(self, league_path: Path, settings: Settings = Settings()):
        self.league_path = Path(league_path)
        self.settings = settings
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.served: dict[str, float] = {}
        self.thread = threading.Thread(target=self._loop, name="submissions", daemon=True)

    def start(self) -> None:
        """Close the league's files to others (:func:`protect`) and start the thread (it first
        picks up what a previous run left in progress, and finds which toolchains the build
        tier can run)."""
        for note in protect(self.league_path):
            log.warning("%s", note)
        self.thread.start()

    def stop(self) -> None:
        """Ask the thread to stop after the current step."""
        self.stopping.set()
        self.wake.set()

    def _loop(self) -> None:
        try:
            offered_toolchains(self.settings)
        except Exception:  # noqa: BLE001 - the next upload probes again and says why
            log.exception("probing the toolchains")
        league = store.open_league(self.league_path)
        try:
            while not self.stopping.is_set():
                waiting = store.submissions(league, "status IN ('queued', 'building', 'checking')")
                pick = next_submission(waiting, self.served)
                if pick is None:
                    self.wake.wait(5)
                    self.wake.clear()
                    continue
                sid = pick["id"]
                self.served[pick["author"]] = time.time()
                try:
                    process(league, sid, self.settings)
                except (ArenaError, OSError) as exc:
                    _finish(league, sid, "rejected", f"the submission could not be processed ({exc})")
                except Exception as exc:  # keep the server going; the author sees why
                    log.exception("submission %s", sid)
                    _finish(league, sid, "rejected", f"internal error while processing ({type(exc).__name__})")
        finally:
            league.close()

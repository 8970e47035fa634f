"""Worker side of the cluster executor: a Dask worker plugin and the function every game runs.

:class:`ArenaWorker` is registered by the coordinator for one run (its name derives from
the run's output folder, so a resumed run replaces what a killed coordinator left). On
each worker it keeps

- a :class:`~arena.process.pool.ProcessPool` per worker thread: live bot processes are
  reused across games exactly as on a local worker;
- a private folder (mode 0711, under the worker's temporary folder) with the bundles this
  worker has unpacked (``bundles/HASH``, built there once when the folder is a bot package
  with a ``build`` step) and the logs of games in flight.

:func:`play_remote` plays one game (:func:`play_batch` several in a row, one Dask task): it checks that this worker can give the sandbox tier
the game asks for -- the tier is decided here, where the bots run: ``auto`` is the strongest
tier this worker offers (strict where its bubblewrap works), whatever the coordinator's
machine can run; a worker that cannot give a named tier (or, for command-line bots, any
tier that keeps them away from the arena) refuses the game with :class:`TierRefused` -- the
coordinator sends it to another worker; a game is never played in a weaker tier than it
asked for, and its record says the tier it had and the one it asked for (``requested``) --, unpacks the bundles the game needs, rewrites the seats' commands to run from
them, plays the game with :func:`arena.execution.work.execute`, and -- when the
request says ``return_files`` -- moves the replay and each seat's stderr log into the
record (``outcome["replay_text"]``, ``seat["stderr_text"]``) and deletes them here, so a
worker keeps nothing of a game and writes nothing the coordinator must read. A bot whose
process goes back to the pool may still write to its game's log after ``game_over``: what
it writes later travels with the worker's next batch (``late`` beside the batch's
records) or, at the end of the run, in the answer of :func:`finish_logs`, and the
coordinator appends it to that game's log -- so every line a bot writes reaches the log a
local run would have put it in. When the plugin is removed (the run ended) or the worker
closes, the pool's processes are killed and the folder is deleted.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
import time
import uuid
from pathlib import Path

from ..errors import ArenaError
from ..execution.work import describe, execute, uses_pool

log = logging.getLogger("arena.cluster")


class TierRefused(ArenaError):
    """This worker cannot give the sandbox tier the game asks for; another worker may."""

    def __init__(self, worker: str, tier: str, why: str):
        super().__init__(f"worker {worker} cannot give the {tier} sandbox tier: {why}")
        self.worker, self.tier, self.why = worker, tier, why

    def __reduce__(self):
        return (TierRefused, (self.worker, self.tier, self.why))


try:
    from distributed.diagnostics.plugin import WorkerPlugin as _Plugin
except ImportError:  # the project without its cluster extra: the class still imports
    _Plugin = object


#: how long a run's plugin keeps its bots and bundles on a worker without word from its
#: coordinator (games, or the renewal it sends every third of this)
LEASE_S = 120.0
#: the scheduler's metadata under which each run's coordinator stamps its lease
#: (``{"at": time.time(), "lease_s": ...}``, renewed with the workers' leases): the word a
#: worker that joins, or whose lease lapsed, asks for before it sets a run up or has the
#: scheduler forget it
LEASE_KEY = "arena-lease"


def stamp_lease(client, name: str, lease_s: float | None) -> None:
    """The coordinator's word on the scheduler that run ``name`` goes on (None: it ended)."""
    client.set_metadata([LEASE_KEY, name], None if lease_s is None else {"at": time.time(), "lease_s": lease_s})


def lease_lapsed(stamp, now: float | None = None) -> bool:
    """Whether a stamp of :func:`stamp_lease` is older than its lease."""
    if not isinstance(stamp, dict):
        return False
    try:
        return (time.time() if now is None else now) - float(stamp["at"]) > float(stamp["lease_s"])
    except (KeyError, TypeError, ValueError):
        return False


async def _stamp_of(worker, name: str) -> tuple[bool, object]:
    """``(asked, stamp)``: the run's lease stamp on the scheduler, asked from a worker."""
    import asyncio

    try:
        stamp = await asyncio.wait_for(worker.scheduler.get_metadata(keys=[LEASE_KEY, name], default=None), 10)
    except Exception:  # the scheduler is away: nothing is decided on no word
        return False, None
    return True, stamp


class ArenaWorker(_Plugin):
    """The Dask worker plugin of one run (see the module docstring).

    Its pools and bundles are held on a *lease*: every game renews it, and so does the
    coordinator (:func:`renew_lease`, every third of ``lease_s``) while the run lasts. A
    lease that lapses -- the coordinator was killed and the run never resumed -- ends the
    pools and deletes the folder (a run that comes back sets it up again).

    A lapsed lease also lapses on the scheduler: the coordinator stamps its lease there too
    (:func:`stamp_lease`), and a worker whose lease lapsed has the scheduler forget the
    plugin when that stamp lapsed as well -- it is removed from every worker and a worker
    that joins later does not get it; a worker that joins while a lapsed run is still
    registered does not set it up, and has it forgotten."""

    idempotent = False

    def __init__(self, name: str, lease_s: float = LEASE_S):
        self.name = name
        self.lease_s = float(lease_s)
        self.root: Path | None = None
        self.pools: dict[int, object] = {}
        self.lock = threading.Lock()
        self.built: dict[str, threading.Lock] = {}
        self.worker_address = ""
        self.renewed = time.monotonic()
        self.active = 0  # games playing now
        self.lapsed = False
        self._watch: threading.Thread | None = None
        self._closed = threading.Event()
        self.tails: dict[int, list[_Tail]] = {}  # per worker thread: game logs that may still grow
        self.worker = None  # the Dask worker it was set up on

    def __getstate__(self):
        return {"name": self.name, "lease_s": self.lease_s}

    def __setstate__(self, state):
        self.__init__(state["name"], state.get("lease_s", LEASE_S))

    # -- the lease --------------------------------------------------------------------
    def renew(self) -> None:
        """Word from the coordinator: the run goes on."""
        self.renewed = time.monotonic()

    def overdue(self) -> bool:
        """The lease lapsed: no game and no renewal for ``lease_s``."""
        return self.active == 0 and time.monotonic() - self.renewed > self.lease_s

    def _watch_lease(self) -> None:
        while not self._closed.wait(min(5.0, max(0.2, self.lease_s / 4))):
            if self.root is not None and self.overdue():
                log.warning("the lease of %s lapsed: its bots and bundles are removed", self.name)
                self.lapsed = True
                self.teardown()
                self.forget_later()

    def forget_later(self) -> None:
        """Have the scheduler forget this run's plugin if its coordinator's stamp lapsed too."""
        worker = self.worker
        loop = getattr(worker, "loop", None)
        if loop is not None:
            try:
                loop.add_callback(self._forget, worker)
            except RuntimeError:  # the worker's loop is closed: the worker is going
                pass

    async def _forget(self, worker) -> None:
        asked, stamp = await _stamp_of(worker, self.name)
        if not asked or (stamp is not None and not lease_lapsed(stamp)):
            return  # no word, or the run goes on (resumed): it stays
        log.warning("the run %s lapsed: the scheduler forgets its plugin", self.name)
        try:
            await worker.scheduler.unregister_worker_plugin(name=self.name)
        except Exception:  # another worker had it forgotten first
            pass

    # -- the plugin's life ------------------------------------------------------------
    def setup(self, worker=None):
        """Set up on a worker (Dask awaits what this returns): unless the run's lease lapsed
        on the scheduler, before this worker joined."""
        if worker is None or getattr(worker, "loop", None) is None:
            return self._setup(worker)
        return self._setup_unless_lapsed(worker)

    async def _setup_unless_lapsed(self, worker) -> None:
        self.worker = worker
        asked, stamp = await _stamp_of(worker, self.name)
        if asked and lease_lapsed(stamp):
            log.warning("the run %s lapsed before this worker joined: it is not set up here", self.name)
            self.lapsed = True
            self.forget_later()
            return
        self._setup(worker)

    def _setup(self, worker=None) -> None:
        self.worker = worker
        self.worker_address = getattr(worker, "address", "") or ""
        self.renewed = time.monotonic()
        self.lapsed = False
        if worker is not None:
            drop_lapsed(worker, keep=self.name)  # what runs whose coordinators are gone left
        if self._watch is None:
            self._watch = threading.Thread(target=self._watch_lease, name=f"lease-{self.name}", daemon=True)
            self._watch.start()
        _sweep()
        from ..process.sandbox import sweep_stale

        sweep_stale()  # what bots of killed workers left, as every local run does at its start
        # inside the Dask worker's own folder where there is one: a worker process that was
        # killed has its folder purged by the next worker that starts there
        base = getattr(worker, "local_directory", None) or tempfile.gettempdir()
        # the bots' working folders too (the sandbox's state folder), for the same reason --
        # in a worker process of its own (a nanny's), whose environment is the worker's alone
        import multiprocessing

        if worker is not None and multiprocessing.parent_process() is not None:
            os.environ.setdefault("ARENA_SANDBOX_ROOT", base)
        root = Path(tempfile.mkdtemp(prefix=f"arena-worker-{os.getpid()}-", dir=base))
        os.chmod(root, 0o711)  # bots of the basic tier run as another user: they may enter, not list
        (root / "bundles").mkdir(mode=0o711)
        (root / "logs").mkdir(mode=0o700)
        (root / "replays").mkdir(mode=0o700)
        self.root = root

    def teardown(self, worker=None) -> None:
        if worker is not None:  # removed (the run ended) or the worker closes: the watch ends too
            self._closed.set()
        with self.lock:
            pools, self.pools = self.pools, {}
        for pool in pools.values():
            try:
                pool.close()
            except Exception:  # closing is best effort: the folder must still go
                log.exception("closing a bot pool")
        with self.lock:
            self.tails = {}
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None
        _sweep()  # a worker process killed during the run: its folder goes too

    # -- per game ---------------------------------------------------------------------
    def pool(self):
        """This thread's pool of live bot processes."""
        from ..process.pool import ProcessPool

        ident = threading.get_ident()
        with self.lock:
            pool = self.pools.get(ident)
            if pool is None:
                pool = self.pools[ident] = ProcessPool()
            return pool

    def keep_tail(self, source, sent: int, folder: str | None, name: str | None) -> None:
        """A game's log, ``sent`` bytes of it in the record: what its bot writes after that
        (after ``game_over``, while its process waits in the pool) goes to ``folder/name``
        on the coordinator later (:meth:`late`)."""
        if folder and name:
            with self.lock:
                self.tails.setdefault(threading.get_ident(), []).append(_Tail(source, sent, folder, name))

    def late(self, everything: bool = False) -> list[tuple[str, str, bytes]]:
        """``(folder, name, bytes)`` the bots of this thread's games wrote to their logs
        since they were sent (every thread's with ``everything``); a log whose process went
        on to another game, or ended, is read a last time and forgotten."""
        me = threading.get_ident()
        with self.lock:
            threads = list(self.tails) if everything else [me]
            found = {t: self.tails.pop(t, []) for t in threads}
            pools = [self.pools[t] for t in threads if t in self.pools]
        open_logs = {_log_key(entry.bot.transport.stderr_path) for pool in pools
                     for queue in list(getattr(pool, "idle", {}).values()) for entry in list(queue)}
        out, keep = [], {}
        for thread, tails in found.items():
            for tail in tails:
                data = tail.more()
                if data:
                    out.append((tail.folder, tail.name, data))
                if _log_key(tail.source) in open_logs:
                    keep.setdefault(thread, []).append(tail)
                else:
                    tail.forget()
        with self.lock:
            for thread, tails in keep.items():
                self.tails.setdefault(thread, [])[:0] = tails
        return out

    def bundle_dir(self, digest: str, data) -> Path:
        """The unpacked (and built) bundle ``digest``: unpacked once per worker."""
        from ..packages.bundle import unpack

        with self.lock:
            gate = self.built.setdefault(digest, threading.Lock())
        with gate:
            dest = self.root / "bundles" / digest
            if dest.is_dir():
                return dest
            staging = self.root / "bundles" / f".{digest}.{uuid.uuid4().hex}"
            try:
                unpack(data if isinstance(data, (bytes, bytearray)) else bytes(data), staging)
                _build(staging)
                _open_up(staging)
                staging.rename(dest)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
            return dest


class _Tail:
    """A game's stderr log on this worker (a :class:`~arena.process.transport.MemoryLog`,
    or a file of a game function's own) and how much of it the coordinator has."""

    __slots__ = ("source", "sent", "folder", "name")

    def __init__(self, source, sent: int, folder: str, name: str):
        self.source, self.sent, self.folder, self.name = source, sent, folder, name

    def more(self) -> bytes:
        """What was written since it was last sent."""
        if isinstance(self.source, (str, os.PathLike)):
            try:
                with open(self.source, "rb") as f:
                    f.seek(self.sent)
                    data = f.read()
            except OSError:
                return b""
        else:
            data = bytes(self.source.data[self.sent:])
        self.sent += len(data)
        return data

    def forget(self) -> None:
        """Nothing more will come: a file goes."""
        if isinstance(self.source, (str, os.PathLike)):
            try:
                os.unlink(self.source)
            except OSError:
                pass


def _log_key(source):
    """What a bot's process writes its stderr to, as a comparable key (a log object by identity)."""
    if source is None:
        return None
    return ("file", str(source)) if isinstance(source, (str, os.PathLike)) else ("log", id(source))


def finish_logs(name: str, dask_worker=None) -> list[tuple[str, str, bytes]]:
    """Run on every worker by the coordinator at the end of a run, before its plugin goes:
    close the run's bot processes (each reads ``quit`` after its last ``game_over``, as at
    the end of a local run) and return what they wrote since their games were sent."""
    plugin = (dask_worker.plugins if dask_worker is not None else {}).get(name)
    if plugin is None or not isinstance(plugin, ArenaWorker):
        return []
    with plugin.lock:
        # the pools stay the plugin's: a game still in flight gives its bots back to its
        # thread's pool, which the plugin's teardown closes
        pools = list(plugin.pools.values())
    for pool in pools:
        try:
            pool.close()
        except Exception:  # closing is best effort: the logs are still read
            log.exception("closing a bot pool")
    return plugin.late(everything=True)


def renew_lease(name: str, dask_worker=None) -> bool:
    """Run on every worker by the coordinator (``client.run``): renew the run ``name``'s lease."""
    plugin = (dask_worker.plugins if dask_worker is not None else {}).get(name)
    if plugin is None or not isinstance(plugin, ArenaWorker):
        return False
    plugin.renew()
    return True


def drop_lapsed(worker, keep: str | None = None, everything: bool = False) -> list[str]:
    """Remove the arena plugins of ``worker`` whose lease lapsed (all of them but ``keep``
    with ``everything``): their bots end, their folders go. Returns their names."""
    gone = []
    for name, plugin in list(worker.plugins.items()):
        if not isinstance(plugin, ArenaWorker) or name == keep:
            continue
        if everything or plugin.overdue() or plugin.lapsed:
            plugin._closed.set()
            plugin.teardown()
            worker.plugins.pop(name, None)
            gone.append(name)
            if not everything:
                plugin.worker = plugin.worker or worker
                plugin.forget_later()  # and on the scheduler, when its stamp lapsed there too
    return gone


def worker_status(dask_worker=None) -> dict:
    """What the arena keeps on this worker (``arena cluster status``): each run's plugin with
    its lease, live bot processes and unpacked bundles; the sandbox tier it can give."""
    from ..process.sandbox import best_tier

    runs = []
    for name, plugin in (dask_worker.plugins if dask_worker is not None else {}).items():
        if not isinstance(plugin, ArenaWorker):
            continue
        bundles = len(list((plugin.root / "bundles").iterdir())) if plugin.root and (plugin.root / "bundles").is_dir() else 0
        bots = sum(len(q) for pool in list(plugin.pools.values()) for q in list(getattr(pool, "idle", {}).values()))
        runs.append({"run": name, "idle_s": round(time.monotonic() - plugin.renewed, 1), "lease_s": plugin.lease_s,
                     "lapsed": plugin.lapsed or plugin.overdue(), "games_playing": plugin.active,
                     "bot_processes": bots, "bundles": bundles, "folder": str(plugin.root) if plugin.root else None})
    tier, why = best_tier()
    return {"tier": tier or "none", "not_strict": why, "runs": runs,
            "name": _name(dask_worker)}


def worker_tier(dask_worker=None) -> dict:
    """The sandbox tier ``auto`` gives on this worker and why it is not strict (run on every
    worker by the coordinator when workers join: the run names each worker's tier)."""
    from ..process.sandbox import best_tier

    tier, why = best_tier()
    return {"tier": tier, "not_strict": why, "name": _name(dask_worker)}


def _name(dask_worker) -> str:
    """The worker's name (``dask worker --name``; Dask numbers unnamed ones from 0)."""
    name = getattr(dask_worker, "name", None)
    return "" if name is None else str(name)


def clean_worker(everything: bool = False, dask_worker=None) -> list[str]:
    """``arena cluster clean``: remove what lapsed runs left on this worker (every run's with
    ``everything``: only when no coordinator is playing)."""
    return drop_lapsed(dask_worker, everything=everything) if dask_worker is not None else []


def _sweep() -> None:
    """Remove the folders of worker processes that died without tearing down (killed)."""
    base = Path(tempfile.gettempdir())
    for path in base.glob("arena-worker-*-*"):
        owner = path.name.split("-")[2]
        if owner.isdigit() and int(owner) != os.getpid() and not _running(int(owner)):
            shutil.rmtree(path, ignore_errors=True)


def _running(pid: int) -> bool:
    """Alive and not a zombie (a killed worker its nanny has not reaped yet is gone)."""
    from ..process.cgroups import pid_running

    return pid_running(pid)


def _build(folder: Path) -> None:
    """Run a bot package's ``build`` step once, in the sandbox, in its unpacked folder."""
    manifest = folder / "bot.toml"
    if not manifest.is_file():
        return
    from ..packages.package import parse_manifest

    spec = parse_manifest(manifest.read_text(encoding="utf-8"), str(manifest))
    if not spec.build:
        return
    from ..process.sandbox import best_tier
    from ..packages.build import build

    tier = best_tier()[0] or "basic"
    step = build(folder, spec.build, tier=tier)
    if step.code != 0:
        raise ArenaError(f"the build of the bot package {spec.name} failed on this worker "
                         f"({'timed out' if step.timed_out else f'exit code {step.code}'}): {step.log[-500:]}")


def _open_up(folder: Path) -> None:
    """Folders 0755 and files readable by all: a basic-tier bot runs as another user."""
    for root, dirs, files in os.walk(folder):
        os.chmod(root, 0o755)
        for name in files:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode | 0o444)


def _plugin(name: str) -> ArenaWorker:
    from distributed import get_worker

    worker = get_worker()
    plugin = worker.plugins.get(name)
    if plugin is None:
        raise RuntimeError(f"the arena worker plugin {name} is not registered on {worker.address}")
    if plugin.root is None:  # set up lazily: its lease lapsed, and the run came back
        plugin._setup(worker)
    return plugin


class CannotStart(ArenaError):
    """A seat's command cannot start on this worker (a program missing from its PATH)."""


def _check_commands(seats: list[dict], worker: str) -> None:
    """Each command-line seat's programs, found in this worker's own environment (the
    command came as its author typed it); one sentence naming the worker where one is not."""
    from ..botspec import CommandError, locate

    for seat in seats:
        if not seat.get("cmd"):
            continue
        base = seat.get("base")
        try:
            locate(seat["cmd"], base if base and os.path.isdir(base) else None)
        except CommandError as exc:
            raise CannotStart(f"the worker {worker} cannot start bot {seat.get('name')!r}: {exc}") from None


def check_tier(sandbox, worker: str, installed_only: bool = False) -> None:
    """Refuse a game whose tier this worker cannot give: strict without a fallback where
    bubblewrap cannot run; ``auto`` for command-line bots where no tier keeps them away from
    the arena (an ordinary user without bubblewrap; ``installed_only``: every bot is a
    registered one, which basic may hold). ``auto`` is otherwise this worker's strongest tier."""
    from ..process.sandbox import best_tier, strict_missing

    tier = sandbox.get("tier") if isinstance(sandbox, dict) else sandbox
    fallback = sandbox.get("fallback") if isinstance(sandbox, dict) else None
    if tier == "auto":
        best, why = best_tier()
        if best is None and not installed_only:
            raise TierRefused(worker, "strict or basic", why)
        return
    if tier == "strict" and fallback in (None, "strict"):
        why = strict_missing()
        if why:
            raise TierRefused(worker, "strict", why)


def play_remote(payload: dict, bundles: dict | None = None) -> dict:
    """Play one game on this Dask worker; see the module docstring. ``bundles``: hash -> bytes
    (Dask resolves the scattered bundles the game needs before calling this)."""
    from ..referee import _LOG_USAGE

    plugin = _plugin(payload["plugin"])
    request = dict(payload["request"])
    seats = [dict(s) for s in request.get("seats") or []]
    asked = request.get("sandbox") or "auto"
    if payload.get("play") != "inprocess":  # in-process games start no bot process
        check_tier(asked, plugin.worker_address, installed_only=all(s.get("bot") and not s.get("cmd") for s in seats))
    for i, digest, folder in payload.get("bundled") or ():
        from ..packages.bundle import rewrite

        target = plugin.bundle_dir(digest, (bundles or {})[digest])
        seat = seats[i]
        seat["cmd"] = rewrite(list(seat["cmd"]), folder, str(target))
        for key in ("program_dir", "base"):
            if seat.get(key):
                seat[key] = rewrite([seat[key]], folder, str(target))[0]
        if seat.get("read_only"):
            seat["read_only"] = rewrite(list(seat["read_only"]), folder, str(target))
    if payload.get("play") != "inprocess":
        _check_commands(seats, plugin.worker_address)
    request["seats"] = seats
    returned = bool(request.pop("return_files", False))
    referee = payload.get("play") != "inprocess" and payload.get("game_fn") is None
    collect = returned and not referee  # a game function of its own writes files: they are read back
    replay = None
    if returned:
        request["private_paths"] = [str(plugin.root)]
    if returned and referee:
        # the referee keeps the replay and the logs in memory and the record carries them:
        # nothing of the game touches this worker's disk; the paths only name the files
        request["files_in_record"] = True
        request["defer_logs"] = True  # the logs stay open: _send_logs takes their text and keeps their tail
    elif collect:
        if request.get("replay_path"):
            # a folder per game, the file under its own name: the logs are named after it
            replay = plugin.root / "replays" / uuid.uuid4().hex / Path(request["replay_path"]).name
            replay.parent.mkdir(mode=0o700)
            request["replay_path"] = str(replay)
        if request.get("log_dir"):
            request["log_dir"] = str(plugin.root / "logs")  # one folder per run: pooled processes stay keyed alike
    # bot processes live in the worker's pool across games: the referee's, and a game
    # function's of its own that plays through the referee (an experiment's)
    pooled = referee or (payload.get("play") != "inprocess" and uses_pool(payload.get("game_fn")))
    pool = plugin.pool() if pooled else None
    root = plugin.root
    plugin.renew()
    plugin.active += 1
    try:
        reply = execute({**payload, "request": request}, pool)
        record = (reply.get("outcome") or {}).get("sandbox") if isinstance(reply, dict) else None
        if isinstance(record, dict) and record.get("tier"):
            # the tier the game asked for, beside the one this worker gave it
            record.setdefault("requested", asked.get("tier", "auto") if isinstance(asked, dict) else asked)
        if collect:
            _collect(reply["outcome"], replay)
        if returned and isinstance(reply, dict) and isinstance(reply.get("outcome"), dict):
            _send_logs(plugin, reply["outcome"], payload["request"].get("log_dir"))
    finally:
        plugin.active -= 1
        plugin.renew()
        if collect:
            _LOG_USAGE.pop(str(root / "logs"), None)  # the logs leave with the record: nothing kept here
            if replay is not None:
                shutil.rmtree(replay.parent, ignore_errors=True)
        if plugin.root is None:
            # the run ended (or was replaced) while this game played: its bots went back to a
            # pool nobody will use again, and the referee may have made the folder anew
            if pool is not None:
                pool.close()
            shutil.rmtree(root, ignore_errors=True)
    reply["worker"] = f"{reply['worker']} ({plugin.worker_address})" if plugin.worker_address else reply["worker"]
    return reply


def play_batch(payloads: list | bytes, bundles: dict | None = None) -> bytes:
    """Play several games in a row on this Dask worker (one task, so the scheduler's cost is
    paid once for all of them); ``payloads`` may come pickled (the coordinator sends them so:
    Dask walks a task's arguments for futures, and bytes cost it nothing). Each game's result
    is ``("ok", reply)``, ``("error", ArenaError)`` or ``("failed", description)``, so one
    game's failure is not its neighbours'. A run that ended (its plugin removed) plays no further game of the batch:
    the rest come back as ``("skipped", None)``. Beside the results, ``late``: what bots of
    this worker thread's earlier games wrote to their logs after those were sent
    (``(folder, name, bytes)``, see :meth:`ArenaWorker.late`). ``(results, late)`` comes
    pickled: Dask sizes and ships bytes at no cost, where it would walk every record's
    nested dicts."""
    import pickle

    from distributed import get_worker

    if isinstance(payloads, (bytes, bytearray)):
        payloads = pickle.loads(payloads)
    out = []
    for payload in payloads:
        if out and get_worker().plugins.get(payload["plugin"]) is None:  # the run ended
            out += [("skipped", None)] * (len(payloads) - len(out))
            break
        try:
            out.append(("ok", play_remote(payload, bundles)))
        except TierRefused as exc:  # the coordinator reads its worker
            out.append(("error", exc))
        except ArenaError as exc:  # its sentence is all the coordinator reads: a plain one
            out.append(("error", ArenaError(str(exc))))  # pickles whatever the subclass
        except Exception as exc:  # told by its description: not every exception pickles
            out.append(("failed", describe(exc)))
    # the bots' words after game_over that came after their games' records were made
    plugin = get_worker().plugins.get(payloads[0]["plugin"]) if payloads else None
    late = plugin.late() if isinstance(plugin, ArenaWorker) else []
    return pickle.dumps((out, late), protocol=pickle.HIGHEST_PROTOCOL)


def _send_logs(plugin: ArenaWorker, outcome: dict, folder: str | None) -> None:
    """Each seat's log as text in the record, as much as its bot has written now; the log
    is kept (:meth:`ArenaWorker.keep_tail`) for what the bot writes after."""
    from ..process.transport import MemoryLog

    for seat in outcome.get("seats") or []:
        if not isinstance(seat, dict):
            continue
        source = seat.pop("_log_source", None)
        text = seat.get("stderr_text")
        if isinstance(text, MemoryLog):
            data = bytes(text.data)
            seat["stderr_text"] = data.decode("utf-8", "replace")
            plugin.keep_tail(text, len(data), folder, seat.get("stderr_log"))
        elif source is not None:
            plugin.keep_tail(source[0], source[1], folder, seat.get("stderr_log"))


def _collect(outcome: dict, replay: Path | None) -> None:
    """Move the game's replay and logs into its record; delete the replay here (a log goes
    once its bot has moved on: :meth:`ArenaWorker.late`)."""
    path = outcome.get("replay_path")
    for candidate in {p for p in (str(replay) if replay else None, path) if p}:
        try:
            outcome["replay_text"] = Path(candidate).read_text(encoding="utf-8")
            os.unlink(candidate)
        except OSError:
            pass
    outcome["replay_path"] = None
    for seat in outcome.get("seats") or []:
        log_path = seat.get("stderr_log") if isinstance(seat, dict) else None
        if not log_path:
            continue
        try:
            data = Path(log_path).read_bytes()
        except OSError:
            data = None
        seat["stderr_text"] = "" if data is None else data.decode("utf-8", "replace")
        if data is not None:  # the file stays while its bot may still write to it (see _send_logs)
            seat["_log_source"] = (str(log_path), len(data))
        seat["stderr_log"] = os.path.basename(log_path)

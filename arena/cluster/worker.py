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
the game asks for (a worker that cannot refuses the game with :class:`TierRefused` -- the
coordinator sends it to another worker; a game is never played in a weaker tier than it
asked for), unpacks the bundles the game needs, rewrites the seats' commands to run from
them, plays the game with :func:`arena.tournament.executors.execute`, and -- when the
request says ``return_files`` -- moves the replay and each seat's stderr log into the
record (``outcome["replay_text"]``, ``seat["stderr_text"]``) and deletes them here, so a
worker keeps nothing of a game and writes nothing the coordinator must read. When the
plugin is removed (the run ended) or the worker closes, the pool's processes are killed
and the folder is deleted.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
import uuid
from pathlib import Path

from ..errors import ArenaError

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


class ArenaWorker(_Plugin):
    """The Dask worker plugin of one run (see the module docstring)."""

    idempotent = False

    def __init__(self, name: str):
        self.name = name
        self.root: Path | None = None
        self.pools: dict[int, object] = {}
        self.lock = threading.Lock()
        self.built: dict[str, threading.Lock] = {}
        self.worker_address = ""

    def __getstate__(self):
        return {"name": self.name}

    def __setstate__(self, state):
        self.__init__(state["name"])

    # -- the plugin's life ------------------------------------------------------------
    def setup(self, worker=None) -> None:
        self.worker_address = getattr(worker, "address", "") or ""
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
        with self.lock:
            pools, self.pools = self.pools, {}
        for pool in pools.values():
            try:
                pool.close()
            except Exception:  # closing is best effort: the folder must still go
                log.exception("closing a bot pool")
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


def _sweep() -> None:
    """Remove the folders of worker processes that died without tearing down (killed)."""
    base = Path(tempfile.gettempdir())
    for path in base.glob("arena-worker-*-*"):
        owner = path.name.split("-")[2]
        if owner.isdigit() and int(owner) != os.getpid() and not _running(int(owner)):
            shutil.rmtree(path, ignore_errors=True)


def _running(pid: int) -> bool:
    """Alive and not a zombie (a killed worker its nanny has not reaped yet is gone)."""
    from ..process.cgroups import pid_alive

    if not pid_alive(pid):
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


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
    if plugin.root is None:  # set up lazily if the worker did not call setup (it always should)
        plugin.setup(worker)
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


def check_tier(sandbox, worker: str) -> None:
    """Refuse a game whose tier this worker cannot give (strict without a fallback)."""
    from ..process.sandbox import strict_missing

    tier = sandbox.get("tier") if isinstance(sandbox, dict) else sandbox
    fallback = sandbox.get("fallback") if isinstance(sandbox, dict) else None
    if tier == "auto":
        raise TierRefused(worker, "auto", "the coordinator must name a concrete tier")
    if tier == "strict" and fallback in (None, "strict"):
        why = strict_missing()
        if why:
            raise TierRefused(worker, "strict", why)


def play_remote(payload: dict, bundles: dict | None = None) -> dict:
    """Play one game on this Dask worker; see the module docstring. ``bundles``: hash -> bytes
    (Dask resolves the scattered bundles the game needs before calling this)."""
    from ..referee import _LOG_USAGE
    from ..tournament.executors import execute

    plugin = _plugin(payload["plugin"])
    request = dict(payload["request"])
    if payload.get("play") != "inprocess":  # in-process games start no bot process
        check_tier(request.get("sandbox") or "auto", plugin.worker_address)
    seats = [dict(s) for s in request.get("seats") or []]
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
    elif collect:
        if request.get("replay_path"):
            # a folder per game, the file under its own name: the logs are named after it
            replay = plugin.root / "replays" / uuid.uuid4().hex / Path(request["replay_path"]).name
            replay.parent.mkdir(mode=0o700)
            request["replay_path"] = str(replay)
        if request.get("log_dir"):
            request["log_dir"] = str(plugin.root / "logs")  # one folder per run: pooled processes stay keyed alike
    pool = plugin.pool() if referee else None
    root = plugin.root
    try:
        reply = execute({**payload, "request": request}, pool)
        if collect:
            _collect(reply["outcome"], replay)
    finally:
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


def play_batch(payloads: list, bundles: dict | None = None) -> bytes:
    """Play several games in a row on this Dask worker (one task, so the scheduler's cost is
    paid once for all of them); each game's result is ``("ok", reply)``, ``("error",
    ArenaError)`` or ``("failed", description)``, so one game's failure is not its
    neighbours'. A run that ended (its plugin removed) plays no further game of the batch:
    the rest come back as ``("skipped", None)``. The list comes pickled: Dask sizes and
    ships bytes at no cost, where it would walk every record's nested dicts."""
    import pickle

    from ..tournament.executors import _describe

    from distributed import get_worker

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
            out.append(("failed", _describe(exc)))
    return pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)


def _collect(outcome: dict, replay: Path | None) -> None:
    """Move the game's replay and logs into its record; delete them here."""
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
            seat["stderr_text"] = Path(log_path).read_bytes().decode("utf-8", "replace")
            os.unlink(log_path)
        except OSError:
            seat["stderr_text"] = ""
        seat["stderr_log"] = os.path.basename(log_path)

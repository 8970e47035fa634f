"""The cluster executor (the coordinator's side): every game is a task on a Dask distributed cluster.

The coordinator (``arena run``) connects a :class:`distributed.Client` to the scheduler,
submits games lazily (three tasks per worker thread in flight; once a few games have shown
how long one takes, a task plays short games in a row, about ``batch_s`` seconds of them by
their expected times, so the scheduler's cost per task is not paid by every game; near the
end of the run, or of a round that waits for its results, batches shrink so the workers
finish together) and stores results as they come back -- the database stays on the
coordinator's machine. Dask itself re-runs a task whose
worker died; the coordinator follows the scheduler's ``remove-worker`` events and reports
every unexpected worker death with the games it was playing. A task that killed
``distributed.scheduler.allowed-failures`` workers comes back as ``KilledWorker``: it is
rescheduled by the coordinator, at most ``MAX_ATTEMPTS`` times. Workers need the project
installed (``pip install '.[cluster]'``).

Nothing but the scheduler is shared (:mod:`arena.cluster`): every game asks for
``return_files``, so its replay and its bots' logs come back inside its record and the
coordinator writes them to its own output folder; a command-line bot's program folder is
packed once by content hash, scattered to the cluster and unpacked (and built) once per
worker; each worker keeps a pool of live bot processes across games through a worker
plugin registered for the run (and removed at its end: pools closed, folders deleted).
The sandbox tier is decided where the bots run: ``auto`` travels as it is and each worker
gives its strongest tier (strict where its bubblewrap works), whatever the coordinator's own
machine can run -- the coordinator starts no bot and asks nothing of its own sandbox. A
worker that cannot give a named tier (strict without a fallback) refuses the game, which
goes to another worker -- and when no worker can, the run stops with a sentence. The run
names each worker's tier as workers join, every game's record says the tier it had (and
the one it asked for), and the run's last line says when its games did not all have the
same tier.
"""

from __future__ import annotations

import hashlib
import pickle
import socket
import uuid
from collections import deque
from typing import Callable, Iterator

import os
import sys
import threading
import time

from ..errors import ArenaError, UsageError
from ..execution.work import WAIT, GameFailed, count_losses, describe
from .arrivals import Arrivals
from .batching import Timing, take_batch
from .landing import DEFAULT_LOG_TOTAL_MB, Landing
from .shipping import Shipper
from .worker import LEASE_S, ArenaWorker, TierRefused, finish_logs, play_batch, renew_lease, stamp_lease, worker_tier


class SchedulerLost(ArenaError):
    """The coordinator lost its Dask scheduler: the run stops; the same command continues it."""

    event = "scheduler-lost"


def _say(text: str) -> None:
    print(f"arena: {text}", file=sys.stderr, flush=True)


class DaskExecutor:
    """Games as tasks on the Dask scheduler at ``address`` (or on a given ``Client``).

    Elastic: the tasks in flight follow the workers the scheduler has now (a worker that
    joins mid-run gets games at once); the run says how many workers it has, and which
    refuse its sandbox tier, at the start and whenever that changes; a scheduler with no
    worker (a run resumed right after the scheduler restarted) is waited for, said in one
    line, and the games go to the first worker that joins. The run's plugin holds its pools
    and bundles on each worker on a lease (``ARENA_CLUSTER_LEASE_S``, default 120 s) that
    this executor renews, on the workers and on the scheduler (where a worker that joins
    reads it); a lost scheduler is one sentence (:class:`SchedulerLost`). What bots write to
    a game's log after its record left the worker comes with a later batch, or from
    :func:`~arena.cluster.worker.finish_logs` at the end, and is appended to that log."""

    #: tasks in flight per worker thread: enough that a worker never waits for the
    #: scheduler's round trip between two tasks
    queued = 3
    #: a task plays games in a row whose expected times add up to about this many seconds:
    #: the cost of a task to the scheduler, the client and the worker's event loop (10-20 ms
    #: of CPU in all, measured on a LocalCluster) is then shared by the games of a batch,
    #: about 1-2% of a core; a worker that dies takes at most this much play with it (its
    #: games are played again), and an sprt that decides drops at most this much per thread
    batch_s = 1.0
    #: and never more games than this in one task (unless they are shorter than the least)
    max_batch = 16
    #: the shortest task (by its games' expected times, up to ``batch_s``), per worker thread
    #: of the cluster, whatever ``max_batch`` and the end of a run's even shares say: the
    #: coordinator spends 4-5 ms of CPU on every task however short (the client's and the
    #: scheduler's share, measured on a LocalCluster) and one coordinator serves every
    #: worker, so tasks no shorter than 10 ms per thread keep it within half a core whatever
    #: the number of workers (2 threads: 20 ms, a single game of two greedy bots; 16: 0.16 s)
    least_s_per_thread = 0.01

    def __init__(self, address=None, client=None, run: str | None = None, keep: bool = False):
        self.address = address
        self.client = client
        self._own = client is None
        # ``keep``: one executor for many runs (``arena serve``'s rounds): the connection, the
        # worker plugin -- with its bot pools and unpacked, built bundles -- and the scattered
        # bundles stay from run to run until :meth:`shutdown`
        self.keep = keep
        self.lease_s = float(os.environ.get("ARENA_CLUSTER_LEASE_S") or LEASE_S)
        self.echo = _say
        self._asked = "auto"  # the sandbox the run's games ask for (named with the workers' tiers)
        self._renewer: threading.Thread | None = None
        self._renewing = threading.Event()
        self._registered = False
        self._shipper: "Shipper | None" = None
        self._landing = None  # writes the records' files; appends the bots' late lines
        self._log_mb = None  # the folder cap of the run's logs (log_total_mb), for late lines
        # the worker plugin's name: the same for a resumed run of the same output folder, so
        # registering it again replaces what a killed coordinator left on the workers
        ident = f"{socket.gethostname()}:{run}" if run else uuid.uuid4().hex
        self.plugin = "arena-run-" + hashlib.sha256(ident.encode()).hexdigest()[:16]

    def _connect(self):
        try:
            from distributed import Client
        except ImportError:
            raise UsageError("the dask executor needs dask[distributed]: pip install 'project-l-arena[cluster]'") from None
        import logging

        # the client's own log lines (a lost connection's tracebacks) are not the user's
        # business: the run says in its own sentences what happened to the cluster
        for name in ["distributed", *logging.root.manager.loggerDict]:  # distributed sets its own levels
            if name == "distributed" or name.startswith(("distributed.", "tornado")):
                logger = logging.getLogger(name)
                if logger.level != logging.CRITICAL:  # each setLevel clears every logger's cache:
                    logger.setLevel(logging.CRITICAL)  # 50 ms a run, when done for all again
        try:
            return Client(self.address, timeout="10s", set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise UsageError(f"cannot reach the dask scheduler at {self.address} ({describe(exc)}); "
                             "start one with `dask scheduler` (see docs/cluster.md)") from None

    def run(self, tasks: Iterator, payload: Callable, stop: Callable[[], bool],
            on_death: Callable[[list, str], None]) -> Iterator[tuple]:
        """Play ``tasks`` on the cluster; yield ``(task, reply or exception)`` as games finish."""
        client = self.client or self._connect()
        self.client = client
        threads = sum(client.nthreads().values()) or 1
        self._landing = self._landing or Landing()
        self._shipper = self._shipper or Shipper(client)
        if not self._registered:
            stamp_lease(client, self.plugin, self.lease_s)  # first: a worker sets up a run whose stamp holds
            client.register_plugin(ArenaWorker(self.plugin, self.lease_s), name=self.plugin)
            self._registered = True
            self._start_renewing()
        yield from _Run(self, client, threads, tasks, payload, stop, on_death).play()

    def _lost(self) -> str:
        return (f"lost the dask scheduler at {self.address or 'the given client'}: the run stops here, every "
                "game stored so far is kept; run the same command again to continue once the scheduler is back")

    def _start_renewing(self) -> None:
        """Renew the run's lease on every worker, every third of the lease, until shutdown."""
        if self._renewer is not None:
            return
        self._renewing.clear()
        client, name, every = self.client, self.plugin, max(0.2, self.lease_s / 3)

        def renew() -> None:
            while not self._renewing.wait(every):
                try:
                    client.run(renew_lease, name, wait=False)
                    stamp_lease(client, name, self.lease_s)  # the scheduler's word, for workers that join
                except Exception:  # the scheduler is away: the lease may lapse, the run says why
                    pass

        self._renewer = threading.Thread(target=renew, name="arena-lease", daemon=True)
        self._renewer.start()

    def shutdown(self) -> None:
        """End what the runs left on the cluster: every worker closes the run's bot processes
        and deletes its folder (the plugin is removed), the bundles are released; and close
        the connection if this executor opened it."""
        self._renewing.set()
        self._renewer = None
        client = self.client
        if client is None:
            return
        if self._shipper is not None:
            self._shipper.release()
            self._shipper = None
        if self._registered:
            self._registered = False
            if self._landing is not None and not _scheduler_gone(client):
                # the bots' last words: each reads quit after its last game_over, as at the end
                # of a local run, and what it wrote since its game was sent lands in that log
                try:
                    found = client.run(finish_logs, self.plugin, on_error="return")
                except Exception:  # the connection may be gone already
                    found = {}
                for late in found.values():
                    if isinstance(late, list):
                        self._landing.append(late, self._log_mb or DEFAULT_LOG_TOTAL_MB)
            try:
                client.unregister_worker_plugin(self.plugin)
            except Exception:  # the connection may be gone already
                pass
            try:
                stamp_lease(client, self.plugin, None)
            except Exception:  # the connection may be gone already
                pass
        if self._own:
            try:
                client.close()
            except Exception:  # closing is best effort
                pass
            self.client = None


class _Run:
    """One run of games on the cluster (:meth:`DaskExecutor.run`): the workers the scheduler
    has now and the tiers they give, the games looked ahead, submitted in batches and in
    flight, and what comes back -- results landed, deaths reported, lost games rescheduled."""

    def __init__(self, executor: DaskExecutor, client, threads: int, tasks: Iterator, payload: Callable,
                 stop: Callable[[], bool], on_death: Callable[[list, str], None]):
        from distributed import as_completed

        self.ex, self.client = executor, client
        self.tasks, self.payload, self.stop, self.on_death = iter(tasks), payload, stop, on_death
        self.size = {"threads": threads, "checked": time.monotonic(), "said": None, "workers": (), "bots": False}
        self.tiers_said: set = set()  # the workers whose sandbox tier the run named
        self.retry: deque = deque()
        self.attempts: dict[str, int] = {}
        self.submits: dict[str, int] = {}
        self.inflight: dict = {}  # future key -> (future, its games, their requests: where files land)
        self.refusing: set[str] = set()  # workers that refused the run's tier
        self.shipper = executor._shipper
        # the client is not the default one; results are gathered on the client's event loop
        # as games finish, so no thread waits for a round trip to fetch one, and read and
        # landed on a thread of their own (arrivals.py), so this one stores and submits
        self.arrivals = Arrivals(as_completed([], loop=client.loop, with_results=True, raise_errors=False),
                                 executor._landing, self.requests_of, self.log_mb)
        self.deaths: deque = deque()  # appended on the client's event-loop thread, read here
        self.games_of: dict[str, list[str]] = {}  # every submitted future's key -> its games' keys
        self.refused: list[str] = []
        self.timing = Timing()
        self.ahead: deque = deque()  # tasks taken from ``tasks`` and not submitted yet
        self.tiers_seen: dict[str, int] = {}  # the tier each stored game really had
        self.followed = False  # the scheduler's events tell each worker's death
        self.shipper.wait_for_workers = self.wait_for_workers
        self.workers_now()

    # -- the workers ---------------------------------------------------------------------

    def workers_now(self) -> int:
        """Worker threads the scheduler has now (looked up at most once a second), said
        when it changes; the tasks in flight and the look-ahead follow it."""
        size, now = self.size, time.monotonic()
        if now - size["checked"] >= 1.0 or size["said"] is None:
            size["checked"] = now
            try:
                info = self.client.scheduler_info().get("workers") or {}
            except Exception:  # the scheduler is gone: said where a result is awaited
                info = None
            if info is not None:
                size["threads"] = sum(int(w.get("nthreads") or 1) for w in info.values())
                size["workers"] = tuple(info)
                said = (len(info), size["threads"])
                if said != size["said"]:
                    size["said"] = said
                    self.say_size(said)
                self.say_tiers()
        return size["threads"]

    def say_size(self, said: tuple[int, int]) -> None:
        """How many workers (and threads) the cluster has now; none: the run waits for one."""
        if said[0]:
            self.ex.echo(f"the cluster has {said[0]} worker{'s' if said[0] != 1 else ''} "
                         f"({said[1]} thread{'s' if said[1] != 1 else ''})")
        else:
            address = self.ex.address
            self.ex.echo(f"the dask scheduler at {address or 'the given client'} has no "
                         f"workers: waiting for workers to join (`dask worker {address or 'ADDRESS'}` starts one)")

    def wait_for_workers(self) -> int:
        """Block until the scheduler has a worker (said once, by workers_now); its threads."""
        while True:
            self.size["checked"] = 0.0
            try:
                threads = self.workers_now()
            except Exception:
                threads = 0
            if threads:
                return threads
            if _scheduler_gone(self.client):
                raise SchedulerLost(self.ex._lost())
            time.sleep(0.5)

    def say_tiers(self) -> None:
        """Name the sandbox tier of each worker not named yet (a run of bot processes)."""
        new = [w for w in self.size["workers"] if w not in self.tiers_said]
        if not self.size["bots"] or not new:
            return
        try:
            found = self.client.run(worker_tier, workers=new, on_error="return")
        except Exception:  # the scheduler is away: said where a result is awaited
            return
        line = tier_line(found, self.ex._asked)
        self.tiers_said.update(found)
        if line:
            self.ex.echo(line)

    def on_event(self, event) -> None:
        """A scheduler event (on the client's event loop): an unexpected worker death is noted."""
        msg = event[1] if isinstance(event, tuple) and len(event) == 2 else event
        if isinstance(msg, dict) and msg.get("action") == "remove-worker" and not msg.get("expected"):
            self.deaths.append((msg.get("worker", "?"), set(msg.get("processing-tasks") or ())))

    def report_deaths(self) -> None:
        """Tell ``on_death`` of each worker that died with games of this run."""
        while self.deaths:
            worker, keys = self.deaths.popleft()
            games = sorted(g for k in keys if k in self.games_of for g in self.games_of[k])
            if games:
                self.on_death(games, f"dask worker {worker} died during {len(games)} game(s); dask runs them again")

    # -- games going out ---------------------------------------------------------------------

    def look_ahead(self, threads: int) -> bool:
        """Take tasks into ``ahead`` up to the horizon; True when every game that can be
        submitted now is in sight (the schedule ended, or waits for results in flight)."""
        # as far ahead as a batch's end-of-run cap can matter (see take_batch): taking a task
        # may decide something (a league pairs its next table from the results so far)
        while len(self.ahead) < 2 * threads * self.ex.max_batch:
            task = next(self.tasks, None)
            if task is None or task is WAIT:  # WAIT: the next games need results still in flight
                return True
            self.ahead.append(task)
        return False

    def fill(self) -> None:
        """Submit batches until ``queued`` tasks per worker thread are in flight (one per
        thread until a game has been timed: a game nothing is known of plays alone, and
        the games behind the first wait for what it tells)."""
        threads = self.workers_now()
        if not threads and not self.inflight and not self.stop():
            threads = self.wait_for_workers()  # nothing can play until one joins
        limit = self.ex.queued * threads if self.timing.known() else threads
        while len(self.inflight) < limit and not self.stop():
            in_sight = self.look_ahead(threads)
            if not self.retry and not self.ahead:
                return
            self.submit(take_batch(self.retry, self.ahead, self.timing, self.ex.batch_s, self.ex.max_batch,
                                   threads if in_sight else None, self.ex.least_s_per_thread * threads))

    def submit(self, group: list) -> None:
        """One task of the games of ``group``, on the workers that give their tier."""
        sents, needed = [], {}
        for task in group:
            self.submits[task.key] = self.submits.get(task.key, -1) + 1
            sent, bundles = self.shipper.prepare(self.payload(task), self.ex.plugin)
            sents.append(sent)
            needed.update(bundles)
            if not self.size["bots"] and sent.get("play") != "inprocess":  # bots run: name their tiers
                self.size["bots"], self.ex._asked = True, sent["request"].get("sandbox") or "auto"
                self.say_tiers()
        first = group[0].key
        key = f"game-{first}-{self.submits[first]}" + (f"+{len(group) - 1}" if len(group) > 1 else "")
        # the games go pickled: Dask walks a task's arguments for futures, a list of dicts key
        # by key (4-5 ms of the coordinator's main thread for 16 games), and bytes not at all
        fut = self.client.submit(play_batch, pickle.dumps(sents, protocol=pickle.HIGHEST_PROTOCOL), needed,
                                 key=key, pure=False, workers=self.allowed(), allow_other_workers=False)
        self.inflight[fut.key] = (fut, group, [sent["request"] for sent in sents])
        self.games_of[fut.key] = [t.key for t in group]
        self.arrivals.add(fut)

    def requests_of(self, key: str) -> list:
        """The requests of a task's games (where their files land); none once it is dropped."""
        entry = self.inflight.get(key)
        return entry[2] if entry is not None else []

    def log_mb(self, requests: list) -> int:
        """The cap of the run's log folder, from its games' requests (kept for the end)."""
        self.ex._log_mb = self.ex._log_mb or _log_mb(requests)
        return self.ex._log_mb

    def allowed(self) -> list | None:
        """The workers a task may go to: all (None) but those that refused the run's tier."""
        if not self.refusing:
            return None
        allowed = [w for w in self.client.scheduler_info()["workers"] if w not in self.refusing]
        if not allowed:
            raise UsageError(f"no worker of the cluster can give the sandbox tier the games ask for "
                             f"({self.refused[-1]}); install bubblewrap on the workers or name a tier "
                             "they can give")
        return allowed

    # -- games coming back -------------------------------------------------------------------

    def play(self) -> Iterator[tuple]:
        """Submit, and yield each game's ``(task, reply or exception)`` as its task finishes."""
        client = self.client
        try:
            try:
                client.subscribe_topic("all", self.on_event)
                self.followed = True
            except Exception:  # an older scheduler: deaths are only heard of through KilledWorker
                self.followed = False
            self.fill()
            while self.inflight:
                fut, results, failure = self.arrivals.next()
                self.report_deaths()
                _, group, _requests = self.inflight.pop(fut.key)
                yield from self.receive(group, results, failure)
                fut.release()
                if not self.stop():
                    self.fill()
                else:
                    for other, *_ in self.inflight.values():
                        other.cancel()
                    self.inflight.clear()
            self.report_deaths()  # an event that came after its game's result
            self.say_tiers_seen()
        except (OSError, TimeoutError):
            if _scheduler_gone(client):
                raise SchedulerLost(self.ex._lost()) from None
            raise
        finally:
            try:
                client.unsubscribe_topic("all")
            except Exception:  # the connection may be gone already
                pass
            for other, *_ in self.inflight.values():
                other.cancel()
            self.arrivals.close()
            if not self.ex.keep:
                self.ex.shutdown()

    def receive(self, group: list, results: list | None, failure: Exception | None) -> Iterator[tuple]:
        """A finished task (its files landed): each of its games' results, or its games
        rescheduled or failed."""
        from concurrent.futures import CancelledError

        from distributed.scheduler import KilledWorker

        if failure is None:
            for task, result in zip(group, results):
                yield from self.settle(task, *result)
        elif isinstance(failure, CancelledError):  # a bundle it needed was lost with its workers
            if _scheduler_gone(self.client):
                raise SchedulerLost(self.ex._lost()) from None
            self.shipper.lost()
            yield from self.lost(group)
            self.on_death([t.key for t in group], f"the game lost what it needed with its worker "
                                                  f"({describe(failure)}); rescheduled")
        elif isinstance(failure, KilledWorker):
            yield from self.lost(group)
            if not self.followed:  # otherwise each death was reported from its event
                self.on_death([t.key for t in group], f"dask workers died running the game "
                                                      f"({describe(failure)}); rescheduled")
        else:  # play_batch answers each game's own failure itself
            if _scheduler_gone(self.client):
                raise SchedulerLost(self.ex._lost()) from None
            for task in group:
                yield task, GameFailed(describe(failure))

    def lost(self, group: list) -> Iterator[tuple]:
        """The games of a task lost with its worker: given up, or played again."""
        given_up, again = count_losses(group, self.attempts)
        yield from given_up
        self.retry.extend(again)

    def settle(self, task, kind: str, item) -> Iterator[tuple]:
        """One game's result from :func:`play_batch` (its files landed): yielded, or the game
        rescheduled."""
        if kind == "ok":
            self.timing.add_result(task, item)
            self.count_tier(item)
            yield task, item
        elif kind == "error" and isinstance(item, TierRefused):  # another worker may give it
            if item.worker not in self.refusing:
                self.ex.echo(f"{item}; its games go to the other workers")
            self.refusing.add(item.worker)
            self.refused.append(str(item))
            self.retry.append(task)
        elif kind == "error":
            yield task, item
        elif kind == "failed":
            yield task, GameFailed(item)
        else:  # skipped: the run's plugin was gone from the worker
            self.retry.append(task)

    def count_tier(self, item: dict) -> None:
        """Count the tier a stored game really had (a fallback is said at the end)."""
        record = (item.get("outcome") or {}).get("sandbox") or {}
        if record.get("tier"):
            key = f"{record['tier']} instead of {record['requested']}" if record.get("fallback_reason") \
                and record.get("requested") not in (None, "auto", record["tier"]) else record["tier"]
            self.tiers_seen[key] = self.tiers_seen.get(key, 0) + 1

    def say_tiers_seen(self) -> None:
        """The run's last line when its games did not all have the same tier."""
        seen = self.tiers_seen
        if len(seen) > 1 or any(" instead of " in tier for tier in seen):
            self.ex.echo("the workers' games ran in " + ", ".join(
                f"{tier} ({n} game{'s' if n != 1 else ''})" for tier, n in sorted(seen.items()))
                + ": each game's record says which tier it had and why")


def _log_mb(requests: list) -> int:
    """The cap of a run's log folder (``log_total_mb``), from its games' requests."""
    for request in requests:
        mb = (request.get("sandbox_options") or {}).get("log_total_mb")
        if mb is not None:
            return int(mb)
    return DEFAULT_LOG_TOTAL_MB


def _scheduler_gone(client) -> bool:
    """Whether the client lost its scheduler (closed, or trying to reconnect)."""
    status = getattr(client, "status", "running")
    if status not in ("running", "newly-created"):
        return True
    comm = getattr(client, "scheduler_comm", None)
    inner = getattr(comm, "comm", None)
    return bool(inner is not None and getattr(inner, "closed", lambda: False)())


def tier_line(found: dict, asked="auto") -> str:
    """One line naming the sandbox tier each worker of ``found`` (address -> what
    :func:`arena.cluster.worker.worker_tier` said) gives games that ask for ``asked``,
    grouped by tier: ``sandbox on the workers: strict on box0, box1; basic on box2 (not
    strict: bubblewrap is not installed ...)``."""
    tier = asked.get("tier", "auto") if isinstance(asked, dict) else (asked or "auto")
    fallback = asked.get("fallback") if isinstance(asked, dict) else None
    groups: dict[str, list[str]] = {}
    why: dict[str, str] = {}
    for address, st in sorted(found.items()):
        if not isinstance(st, dict):  # the worker left (or failed) while asked
            continue
        name = str(st.get("name") or address)
        offers = st.get("tier")
        if tier == "auto":
            gives = offers or "no tier for command-line bots"
        elif tier == "strict" and offers != "strict":
            gives = fallback if fallback not in (None, "strict") else "refused"
        else:
            gives = tier
        groups.setdefault(gives, []).append(name)
        if gives != "strict" and st.get("not_strict"):
            why.setdefault(gives, st["not_strict"])
    order = ["strict", "basic", "none"]  # the strongest first
    parts = [f"{gives} on {', '.join(sorted(names))}" + (f" (not strict: {why[gives]})" if gives in why else "")
             for gives, names in sorted(groups.items(), key=lambda g: order.index(g[0]) if g[0] in order else 3)]
    return "sandbox on the workers: " + "; ".join(parts) if parts else ""

"""The local executor: games played by a pool of forked worker processes on this machine.

An executor takes an iterator of tasks, a function that turns a task into its payload and
a ``stop()`` predicate; it yields ``(task, reply)`` as games finish (see :mod:`.work`).
Tasks are submitted lazily (at most two per worker in flight) so an sprt can stop as soon
as it decides.

The local executor is a pool of worker processes started from an explicit ``fork`` context,
each with its own pipe: the coordinator keeps two games queued per worker (so a worker
never waits while the coordinator stores a result) and waits on all pipes and process
sentinels at once, in one thread -- the cheapest bookkeeping per game: one ``epoll`` wait
and one read per finished game. Each worker gets its games as soon as it is forked, and at
the end all workers are told to stop before any is waited for, so they exit side by side.
If a worker process dies mid-game, only that worker's games are rescheduled (each at most
``MAX_ATTEMPTS`` times), a new worker takes its place, and ``on_death`` is told which games
were lost and the worker's exit code.

A worker cannot outlive its coordinator, however the coordinator ends: the kernel sends
it SIGTERM when the coordinator dies (``PR_SET_PDEATHSIG``, so a kill -9 of ``arena serve``
or ``arena experiment`` takes its workers along, and each closes its bot processes), and at
start it closes what it inherited that would keep the coordinator's resources alive: network
sockets (a web server's listening socket and its clients' connections), the coordinator's
ends of other workers' pipes, and files it holds a ``flock`` on (a league's play lock). It
ignores SIGINT: Ctrl-C is the coordinator's to handle. While every game is in flight the
coordinator still asks ``stop()`` every :data:`STOP_POLL_S`, so a stop is not held up by a
long game.
"""

from __future__ import annotations

import gc
import itertools
import multiprocessing
import os
import selectors
import signal
import socket
import stat
import sys
from collections import deque
from typing import Callable, Iterator

from ..errors import ArenaError
from .work import WAIT, GameFailed, count_losses, describe, execute, warm

#: How often a coordinator waiting for games asks ``stop()`` (a server stopping drops its games in flight).
STOP_POLL_S = 0.5

_POOL = None  # the worker's pool of bot processes, closed by :func:`_on_term`
_IN_GAME = False  # a game is being played: SIGTERM unwinds it, so its bots are closed


class _Stopped(SystemExit):
    """A worker's SIGTERM in a game: unwinds the game so that the referee closes its bots."""


def _on_term(signum, frame) -> None:
    """SIGTERM in a worker. In a game: unwind it (:class:`_Stopped`), so the referee closes
    its bots, with SIGALRM's default action 3 s later in case the exception is lost. Between
    games: close the idle bot processes and leave at once."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if _IN_GAME:
        _stop_late(signum, frame)
    try:
        if _POOL is not None:
            _POOL.close()
    finally:
        os._exit(0)


def _unraisable(hook_args) -> None:
    """A worker's ``sys.unraisablehook``. The SIGTERM handler runs between any two lines of
    Python, also where an exception cannot propagate: in an at-fork callback (a signal that
    lands while the referee forks a bot runs it in ``logging``'s lock release), a finalizer.
    There the :class:`_Stopped` would be printed as a traceback on the user's terminal and
    lost; instead it is raised again in ordinary code, 10 ms later by a timer (raised from
    here, it would be lost again)."""
    if isinstance(hook_args.exc_value, _Stopped):
        signal.signal(signal.SIGALRM, _stop_late)
        signal.setitimer(signal.ITIMER_REAL, 0.01)
        return
    sys.__unraisablehook__(hook_args)


def _stop_late(signum, frame) -> None:
    """Unwind the game now, with SIGALRM's default action 3 s later in case the exception is
    lost (:func:`_on_term` in a game, and the timer :func:`_unraisable` set)."""
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.alarm(3)
    raise _Stopped(0)


def _die_with_parent(parent: int) -> None:
    """Bind a worker's life to its coordinator's: SIGTERM when the coordinator dies (even by
    kill -9), which closes the worker's bot processes; Ctrl-C is the coordinator's business."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the coordinator died before the signal was asked for
        raise SystemExit(0)


def _drop_inherited(keep: int) -> None:
    """Close what a forked worker inherited and must not keep alive after its coordinator:
    network sockets (a web server's listening socket and its clients' connections), the
    coordinator's end of other workers' pipes, and files holding a ``flock`` (a play lock).
    ``keep`` is the worker's own pipe."""
    try:
        fds = [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError:
        return
    # each is replaced by /dev/null rather than closed: the coordinator's objects inherited
    # with them may still close their descriptor number when collected, which must not hit
    # a descriptor this worker opened since
    null = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
    for fd in fds:
        if fd <= 2 or fd == keep:
            continue
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        try:
            if stat.S_ISSOCK(st.st_mode):
                sock = socket.socket(fileno=fd)
                try:
                    family, accepting = sock.family, sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
                finally:
                    sock.detach()
                if family in (socket.AF_INET, socket.AF_INET6) or accepting or fd in _COORDINATOR_ENDS:
                    os.dup2(null, fd, inheritable=False)
            elif stat.S_ISREG(st.st_mode):
                with open(f"/proc/self/fdinfo/{fd}", encoding="ascii", errors="replace") as info:
                    if "FLOCK" in info.read():
                        os.dup2(null, fd, inheritable=False)
        except OSError:
            continue
    os.close(null)


_COORDINATOR_ENDS: set[int] = set()  # descriptors of the coordinator's ends of the workers' pipes


def _worker_main(conn, initializer, parent: int) -> None:
    """A worker process: play the games that arrive on ``conn`` until told to stop.

    It keeps a :class:`~arena.process.pool.ProcessPool` of live bot processes for its
    lifetime and closes it when it ends -- told to stop, its pipe closed, or SIGTERM (how
    the coordinator stops a worker in the middle of a game, and what the kernel sends when
    the coordinator dies) -- so no bot outlives it, and it outlives no coordinator."""
    from ..process.pool import ProcessPool

    global _POOL, _IN_GAME
    gc.freeze()  # the coordinator's objects stay as they are: none is collected (and finalized) here
    sys.unraisablehook = _unraisable
    signal.signal(signal.SIGTERM, _on_term)
    # born with SIGTERM blocked (see _Worker): a stop sent at once waited for the handler above
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    _die_with_parent(parent)
    _drop_inherited(conn.fileno())
    if initializer is not None:
        initializer()
    pool = _POOL = ProcessPool()
    try:
        while True:
            try:
                payload = conn.recv()
            except (EOFError, OSError):
                return
            if payload is None:
                return
            try:
                _IN_GAME = True
                try:
                    reply = execute(payload, pool)
                finally:
                    _IN_GAME = False
                conn.send(("ok", reply))
            except ArenaError as exc:  # a bad request: the runner stops the tournament
                conn.send(("bad-request", str(exc)))
            except Exception as exc:  # the game function failed: reported, the run goes on
                conn.send(("failed", describe(exc)))
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        pool.close()


def _warmed(tasks: Iterator, payload: Callable) -> tuple[Iterator, Callable]:
    """Warm this process for the first game before any worker is forked
    (:func:`~.work.warm`: every worker inherits the imports, the compiled rules and the
    sandbox's probes instead of paying for them in its first game); the tasks and the
    payload function to use, the first task's payload made once."""
    first = next(tasks, None)
    if first is None:
        return iter(()), payload
    if first is WAIT:
        return itertools.chain([first], tasks), payload
    made = payload(first)
    warm(made)

    def payload_of(task):
        return made if task is first else payload(task)

    return itertools.chain([first], tasks), payload_of


class _Worker:
    def __init__(self, ctx, initializer):
        self.conn, child = ctx.Pipe(duplex=True)
        _COORDINATOR_ENDS.add(self.conn.fileno())
        self.proc = ctx.Process(target=_worker_main, args=(child, initializer, os.getpid()), daemon=True)
        # SIGTERM is blocked across the fork: until the worker installs its own handler it would
        # run the coordinator's (a run's StopSignals), unwinding the coordinator's code in the
        # child; a worker stopped as soon as it starts (a run with nothing left to play) gets
        # it once its handler is in place
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        try:
            self.proc.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        child.close()
        self.tasks: deque = deque()

    def stop(self, kill: bool, wait: bool = True) -> None:
        """Ask the worker to exit after its games (or stop it now: SIGTERM, so it closes its
        bot processes, then SIGKILL in :meth:`join`); ``wait`` for it to end."""
        try:
            if kill:
                self.proc.terminate()
            else:
                self.conn.send(None)
        except (OSError, ValueError):
            pass
        if wait:
            self.join(kill)

    def join(self, kill: bool) -> None:
        """Wait for the worker process to end (a stopped one: 5 s, then SIGKILL); close its pipe."""
        self.proc.join(timeout=None if not kill else 5)
        if kill and self.proc.exitcode is None:
            self.proc.kill()
            self.proc.join(5)
        _COORDINATOR_ENDS.discard(self.conn.fileno())
        self.conn.close()


class LocalExecutor:
    """``concurrency`` forked worker processes on this machine."""

    def __init__(self, concurrency: int, initializer: Callable | None = None, queued: int = 2):
        self.concurrency = max(1, int(concurrency))
        self.initializer = initializer
        self.queued = queued
        self.ctx = multiprocessing.get_context("fork")
        self.workers: list[_Worker] = []

    def run(self, tasks: Iterator, payload: Callable, stop: Callable[[], bool],
            on_death: Callable[[list, str], None]) -> Iterator[tuple]:
        """Play ``tasks``; yield ``(task, reply or exception)`` as games finish."""
        tasks, payload = _warmed(iter(tasks), payload)
        retry: deque = deque()
        attempts: dict[str, int] = {}
        self.workers = []
        self.selector = selectors.DefaultSelector()
        finished = False
        try:
            for _ in range(self.concurrency):  # each worker gets its games as soon as it exists
                w = _Worker(self.ctx, self.initializer)
                self.workers.append(w)
                self._watch(w)
                self._feed(w, tasks, retry, payload, stop)
            while True:
                for w in self.workers:
                    self._feed(w, tasks, retry, payload, stop)
                if not any(w.tasks for w in self.workers):
                    finished = not stop()
                    return
                ready = {(key.data, key.fileobj) for key, _ in self.selector.select(timeout=STOP_POLL_S)}
                if not ready and stop():  # stopped from outside while every game is in flight
                    return
                for w in list(self.workers):
                    dead = (w, w.proc.sentinel) in ready
                    try:
                        if dead:  # collect what it sent before it died, then replace it
                            while w.tasks and w.conn.poll():
                                yield self._reply(w)
                                if stop():
                                    return
                        elif (w, w.conn) in ready and w.tasks:
                            # one message per wake-up: the selector is level-triggered, so a
                            # second finished game wakes the next select() at once
                            yield self._reply(w)
                            if stop():  # decided: the games still in flight are dropped
                                return
                    except (EOFError, OSError):
                        dead = True
                    if dead:
                        yield from self._replace(w, attempts, retry, on_death)
        finally:
            self.selector.close()
            self._stop_all(kill=not finished)

    def _feed(self, w: "_Worker", tasks: Iterator, retry: deque, payload: Callable, stop: Callable) -> None:
        """Keep ``queued`` games in flight on ``w`` (retried games first)."""
        while len(w.tasks) < self.queued and not stop():
            task = retry.popleft() if retry else next(tasks, None)
            if task is None or task is WAIT:  # WAIT: the next games need results still in flight
                return
            w.tasks.append(task)
            try:
                w.conn.send(payload(task))
            except OSError:  # the worker is gone: its sentinel reports it
                return

    @staticmethod
    def _reply(w: "_Worker") -> tuple:
        """The next finished game of ``w``: ``(task, reply or exception)``."""
        kind, value = w.conn.recv()
        task = w.tasks.popleft()
        if kind == "ok":
            return task, value
        if kind == "bad-request":
            return task, ArenaError(value)
        return task, GameFailed(value)

    def _stop_all(self, kill: bool) -> None:
        """Stop every worker at once (they exit side by side), then wait for them all."""
        for w in self.workers:
            w.stop(kill, wait=False)
        for w in self.workers:
            w.join(kill)
        self.workers = []

    def _watch(self, w: _Worker) -> None:
        self.selector.register(w.conn, selectors.EVENT_READ, w)
        self.selector.register(w.proc.sentinel, selectors.EVENT_READ, w)

    def _replace(self, w: _Worker, attempts: dict, retry: deque, on_death) -> Iterator[tuple]:
        w.proc.join(timeout=5)
        lost = list(w.tasks)
        given_up, again = count_losses(lost, attempts)
        yield from given_up
        retry.extendleft(reversed(again))
        self.selector.unregister(w.conn)
        self.selector.unregister(w.proc.sentinel)
        new = _Worker(self.ctx, self.initializer)
        self.workers[self.workers.index(w)] = new
        self._watch(new)
        _COORDINATOR_ENDS.discard(w.conn.fileno())
        w.conn.close()
        on_death([t.key for t in lost], f"worker process {w.proc.pid} died (exit code {w.proc.exitcode}) "
                                        f"during {len(lost)} queued game(s); {len(again)} rescheduled")

    def shutdown(self) -> None:
        """Kill the workers (games in flight are dropped)."""
        self._stop_all(kill=True)

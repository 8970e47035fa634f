"""The synchronous facade the referee uses: one bot process, start to kill.

Top of the three layers. :class:`BotProcess` starts a command under a sandbox
:class:`~arena.process.sandbox.Launch`, does the handshake under the start-up limit, asks for
actions and decisions under each move's limit, and measures every move: wall time from
the request's flush to the reply's newline, and CPU time of the bot (its process and
reaped children, from ``/proc/<pid>/stat``, clock-tick resolution), read after every move
that lasted at least one tick and at the end of the game; a move is charged the CPU time
since the previous read, so per-seat totals are exact and per-move figures are
tick-accurate. Where the sandbox gives the bot a ``cpuacct`` cgroup, CPU time is read from
it instead, so it covers every process the bot started (daemons in other sessions too).
``pause_idle`` freezes the bot's whole tree with the freezer cgroup where there is one
(children that changed their process group included), else stops its process group.
Every misbehaviour surfaces as a :class:`~arena.process.transport.BotFault` subclass whose
``verdict`` is recorded; a crash caused by the memory cap becomes ``memory_limit``.
"""

from __future__ import annotations

from .protocol import Protocol, Ready, check_ready
from .sandbox import Launch
from .transport import CLK_TCK, BotCrashed, BotFault, BotMemoryLimit, BotTimeout, LineTransport, State

TICK = 1.0 / CLK_TCK


class BotProcess:
    """A bot process speaking the protocol. Always :meth:`close` it (it kills the group)."""

    def __init__(self, launch: Launch, label: str = "bot", stderr_path=None, max_line: int | None = None,
                 stderr_cap: int | None = None):
        self.launch = launch
        self.label = label
        kwargs = {} if max_line is None else {"max_line": max_line}
        if stderr_cap is not None:
            kwargs["stderr_cap"] = stderr_cap
        self.transport = LineTransport(launch.argv, cwd=launch.cwd, env=launch.env, preexec_fn=launch.preexec_fn,
                                       stderr_path=stderr_path, on_kill=launch.kill_extra,
                                       stdout_fd3=launch.stdout_fd3, **kwargs)
        self.protocol = Protocol(self.transport, label)
        self.ready: Ready | None = None
        self.dead = False
        self._handshake = (0, 0.0)
        self._startup_s = 0.0
        self._cpu_mark = 0.0
        self._unread = 0

    @property
    def pid(self) -> int:
        """The bot's pid, which is also its process group and session id."""
        return self.transport.pid

    def spawn(self) -> None:
        """Start the process (no message yet), so several bots can boot at once."""
        try:
            self.transport.start()
        except BotFault as exc:
            self.dead = True
            raise self._translate(exc) from None
        self.launch.started(self.transport.pid)

    def send_hello(self, hello: dict, startup_s: float) -> None:
        """Spawn if needed and send ``hello``; :meth:`await_ready` reads the answer."""
        self._startup_s = startup_s
        try:
            if self.transport.state is State.NEW:
                self.spawn()
            self._handshake = self.protocol.send(hello, startup_s)
        except BotFault as exc:
            self.transport.done()
            raise self._startup_fault(exc) from None

    def await_ready(self) -> Ready:
        """The ``ready`` answer to :meth:`send_hello`; raises a :class:`BotFault` on failure."""
        try:
            msg, _ = self.protocol.receive(*self._handshake)
            self.ready = check_ready(msg)
        except BotFault as exc:
            raise self._startup_fault(exc) from None
        self.protocol.ready = self.ready
        self._cpu_mark = self._cpu_now()
        return self.ready

    def _cpu_now(self) -> float:
        if self.launch.accounts_tree:
            return self.launch.cpu_seconds()
        return self.transport.cpu_seconds()

    def start(self, hello: dict, startup_s: float) -> Ready:
        """Start the process (unless :meth:`spawn` did) and do the handshake under ``startup_s``."""
        self.send_hello(hello, startup_s)
        return self.await_ready()

    def _startup_fault(self, exc: BotFault) -> BotFault:
        if isinstance(exc, BotTimeout):
            return BotTimeout(f"no 'ready' within the start-up limit of {self._startup_s * 1000:.0f} ms ({exc.detail})")
        return self._translate(exc)

    def new_game(self, hello: dict, startup_s: float) -> Ready:
        """Reuse the process for another game: a new ``hello`` and ``ready``."""
        return self.start(hello, startup_s)

    def ask(self, message: dict, limit_s: float) -> tuple[dict, float, float]:
        """Send a request; returns ``(R14 object, wall seconds, CPU seconds)``."""
        try:
            action, wall = self.protocol.request(message, limit_s)
        except BotFault as exc:
            raise self._translate(exc) from None
        # /proc counts CPU in clock ticks (10 ms): reading it after a shorter move tells
        # nothing and costs as much as the rest of the protocol, so it is read after a move
        # of at least one tick (or every 64 moves), which is then charged everything since
        # the previous read, thinking on the others' time included. Totals stay exact.
        self._unread += 1
        if wall < TICK and self._unread < 64:
            return action, wall, 0.0
        return action, wall, self.cpu_since_last_read()

    def cpu_since_last_read(self) -> float:
        """CPU seconds the bot used since the previous read (see :meth:`ask`)."""
        mark = self._cpu_now()
        if mark <= 0.0:
            return 0.0
        used = mark - self._cpu_mark
        self._cpu_mark = mark
        self._unread = 0
        return max(0.0, used)

    def notify(self, message: dict) -> None:
        """Send a message without a reply; a dead or stuck bot is ignored here."""
        if self.dead or self.transport.state is not State.IDLE:
            return
        try:
            self.protocol.notify(message, 0.5)
        except BotFault:
            pass

    def pause(self) -> None:
        """Stop the bot while others think (``pause_idle``): freeze its whole tree, or stop
        its process group where there is no freezer cgroup."""
        if not self.dead and not self.launch.freeze():
            self.transport.pause()

    def resume(self) -> None:
        """Let the bot run again."""
        self.launch.thaw()
        self.transport.resume()

    def _translate(self, exc: BotFault) -> BotFault:
        if isinstance(exc, BotCrashed):
            self.dead = True
            if self.launch.memory_exceeded():
                return BotMemoryLimit(f"went over the memory cap and was killed ({exc.detail})")
        elif isinstance(exc, BotTimeout) and self.launch.memory_pressed():
            self.dead = True
            return BotMemoryLimit(f"reached the memory cap and stopped answering ({exc.detail})")
        return exc

    def close(self, quit_first: bool = True) -> int | None:
        """Ask the bot to quit, then kill its group and clean the sandbox up."""
        self.resume()
        if quit_first and not self.dead and self.transport.state is State.IDLE and self.transport.alive():
            self.notify({"type": "quit"})
            self.transport.wait(0.2)
        self.dead = True
        try:
            code = self.transport.close()
        finally:
            self.launch.cleanup()
        return code

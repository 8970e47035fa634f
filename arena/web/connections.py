"""The connections of ``arena serve``: one client cannot deny the site to everyone.

uvicorn alone caps the connections of the whole server (beyond the cap every visitor is
answered 503) and has no deadline for a request head: its keep-alive timer starts only
after a first answer and every byte received stops it, so a client that opens sockets
and sends nothing, or trickles a header a byte at a time, holds them for ever, and 500
such sockets from one address shut everyone out. :func:`protocol_class` makes the
server's HTTP protocol (uvicorn's h11 protocol with a :class:`Guard` around it, given to
uvicorn as ``http=``), which holds these limits (:class:`Limits`):

- **per client**: an address holds at most ``per_client`` connections; the next one is
  answered 429 and closed at once. An IPv6 client is its /64 (one host's share of
  addresses), an IPv4-mapped address its IPv4 address. A trusted proxy's address
  (``trusted``, the addresses whose ``X-Forwarded-For`` is believed) is not limited:
  every visitor comes through it, and the proxy limits its own clients.
- **idle**: a connection waiting for a request that has sent no byte of it for
  ``idle_s`` is closed (new or kept alive alike).
- **request head**: from the first byte of a request, its whole head must arrive within
  ``head_s``, however the bytes trickle (after an answer, a body the app did not read
  counts as such bytes).
- **request body**: a body the app is reading must arrive at ``body_bytes_per_s`` on
  average once ``head_s`` of grace have passed (while the app does not read, the client
  is not timed).
- **answers**: a connection whose client reads nothing of an answer for
  ``write_stall_s`` is dropped.
- **cap**: at ``max_connections``, a new connection makes room by closing the connection
  idle longest of the biggest holder of connections; a client that is itself (one of)
  the biggest holders is refused instead (503), and so is anyone when no connection of a
  holder at least as big is idle. The hog is shed, not everyone.

Deadlines are checked by one sweep of all connections every :data:`SWEEP_S` seconds.
What was shed is logged once a minute (one line, by reason, with the biggest holder).
"""

from __future__ import annotations

import ipaddress
import logging
import time
from dataclasses import dataclass

#: Seconds between two sweeps of the deadlines.
SWEEP_S = 0.5
#: Seconds between two log lines about shed connections.
REPORT_S = 60.0

WAIT, BODY, BUSY = "waiting for a request", "receiving a body", "answering"

_REFUSALS = {
    429: b"HTTP/1.1 429 Too Many Requests\r\ncontent-type: text/plain; charset=utf-8\r\nretry-after: 5\r\n"
         b"connection: close\r\ncontent-length: 40\r\n\r\ntoo many connections from your address.\n",
    503: b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\nretry-after: 5\r\n"
         b"connection: close\r\ncontent-length: 35\r\n\r\nthe server is full; try again soon\n",
}


@dataclass(frozen=True)
class Limits:
    """What one client may hold of the server (see the module)."""

    max_connections: int = 500
    per_client: int = 32
    idle_s: float = 5.0
    head_s: float = 10.0
    body_bytes_per_s: float = 1024.0
    write_stall_s: float = 30.0
    trusted: str = "127.0.0.1,::1"


def parse_trusted(value: str) -> tuple[bool, tuple]:
    """``(everyone, networks)`` of a comma-separated list of addresses and networks (CIDR),
    or ``*``; a ``ValueError`` names an item that is neither."""
    nets = []
    everyone = False
    for item in (v.strip() for v in value.split(",")):
        if not item:
            continue
        if item == "*":
            everyone = True
            continue
        try:
            nets.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ValueError(f"{item!r} is not an address, a network (10.0.0.0/8) or *") from None
    return everyone, tuple(nets)


def client_key(host: str) -> str:
    """The client an address counts for: itself (IPv4), its /64 (IPv6)."""
    try:
        ip = ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        return host
    if ip.version == 6:
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


class Guard:
    """The connections of one server by client, the admission of new ones and the sweep
    of the deadlines. ``shed`` counts what was closed or refused, by reason."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self._everyone, self._trusted = parse_trusted(limits.trusted)
        self.by_client: dict[str, set] = {}
        self.count = 0
        self.shed: dict[str, int] = {}
        self._sweep = None
        self._reported = {}
        self._last_report = time.monotonic()
        self.logger = logging.getLogger("uvicorn.error")

    def trusts(self, host: str) -> bool:
        """Whether ``host`` is a trusted proxy (its ``X-Forwarded-For`` is believed)."""
        if self._everyone:
            return True
        try:
            ip = ipaddress.ip_address(host.partition("%")[0])
        except ValueError:
            return False
        if ip.version == 6 and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return any(ip.version == net.version and ip in net for net in self._trusted)

    def note(self, reason: str) -> None:
        """Count one connection closed or refused for ``reason``."""
        self.shed[reason] = self.shed.get(reason, 0) + 1

    def admit(self, conn, host: str) -> int | None:
        """Register ``conn`` from ``host``; or the status it is refused with (429, 503)."""
        key = client_key(host)
        trusted = self.trusts(host)
        held = self.by_client.get(key, ())
        if not trusted and len(held) >= self.limits.per_client:
            self.note("over the per-client limit")
            return 429
        if self.count >= self.limits.max_connections and not self._make_room(key, trusted):
            self.note("refused at the cap")
            return 503
        conn._key = key
        self.by_client.setdefault(key, set()).add(conn)
        self.count += 1
        if self._sweep is None:
            self._sweep = conn.loop.call_later(SWEEP_S, self._sweep_now, conn.loop)
        return None

    def forget(self, conn) -> None:
        """``conn`` is closed (or closing): it no longer counts."""
        key = getattr(conn, "_key", None)
        held = self.by_client.get(key)
        if held is not None and conn in held:
            held.discard(conn)
            self.count -= 1
            if not held:
                del self.by_client[key]

    def _make_room(self, key: str, trusted: bool) -> bool:
        """Close the connection idle longest of the biggest holder that has one, if that
        holder holds at least as many as ``key`` (see the module)."""
        holders = sorted(self.by_client.items(), key=lambda kv: (len(kv[1]), kv[0] == key), reverse=True)
        for other, conns in holders:
            if other == key and not trusted:
                return False
            idle = [c for c in conns if c._state == WAIT]
            if idle:
                min(idle, key=lambda c: c._waiting_since).shed("evicted at the cap")
                return True
        return False

    def _sweep_now(self, loop) -> None:
        now = time.monotonic()
        for held in list(self.by_client.values()):
            for conn in list(held):
                reason = conn.overdue(now)
                if reason:
                    conn.shed(reason)
        if now - self._last_report >= REPORT_S:
            self._report(now)
        self._sweep = loop.call_later(SWEEP_S, self._sweep_now, loop) if self.count else None

    def _report(self, now: float) -> None:
        new = {r: n - self._reported.get(r, 0) for r, n in self.shed.items() if n - self._reported.get(r, 0)}
        self._reported = dict(self.shed)
        self._last_report = now
        if new:
            top = max(self.by_client.items(), key=lambda kv: len(kv[1]), default=(None, ()))
            self.logger.warning(
                "arena serve: shed %d connections in the last %.0f s (%s); %d open, the most from %s (%d)",
                sum(new.values()), REPORT_S, ", ".join(f"{r}: {n}" for r, n in sorted(new.items())),
                self.count, top[0], len(top[1]))


def protocol_class(limits: Limits):
    """The HTTP protocol class to give uvicorn (``http=``): h11 with a fresh :class:`Guard`
    of ``limits`` (the guard is the class's ``guard``)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        """uvicorn's h11 protocol, admitted and timed by its class's :class:`Guard`."""

        guard = Guard(limits)

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            now = time.monotonic()
            self._state, self._waiting_since, self._head_since = WAIT, now, None
            self._seen_cycle = None
            self._body_got, self._body_timed, self._last_sweep = 0, 0.0, now
            self._stalled_since = None
            refusal = self.guard.admit(self, self.client[0] if self.client else "")
            self._refused = refusal is not None
            if refusal:
                transport.write(_REFUSALS[refusal])
                transport.close()

        def connection_lost(self, exc) -> None:
            self.guard.forget(self)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return
            if self._state == WAIT:
                if self._head_since is None:
                    self._head_since = time.monotonic()  # the head's clock starts at its first byte
            elif self._state == BODY:
                self._body_got += len(data)
            super().data_received(data)
            self._follow()

        def on_response_complete(self) -> None:
            self._state, self._waiting_since, self._head_since = WAIT, time.monotonic(), None
            super().on_response_complete()
            self._follow()

        def pause_writing(self) -> None:
            if self._stalled_since is None:
                self._stalled_since = time.monotonic()
            super().pause_writing()

        def resume_writing(self) -> None:
            self._stalled_since = None
            super().resume_writing()

        def _follow(self) -> None:
            """A request head parsed since the last look starts its request's state."""
            cycle = self.cycle
            if cycle is not None and cycle is not self._seen_cycle and not cycle.response_complete:
                self._seen_cycle = cycle
                self._state = BODY if cycle.more_body else BUSY
                self._body_got, self._body_timed, self._last_sweep = 0, 0.0, time.monotonic()

        def overdue(self, now: float) -> str | None:
            """Why this connection is to be closed now, if it is (see the module)."""
            lim = self.guard.limits
            if self._state == WAIT:
                if self._head_since is None:
                    return "idle" if now - self._waiting_since > lim.idle_s else None
                return "slow request head" if now - self._head_since > lim.head_s else None
            if self._stalled_since is not None and now - self._stalled_since > lim.write_stall_s:
                return "answer not read"
            if self._state == BODY:
                cycle = self.cycle
                if cycle is None or not cycle.more_body or cycle.response_complete:
                    self._state = BUSY
                    return None
                # the client is timed only while the app reads the body
                if not self.flow.read_paused and not cycle.waiting_for_100_continue:
                    self._body_timed += now - self._last_sweep
                self._last_sweep = now
                late = self._body_timed - lim.head_s
                if late > 0 and self._body_got < lim.body_bytes_per_s * late:
                    return "slow request body"
            return None

        def shed(self, reason: str) -> None:
            """Close this connection for ``reason`` (it stops counting at once)."""
            self.guard.note(reason)
            self.guard.forget(self)
            if reason == "answer not read":
                self.transport.abort()
            else:
                self.transport.close()

    return GuardedH11Protocol

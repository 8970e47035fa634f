"""A short-lived cache of whole public responses, so a crowd costs one rendering per page.

:class:`ResponseCache` is an ASGI middleware. A ``GET`` without credentials (no
``Authorization`` header, no cookie) whose answer is 200 and fits in
``max_body`` bytes is kept for ``ttl_s`` seconds under its path and query, and served from
memory in that time. Requests for a page that is being rendered wait for that rendering
instead of starting their own (one flight per page), so a hundred visitors of the
leaderboard cost one rendering a ``ttl_s`` (an answer that is not kept, a 404, is still
shared by the requests that waited for it). The cache holds at most ``max_entries``
responses and ``max_bytes`` in all (the oldest go first), so its memory is bounded
whatever is asked. Nothing private passes through it: every page it keeps is public (a
response that says ``Cache-Control: no-store``, as an author's private page and a live
game's state do, is never kept nor shared with another request), and the links in pages and API answers are built from the configured public URL, never
from the request's ``Host``.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict


_generation = [0]


def changed() -> None:
    """Forget every kept response: this process changed what pages show (a submission, a
    withdrawal, a token); what other processes change shows within ``ttl_s``."""
    _generation[0] += 1


def _private(start: dict) -> bool:
    """Whether a response says it must not be kept (``Cache-Control: no-store`` or ``private``)."""
    for k, v in start.get("headers") or []:
        if k.lower() == b"cache-control" and (b"no-store" in v.lower() or b"private" in v.lower()):
            return True
    return False


class ResponseCache:
    """Serve public ``GET`` answers from memory for ``ttl_s`` seconds (see the module's docstring)."""

    def __init__(self, app, ttl_s: float = 2.0, max_entries: int = 1024, max_bytes: int = 64 << 20,
                 max_body: int = 2 << 20):
        self.app = app
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.max_body = max_body
        self.entries: OrderedDict = OrderedDict()  # key -> (expires, start message, body)
        self.size = 0
        self.flights: dict = {}  # key -> asyncio.Event of the rendering in progress
        self.hits = self.misses = 0

    def _cacheable(self, scope) -> bool:
        if scope["type"] != "http" or scope.get("method") != "GET" or self.ttl_s <= 0:
            return False
        return not any(k in (b"authorization", b"cookie") for k, _ in scope.get("headers") or [])

    def _fresh(self, key):
        hit = self.entries.get(key)
        if hit is None:
            return None
        if hit[0] < time.monotonic():
            self._drop(key)
            return None
        return hit

    def _drop(self, key) -> None:
        old = self.entries.pop(key, None)
        if old is not None:
            self.size -= len(old[2])

    def _keep(self, key, start: dict, body: bytes) -> None:
        self._drop(key)
        self.entries[key] = (time.monotonic() + self.ttl_s, start, body)
        self.size += len(body)
        while self.entries and (len(self.entries) > self.max_entries or self.size > self.max_bytes):
            self._drop(next(iter(self.entries)))

    @staticmethod
    async def _replay(send, start: dict, body: bytes) -> None:
        await send(start)
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope, receive, send):
        if not self._cacheable(scope):
            await self.app(scope, receive, send)
            return
        key = (scope.get("path"), scope.get("query_string", b""), _generation[0])
        hit = self._fresh(key)
        if hit is not None:
            self.hits += 1
            await self._replay(send, hit[1], hit[2])
            return
        flight = self.flights.get(key)
        if flight is not None:  # the same page is being rendered: take its answer, whatever it is
            await flight[0].wait()
            if flight[1]:
                self.hits += 1
                await self._replay(send, *flight[1])
                return
        self.misses += 1
        flight = (asyncio.Event(), [])
        self.flights[key] = flight
        start: dict = {}
        chunks: list[bytes] = []
        state = {"size": 0, "whole": True}

        async def capture(message):
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                state["size"] += len(message.get("body", b""))
                if state["size"] <= self.max_body:
                    chunks.append(message.get("body", b""))
                else:
                    state["whole"] = False
            await send(message)

        generation = _generation[0]
        try:
            await self.app(scope, receive, capture)
            if state["whole"] and start.get("status", 500) < 500 and not _private(start):
                flight[1].extend((dict(start), b"".join(chunks)))
                if start.get("status") == 200 and generation == _generation[0]:
                    self._keep(key, dict(start), b"".join(chunks))
        finally:
            if self.flights.get(key) is flight:
                del self.flights[key]
            flight[0].set()

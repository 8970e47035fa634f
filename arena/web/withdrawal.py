"""Withdrawing: an author takes one of their accepted versions out of play (``POST
/api/withdraw``, and the form of the bot's page, :func:`withdraw_version`).

The API's body is JSON ``{"entry": "name@version"}`` with ``Authorization: Bearer TOKEN``. The
version is retired (no longer matched; its games and rating stay) and its submission is
marked withdrawn. Answers 200 with the submission, or ``{"error": sentence}`` with 400
(bad body), 401 (unknown token), 403 (another author's version), 404 (no such accepted
version) or 409 (already withdrawn).
"""

from __future__ import annotations

import json
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from . import store, views
from .reading import bearer
from .state import site_of

BODY_CAP = 4096


def withdraw_version(league_path: Path, name: str, token: str, entry: str) -> tuple[int, str]:
    """Withdraw ``entry``, a version of bot ``name``, for the author of ``token`` (the bot's
    page's form): the status and the sentence its page shows."""
    with views.opened(league_path) as league:
        author = store.author_of(league, token)
        if author is None:
            return 401, "Unknown token: only the bot's author, with their token, may withdraw a version."
        if views.base_name(entry) != name:
            return 404, f"{entry!r} is not a version of {name}."
        try:
            store.withdraw(league, author, entry)
        except store.WithdrawError as exc:
            return exc.status, f"Not withdrawn: {exc}."
    return 200, f"{entry} is withdrawn: it plays no more games; its games and rating stay in the records."


def _withdraw(path: Path, token: str | None, entry: str) -> tuple[int, dict]:
    league = store.open_league(path)
    try:
        author = store.author_of(league, token)
        if author is None:
            return 401, {"error": "unknown token: ask the league's operator for one "
                                  "(`arena league token new AUTHOR`)"}
        try:
            sub = store.withdraw(league, author, entry)
        except store.WithdrawError as exc:
            return exc.status, {"error": str(exc)}
    finally:
        league.close()
    keep = ("id", "author", "name", "version", "entry", "status", "verdict", "withdrawn")
    return 200, {k: sub.get(k) for k in keep}


async def withdraw(request: Request) -> JSONResponse:
    """Withdraw one of your versions: JSON {"entry": "name@version"}, Authorization: Bearer TOKEN."""
    site = site_of(request)
    token = bearer(request)
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > BODY_CAP:
            return JSONResponse({"error": "the body is too large: send {\"entry\": \"name@version\"}"}, 413)
    try:
        data = json.loads(body or b"{}")
        entry = data.get("entry") if isinstance(data, dict) else None
    except ValueError:
        entry = None
    if not isinstance(entry, str) or not entry or len(entry) > 200:
        return JSONResponse({"error": "send JSON {\"entry\": \"name@version\"}"}, 400)
    status, out = await run_in_threadpool(_withdraw, site.path, token, entry)
    return JSONResponse(site.public(out), status_code=status)


routes = [Route("/api/withdraw", withdraw, methods=["POST"])]

"""``POST /api/withdraw``: an author withdraws one of their accepted versions.

The body is JSON ``{"entry": "name@version"}`` with ``Authorization: Bearer TOKEN``. The
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

from . import store

BODY_CAP = 4096


def withdraw_endpoint(league_path: Path, public=lambda value: value):
    """The route handler for the league file ``league_path`` (``public`` scrubs what is shown)."""
    path = Path(league_path)

    def work(token: str | None, entry: str) -> tuple[int, dict]:
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
        auth = request.headers.get("authorization", "")
        token = auth[7:].strip() if auth.lower().startswith("bearer ") else None
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
        status, out = await run_in_threadpool(work, token, entry)
        return JSONResponse(public(out), status_code=status)

    return withdraw

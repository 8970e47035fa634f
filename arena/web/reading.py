"""Reading what a request sends: an id of its path, its token, its body up to a cap.

A body is never held whole beyond its cap: :func:`read_capped` refuses it (:class:`TooLarge`)
as soon as it is over, and :func:`spool_capped` streams an upload into a file, a chunk at a
time, so a crowd of uploads costs no memory.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from starlette.exceptions import HTTPException
from starlette.requests import Request

from .security import parse_id

#: The bytes handed to a form parser at once when it reads a spooled upload back.
CHUNK = 64 << 10


class TooLarge(Exception):
    """The request body is over the cap."""


def ident(request: Request, key: str) -> int:
    """The id the path parameter ``key`` names; 404 when it names nothing the league could hold."""
    value = parse_id(request.path_params[key])
    if value is None:
        raise HTTPException(404, f"There is no #{str(request.path_params[key])[:40]}.")
    return value


def bearer(request: Request) -> str | None:
    """The token of an ``Authorization: Bearer TOKEN`` header, if any."""
    auth = request.headers.get("authorization", "")
    return auth[7:].strip() if auth.lower().startswith("bearer ") else None


def over(request: Request, cap: int) -> bool:
    """Whether the request says, before a byte of it is read, that its body is over ``cap``."""
    length = request.headers.get("content-length")
    return length is not None and length.isdigit() and int(length) > cap


async def read_capped(request: Request, cap: int) -> bytes:
    """The request body, at most ``cap`` bytes (else :class:`TooLarge`)."""
    if over(request, cap):
        raise TooLarge()
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > cap:
            raise TooLarge()
    return bytes(body)


async def spool_capped(request: Request, cap: int, folder: Path):
    """The request body streamed into a new file in ``folder`` (at most ``cap`` bytes, else
    :class:`TooLarge`); the open file, at its start. Memory: one chunk at a time."""
    if over(request, cap):
        raise TooLarge()
    folder.mkdir(mode=0o700, exist_ok=True)
    out = tempfile.TemporaryFile(dir=folder)
    try:
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > cap:
                raise TooLarge()
            out.write(chunk)
        out.seek(0)
        return out
    except BaseException:
        out.close()
        raise


def file_receive(spooled):
    """An ASGI ``receive`` that gives the body back from ``spooled``, a chunk at a time."""
    async def receive():
        chunk = spooled.read(CHUNK)
        return {"type": "http.request", "body": chunk, "more_body": bool(chunk)}
    return receive


async def form_token(request: Request) -> str:
    """The ``token`` field of a small form (at most 8 KiB, two fields, no files); empty when
    the body is too large or not a form."""
    try:
        request._body = await read_capped(request, 8192)
        form = await request.form(max_files=0, max_fields=2)
        return str(form.get("token") or "")
    except Exception:  # too large, or not a form
        return ""

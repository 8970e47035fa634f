"""What keeps the website whole whatever a bot or an author writes into it.

- :class:`SecurityHeaders`, an ASGI middleware: every response carries a
  Content-Security-Policy (no script at all except the replay viewer's own, identified by
  its hash; ``frame-ancestors``), ``X-Content-Type-Options: nosniff``, ``Referrer-Policy``
  and ``X-Frame-Options``; an unexpected exception becomes a plain 500 page with the same
  headers (and is logged), never a traceback; under ``/api`` it is JSON, ``{"error": sentence}``;
  a client that disconnects while its request's body is read is one line of the log, not a failure.
- :func:`json_for_script`: JSON that is safe inside a ``<script>`` element (``<``, ``>``,
  ``&``, U+2028 and U+2029 escaped, so neither ``</script>`` nor ``<!--`` can end or
  change the script block).
- :func:`scrub`: any absolute path in a value shown to the public is cut to its last part
  (``/srv/league.db.bots/x@1/bot.py`` becomes ``bot.py``), so no page or API answer shows
  where the server keeps its files.
- :func:`parse_id`: a path or query id, or None when it is not one the league could hold;
  :class:`IdConvertor` (``{gid:id}``): a path's number of at most 19 digits, longer ones 404.
"""

from __future__ import annotations

import logging
import re

from starlette.convertors import Convertor, register_url_convertor
from starlette.requests import ClientDisconnect

from ..replay.html import json_for_script, source_hash  # noqa: F401  (json_for_script: re-exported)

log = logging.getLogger(__name__)

#: Largest id SQLite can hold; a bigger number names nothing.
MAX_ID = 2 ** 63 - 1

#: An absolute path of at least two parts, not part of a word, a URL or a relative path;
#: after an escaped line break or tab (``\\n/srv/...`` in a JSON or repr of a bot's stderr)
#: it starts a line and is a path all the same; so it is after a label and a colon
#: (``cwd:/srv/...``, ``path:/srv/...``, ``C:/...``) and in a ``file:`` URL (``file:///srv/...``,
#: as Node names an ES module), whose ``file://`` is kept.
_PATH = re.compile(r"(?:(?<![\w.~:/\\-])|(?<=\\[nrt])|(?<=[^\s/]:)|(?<=[Ff][Ii][Ll][Ee]://))/"
                   r"(?:[^\s/'\"<>()\[\]{},;|`=\\]+/)+([^\s/'\"<>()\[\]{},;|`=\\]*)")


class IdConvertor(Convertor):
    """A path's number (``{gid:id}``): 1 to 19 digits, so a longer one names no route (404)
    instead of reaching ``int()``, which refuses numbers over 4,300 digits."""

    regex = "[0-9]{1,19}"

    def convert(self, value: str) -> int:
        return int(value)

    def to_string(self, value) -> str:
        return str(int(value))


register_url_convertor("id", IdConvertor())


def parse_id(text) -> int | None:
    """``text`` as a row id (1 .. 2**63-1), or None."""
    s = str(text)
    if not s.isascii() or not s.isdigit() or len(s) > 19:
        return None
    value = int(s)
    return value if 0 < value <= MAX_ID else None


def scrub(value, extra: tuple[str, ...] = ()):
    """``value`` (str, or dicts and lists of them) with absolute paths cut to their last part.

    ``extra`` names more prefixes to drop wherever they appear (folder names that would
    otherwise show as relative paths)."""
    if isinstance(value, str):
        out = _PATH.sub(lambda m: m.group(1) or "", value)
        for prefix in extra:
            out = out.replace(prefix, "")
        return out
    if isinstance(value, dict):
        return {k: scrub(v, extra) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub(v, extra) for v in value]
    return value


_QUOTED = re.compile(r"'(?:[^'\\\n]|\\.){0,300}'")


def scrub_sentence(text: str, extra: tuple[str, ...] = ()) -> str:
    """:func:`scrub` for a refusal that quotes what its reader sent: the quoted parts
    (``'/etc/passwd'``, an archive member's name as the author wrote it) stay as written,
    so the sentence still says what was refused; the rest is scrubbed."""
    out, last = [], 0
    for m in _QUOTED.finditer(text):
        out.append(scrub(text[last:m.start()], extra))
        out.append(m.group(0))
        last = m.end()
    out.append(scrub(text[last:], extra))
    return "".join(out)


def page_policy(styles: tuple[str, ...] = (), scripts: tuple[str, ...] = (), framed: bool = False) -> str:
    """A Content-Security-Policy allowing only the given inline styles and scripts (by hash),
    images from the site itself and ``data:``, frames, forms and links to the site itself;
    ``framed`` lets the site's own pages show it in a frame."""
    parts = ["default-src 'none'",
             "style-src " + (" ".join(source_hash(s) for s in styles) or "'none'"),
             "script-src " + (" ".join(source_hash(s) for s in scripts) or "'none'"),
             "img-src 'self' data:", "frame-src 'self'", "form-action 'self'", "base-uri 'none'",
             "frame-ancestors " + ("'self'" if framed else "'none'")]
    return "; ".join(parts)


#: The headers every response gets (a route may set its own Content-Security-Policy).
STATIC_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}

_ERROR_PAGE = (b"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Server error</title></head>"
               b"<body><h1>Server error</h1><p>The server could not answer this request; the operator can find "
               b"why in its log.</p></body></html>\n")


_ERROR_JSON = (b'{"error": "the server could not answer this request; the operator can find why in its log"}')


class SecurityHeaders:
    """ASGI middleware: the security headers on every HTTP response, and no traceback ever.

    ``default_policy`` is the Content-Security-Policy of a response that sets none itself."""

    def __init__(self, app, default_policy: str = page_policy()):
        self.app = app
        self.default_policy = default_policy

    def _headers(self, raw) -> list:
        own = {k.lower(): k for k in STATIC_HEADERS}
        own["x-frame-options"] = "X-Frame-Options"
        kept = [(k, v) for k, v in (raw or []) if k.decode("latin-1").lower() not in own]
        policy = next((v.decode("latin-1") for k, v in kept if k.lower() == b"content-security-policy"), None)
        if policy is None:
            policy = self.default_policy
            kept.append((b"content-security-policy", policy.encode("latin-1")))
        frame = "SAMEORIGIN" if "frame-ancestors 'self'" in policy else "DENY"
        kept.append((b"x-frame-options", frame.encode()))
        kept += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in STATIC_HEADERS.items()]
        return kept

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_with_headers(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = dict(message, headers=self._headers(message.get("headers")))
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except ClientDisconnect:  # the client went away while its body was read: nobody to answer
            log.info("%s %s: the client disconnected before its request's body was read",
                     scope.get("method"), scope.get("path"))
        except Exception:
            log.exception("%s %s failed", scope.get("method"), scope.get("path"))
            if started:
                return  # the status line is gone; the connection just ends
            api = str(scope.get("path") or "").startswith("/api")
            body, kind = (_ERROR_JSON, b"application/json") if api else (_ERROR_PAGE, b"text/html; charset=utf-8")
            await send_with_headers({"type": "http.response.start", "status": 500, "headers": [
                (b"content-type", kind), (b"content-length", str(len(body)).encode())]})
            await send_with_headers({"type": "http.response.body", "body": body})

"""The HTTP client of ``arena submit`` and ``arena withdraw``: every answer read, every refusal a sentence.

A server refusing an upload (413 too large, 401 unknown token, 429 over a quota) answers
before it reads the body and then closes the connection; a client still sending the body
gets "connection reset" and never sees the answer. So the upload first sends its headers
with ``Expect: 100-continue`` and waits for the server's word: ``100 Continue`` (send the
body), a final answer (the refusal, read whole), or, from a server that ignores the header,
nothing within a few seconds (send the body anyway). If sending still fails, whatever the
server answered is read before giving up.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import urllib.parse

from ..errors import UsageError

CONTINUE_WAIT_S = 5.0
TIMEOUT_S = 60.0
REASONS = {400: "the request was refused", 401: "the token is not known to this server",
           403: "this is not allowed with your token", 404: "not found", 409: "it conflicts with what is there",
           413: "the package is larger than this server accepts", 429: "too many submissions; try again later",
           500: "the server failed", 502: "the server is down behind its proxy", 503: "the server is unavailable"}


class _Answer:
    def __init__(self, status: int, headers: dict, body: bytes):
        self.status, self.headers, self.body = status, headers, body


def _read_head(sock, buf: bytearray) -> tuple[int, dict, bytearray]:
    """Read one response head from ``sock`` (``buf``: bytes already read); (status, headers, rest)."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection without an answer")
        buf += chunk
        if len(buf) > 1 << 20:
            raise ConnectionError("the answer's headers are too long")
    head, _, rest = bytes(buf).partition(b"\r\n\r\n")
    lines = head.decode("iso-8859-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise ValueError(f"not an HTTP answer ({lines[0][:60]!r})")
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return int(parts[1]), headers, bytearray(rest)


def _read_body(sock, headers: dict, buf: bytearray, cap: int = 16 << 20) -> bytes:
    if headers.get("transfer-encoding", "").lower() == "chunked":
        out = bytearray()
        while True:
            while b"\r\n" not in buf:
                chunk = sock.recv(65536)
                if not chunk:
                    return bytes(out)
                buf += chunk
            line, _, rest = bytes(buf).partition(b"\r\n")
            size = int(line.split(b";")[0] or b"0", 16)
            buf = bytearray(rest)
            if size == 0:
                return bytes(out)
            while len(buf) < size + 2:
                chunk = sock.recv(65536)
                if not chunk:
                    return bytes(out + buf[:size])
                buf += chunk
            out += buf[:size]
            buf = buf[size + 2:]
            if len(out) > cap:
                return bytes(out)
    length = headers.get("content-length")
    want = int(length) if length and length.isdigit() else cap
    while len(buf) < want:
        try:
            chunk = sock.recv(65536)
        except OSError:
            break
        if not chunk:
            break
        buf += chunk
    return bytes(buf[:want])


def request(method: str, url: str, data: bytes | None = None, headers: dict | None = None) -> _Answer:
    """Send one request and read its answer (see the module's docstring for uploads)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"{url}: give the server as http://HOST[:PORT] or https://HOST[:PORT]")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        sock = socket.create_connection((parts.hostname, port), timeout=TIMEOUT_S)
        if parts.scheme == "https":
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=parts.hostname)
    except (OSError, ssl.SSLError) as exc:
        raise UsageError(f"cannot reach {url} ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        host = parts.hostname + (f":{parts.port}" if parts.port else "")
        head = [f"{method} {target} HTTP/1.1", f"Host: {host}", "Connection: close", "Accept: application/json",
                "User-Agent: arena"]
        for k, v in (headers or {}).items():
            head.append(f"{k}: {v}")
        body = data or b""
        if data is not None:
            head.append(f"Content-Length: {len(body)}")
            head.append("Expect: 100-continue")
        buf = bytearray()
        try:
            sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
            if data is not None:
                sock.settimeout(CONTINUE_WAIT_S)
                try:
                    status, got, buf = _read_head(sock, buf)
                except socket.timeout:
                    status = None  # a server that ignores Expect: send the body anyway
                sock.settimeout(TIMEOUT_S)
                if status is not None and status != 100:
                    return _Answer(status, got, _read_body(sock, got, buf))
                try:
                    sock.sendall(body)
                except OSError:
                    pass  # refused while sending: its answer may still be there to read
            status, got, buf = _read_head(sock, buf)
            while status == 100:
                status, got, buf = _read_head(sock, buf)
            return _Answer(status, got, _read_body(sock, got, buf))
        except (OSError, ConnectionError) as exc:
            raise UsageError(f"cannot reach {url} ({getattr(exc, 'strerror', None) or exc})") from None
        except ValueError as exc:
            raise UsageError(f"{url} did not answer as an `arena serve` server does ({exc})") from None
    finally:
        sock.close()


def json_request(method: str, url: str, data: bytes | None = None, headers: dict | None = None) -> tuple[int, dict]:
    """:func:`request`, the answer's JSON object (``{}`` when it is not JSON)."""
    answer = request(method, url, data, headers)
    try:
        body = json.loads(answer.body or b"{}")
    except ValueError:
        body = {}
    return answer.status, body if isinstance(body, dict) else {}


def refusal(status: int, body: dict) -> str:
    """A refusal in one sentence: the server's own words, else what the status means."""
    said = body.get("error")
    if isinstance(said, str) and said.strip():
        text = " ".join(said.split())
    else:
        text = REASONS.get(status, "the server refused it" if status < 500 else "the server failed")
    return f"{text} (HTTP {status})"

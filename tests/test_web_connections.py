"""The connection limits of ``arena serve`` (arena/web/connections.py), on a real uvicorn
server configured as ``arena serve`` configures it, serving a tiny app on 127.0.0.1.

Clients are told apart by their source address inside 127.0.0.0/8 (all loopback): the
hog connects from 127.0.0.2, a visitor from 127.0.0.3, a trusted proxy from 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")

from arena.cli.web import server_config  # noqa: E402
from arena.web.connections import Limits, client_key  # noqa: E402

HOG, VISITOR, PROXY = "127.0.0.2", "127.0.0.3", "127.0.0.1"


async def _app(scope, receive, send):
    """Answers with the client it sees; reads a POST's body first."""
    if scope["type"] != "http":
        return
    got = 0
    if scope["method"] == "POST":
        while True:
            msg = await receive()
            got += len(msg.get("body", b""))
            if not msg.get("more_body") or msg["type"] == "http.disconnect":
                break
    body = json.dumps({"client": scope["client"][0], "got": got}).encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class Running:
    def __init__(self, **limits):
        import uvicorn

        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1024)
        self.port = self.sock.getsockname()[1]
        self.config = server_config(_app, Limits(**limits))
        self.guard = self.config.http.guard
        self.server = uvicorn.Server(self.config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        assert self.server.started
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(20)
        self.sock.close()

    def connect(self, source: str) -> socket.socket:
        s = socket.socket()
        s.settimeout(10)
        s.bind((source, 0))
        s.connect(("127.0.0.1", self.port))
        return s

    def get(self, source: str, headers: str = "") -> tuple[int, dict | bytes]:
        with self.connect(source) as s:
            s.sendall(f"GET / HTTP/1.1\r\nHost: x\r\n{headers}Connection: close\r\n\r\n".encode())
            return _answer(s)


def _answer(s: socket.socket) -> tuple[int, dict | bytes]:
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    if not data:
        return 0, b""
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split()[1])
    return status, (json.loads(body) if status == 200 else body)


def _closed_within(s: socket.socket, seconds: float) -> float | None:
    """Seconds until the server closed ``s`` (reading what it sent), or None."""
    t0 = time.monotonic()
    s.settimeout(0.1)
    while time.monotonic() - t0 < seconds:
        try:
            if not s.recv(65536):
                return time.monotonic() - t0
        except socket.timeout:
            continue
        except OSError:
            return time.monotonic() - t0
    return None


def test_a_client_over_its_limit_is_refused_and_others_are_served():
    with Running(per_client=4, idle_s=30) as srv:
        held = [srv.connect(HOG) for _ in range(4)]
        extra = srv.connect(HOG)
        extra.settimeout(5)
        assert extra.recv(4096).startswith(b"HTTP/1.1 429"), "the fifth connection of one address was not refused"
        assert srv.get(VISITOR) == (200, {"client": VISITOR, "got": 0})
        assert srv.guard.shed.get("over the per-client limit") == 1
        for s in held + [extra]:
            s.close()


def test_the_cap_sheds_the_hog_not_the_visitors():
    # the old server (uvicorn's limit_concurrency) answered 503 to everyone once the cap was reached
    with Running(max_connections=10, per_client=32, idle_s=30) as srv:
        held = [srv.connect(HOG) for _ in range(10)]
        time.sleep(0.3)
        assert srv.guard.count == 10
        more = srv.connect(HOG)  # the biggest holder asking for more is refused
        more.settimeout(5)
        assert more.recv(4096).startswith(b"HTTP/1.1 503")
        visits = [srv.connect(VISITOR) for _ in range(3)]  # three at once: each makes room
        for v in visits:
            v.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert _answer(v) == (200, {"client": VISITOR, "got": 0})
        open_ = sum(_closed_within(s, 0.05) is None for s in held)
        assert open_ == 7, f"{open_} of the hog's 10 idle connections are open after three visitors came"
        assert srv.guard.shed == {"refused at the cap": 1, "evicted at the cap": 3}
        for s in held + visits + [more]:
            s.close()


def test_idle_and_trickling_connections_are_closed_on_time():
    with Running(idle_s=1, head_s=2) as srv:
        silent = srv.connect(HOG)
        trickle = srv.connect(HOG)
        request = b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 200

        def dribble():
            for b in request:
                try:
                    trickle.send(bytes([b]))
                except OSError:
                    return
                time.sleep(0.1)

        threading.Thread(target=dribble, daemon=True).start()
        t_silent = _closed_within(silent, 10)
        t_trickle = _closed_within(trickle, 10)
        assert t_silent is not None and 0.9 <= t_silent <= 4, t_silent
        # the head's 2 s run from its first byte, whatever the bytes keep coming
        assert t_trickle is not None and t_trickle <= 5, t_trickle
        assert srv.guard.shed.get("idle") == 1 and srv.guard.shed.get("slow request head") == 1, srv.guard.shed
        for s in (silent, trickle):
            s.close()


def test_a_body_trickling_below_the_rate_is_cut_off_and_a_fast_one_is_read():
    with Running(head_s=1, body_bytes_per_s=1024) as srv:
        slow = srv.connect(HOG)
        slow.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
        stop = threading.Event()

        def dribble():
            while not stop.is_set():
                try:
                    slow.send(b"x" * 10)
                except OSError:
                    return
                time.sleep(0.2)

        threading.Thread(target=dribble, daemon=True).start()
        took = _closed_within(slow, 10)
        stop.set()
        assert took is not None and took <= 5, took
        assert srv.guard.shed.get("slow request body") == 1, srv.guard.shed
        with srv.connect(VISITOR) as fast:
            fast.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\nConnection: close\r\n\r\n")
            for _ in range(20):
                fast.sendall(b"y" * 10000)
                time.sleep(0.05)
            assert _answer(fast) == (200, {"client": VISITOR, "got": 200000})
        slow.close()


def test_a_trusted_proxy_is_not_limited_and_only_it_may_name_the_client():
    with Running(per_client=2, idle_s=30) as srv:
        held = [srv.connect(PROXY) for _ in range(5)]
        assert srv.get(PROXY, "X-Forwarded-For: 203.0.113.7\r\n") == (200, {"client": "203.0.113.7", "got": 0})
        assert srv.get(HOG, "X-Forwarded-For: 203.0.113.7\r\n") == (200, {"client": HOG, "got": 0})
        assert srv.guard.shed == {}
        for s in held:
            s.close()


def test_an_ipv6_client_is_its_64():
    assert client_key("2001:db8:1:2:aaaa::1") == client_key("2001:db8:1:2:bbbb::9") == "2001:db8:1:2::/64"
    assert client_key("2001:db8:1:3::1") != client_key("2001:db8:1:2::1")
    assert client_key("::ffff:192.0.2.1") == "192.0.2.1"
    assert client_key("192.0.2.1") == "192.0.2.1"


def test_a_bad_proxy_list_is_one_sentence(tmp_path):
    from typer.testing import CliRunner

    from arena.cli import app

    result = CliRunner().invoke(app, ["serve", str(tmp_path / "x.db"), "--unsafe-sandbox", "basic",
                                      "--unsafe-build-sandbox", "basic", "--forwarded-allow-ips", "10.0.0.1,proxy"])
    assert result.exit_code == 2, result.output
    assert "--forwarded-allow-ips" in result.output and "'proxy'" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "x.db").exists()


NGINX = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.path.exists(p)),
                                      None)


def _nginx_in_front(tmp_path: Path, upstream_port: int) -> tuple[Path, int, int]:
    """deploy/nginx.conf as shipped, on loopback ports of its own with a self-signed
    certificate and ``upstream_port`` for the server: (main config, http port, https port)."""
    def free_port():
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]

    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                    "/CN=league.example.org", "-keyout", str(tmp_path / "key.pem"), "-out", str(tmp_path / "cert.pem")],
                   check=True, capture_output=True)
    http, https = free_port(), free_port()
    conf = (Path(__file__).resolve().parents[1] / "deploy" / "nginx.conf").read_text()
    for old, new in (("/etc/letsencrypt/live/league.example.org/fullchain.pem", str(tmp_path / "cert.pem")),
                     ("/etc/letsencrypt/live/league.example.org/privkey.pem", str(tmp_path / "key.pem")),
                     ("server 127.0.0.1:8000;", f"server 127.0.0.1:{upstream_port};"),
                     ("listen 443 ssl http2;", f"listen 127.0.0.1:{https} ssl http2;"),
                     ("listen 80;", f"listen 127.0.0.1:{http};"),
                     ("listen [::]:443 ssl http2;", ""), ("listen [::]:80;", "")):
        assert old in conf, f"deploy/nginx.conf no longer says {old!r}"
        conf = conf.replace(old, new)
    (tmp_path / "arena.conf").write_text(conf)
    for d in ("logs", "tmp"):
        (tmp_path / d).mkdir()
    main = tmp_path / "nginx.conf"
    main.write_text(f"worker_processes 1;\npid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/logs/error.log;\n"
                    "events { worker_connections 1024; }\n"
                    f"http {{ access_log off; client_body_temp_path {tmp_path}/tmp/body; "
                    f"proxy_temp_path {tmp_path}/tmp/proxy; fastcgi_temp_path {tmp_path}/tmp/fcgi; "
                    f"uwsgi_temp_path {tmp_path}/tmp/uwsgi; scgi_temp_path {tmp_path}/tmp/scgi; "
                    f"include {tmp_path}/arena.conf; }}\n")
    return main, http, https


def test_behind_the_shipped_nginx_the_client_is_the_address_nginx_saw(tmp_path):
    if NGINX is None:
        # deploy/nginx.conf is checked with a real nginx; CI installs it (.ci/run), so there
        # a missing one is a failure, not a skip
        if os.environ.get("CI") == "true":
            pytest.fail("nginx is not installed: .ci/run installs it (apt-get install nginx)")
        pytest.skip("nginx is not installed (deploy/nginx.conf is checked with it): apt-get install nginx")
    import ssl

    with Running(per_client=2, idle_s=30) as srv:
        main, http, https = _nginx_in_front(tmp_path, srv.port)
        check = subprocess.run([NGINX, "-t", "-p", str(tmp_path), "-c", str(main)], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
        proc = subprocess.Popen([NGINX, "-p", str(tmp_path), "-c", str(main), "-g", "daemon off;"],
                                stderr=subprocess.PIPE, start_new_session=True)
        try:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            answers = []
            deadline = time.monotonic() + 20
            while len(answers) < 4 and time.monotonic() < deadline:
                raw = socket.socket()
                raw.settimeout(10)
                raw.bind((HOG, 0))
                try:
                    raw.connect(("127.0.0.1", https))
                except ConnectionRefusedError:  # not listening yet
                    raw.close()
                    time.sleep(0.1)
                    continue
                with ctx.wrap_socket(raw, server_hostname="league.example.org") as s:
                    s.sendall(b"GET / HTTP/1.1\r\nHost: league.example.org\r\nX-Forwarded-For: 203.0.113.7\r\n"
                              b"Connection: close\r\n\r\n")
                    answers.append(_answer(s))
            # a forged X-Forwarded-For is replaced; the server believes nginx (127.0.0.1), and
            # nginx's connections are not held to the per-client limit of 2
            assert answers == [(200, {"client": HOG, "got": 0})] * 4, answers
            assert srv.guard.shed.get("over the per-client limit") is None, srv.guard.shed
        finally:
            proc.terminate()
            proc.wait(20)

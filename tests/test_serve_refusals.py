"""What a public league refuses, and how it says so: archive shapes, names and their
look-alikes, paths in bots' output, errors under /api, the Host header, the league's folder."""

from __future__ import annotations

import asyncio
import io
import json
import socket
import tarfile
import zipfile

import pytest

from arena.packages.package import PackageError, unpack
from arena.web.security import SecurityHeaders, scrub, scrub_sentence
from arena.web.store import fold
from arena.web.submissions import private_paths


def _tar(members) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, kind in members:
            info = tarfile.TarInfo(name)
            if kind == "dir":
                info.type = tarfile.DIRTYPE
                tf.addfile(info)
            else:
                info.size = 1
                tf.addfile(info, io.BytesIO(b"x"))
    return buf.getvalue()


def _zip(members) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, kind in members:
            zf.writestr(name + ("/" if kind == "dir" else ""), "" if kind == "dir" else "x")
    return buf.getvalue()


SHAPES = {
    "a name over 255 bytes": ([("a" * 300, "file")], "at most 255"),
    "a path 2,100 folders deep": ([("/".join(["d"] * 2100) + "/f", "file")], "folders deep"),
    "a file then a folder of that name": ([("x", "file"), ("x", "dir")], "both a file and a folder"),
    "a file then a member below it": ([("x", "file"), ("x/y", "file")], "both a file and a folder"),
}


@pytest.mark.parametrize("pack", [_tar, _zip])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_archive_shapes_that_cannot_be_unpacked_are_refused_with_a_sentence(tmp_path, shape, pack):
    members, words = SHAPES[shape]
    with pytest.raises(PackageError, match=words):
        unpack(pack(members), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_path_starting_a_line_of_escaped_stderr_is_scrubbed():
    detail = json.dumps("warming up\n/srv/arena/ladder.db.bots/x@1/bot.py:3: UserWarning: careful\n")
    shown = scrub(detail)
    assert "/srv" not in shown and "bot.py:3: UserWarning" in shown
    assert scrub("Traceback\\n  File \"/srv/a/b.py\", line 1") == "Traceback\\n  File \"b.py\", line 1"
    assert scrub("see https://example.org/a/b") == "see https://example.org/a/b"


def test_a_refusal_keeps_what_the_author_wrote():
    said = scrub_sentence("the archive member '/etc/passwd' has an absolute path (in /srv/arena/x/y)")
    assert said == "the archive member '/etc/passwd' has an absolute path (in y)"


@pytest.mark.parametrize("a, b", [("py-example", "PY-EXAMPLE"), ("py-example", "py_example"),
                                  ("greedy", "gr33dy"), ("greedy", "ｇｒｅｅｄｙ"), ("bolt", "B0LT"),
                                  ("mybot", "my.bot"), ("hill1", "hilll")])
def test_look_alike_names_fold_alike(a, b):
    assert fold(a) == fold(b)


def test_different_names_stay_apart():
    assert fold("greedy") != fold("greed") and fold("alpha") != fold("alpine")


def test_the_whole_folder_of_the_league_is_private(tmp_path):
    league = tmp_path / "ladder.db"
    league.write_bytes(b"")
    (tmp_path / "backup.db").write_bytes(b"")
    (tmp_path / "serve.log").write_text("")
    (tmp_path / "ladder.db.bots" / "other@1").mkdir(parents=True)
    hidden = set(private_paths(league))
    for name in ("backup.db", "serve.log", "ladder.db", "ladder.db.bots"):
        assert str((tmp_path / name).resolve()) in hidden
    assert str(tmp_path.resolve()) in hidden
    assert str((tmp_path / "ladder.db.bots" / "other@1").resolve()) in hidden


def test_an_unexpected_error_under_api_is_json():
    async def broken(scope, receive, send):
        raise RuntimeError("boom")

    sent = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request", "body": b""}

    app = SecurityHeaders(broken)
    asyncio.run(app({"type": "http", "method": "GET", "path": "/api/leaderboard", "headers": []}, receive, send))
    assert sent[0]["status"] == 500 and dict(sent[0]["headers"])[b"content-type"] == b"application/json"
    assert json.loads(sent[1]["body"])["error"]
    sent.clear()
    asyncio.run(app({"type": "http", "method": "GET", "path": "/", "headers": []}, receive, send))
    assert dict(sent[0]["headers"])[b"content-type"].startswith(b"text/html")


def test_api_links_use_the_public_url_not_the_host_header(tmp_path):
    pytest.importorskip("uvicorn")
    from arena.bench.serve import Server, make_league

    league = make_league(tmp_path, games=2)
    server = Server(league, play=False, extra=("--public-url", "https://league.example.org"))
    try:
        server.wait_ready()
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
            s.sendall(b"GET /api/games/1 HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        body = json.loads(data.partition(b"\r\n\r\n")[2])
        assert body["url"] == "https://league.example.org/game/1"
        assert b"evil.example" not in data
    finally:
        server.stop()

"""Whatever a bot or an author writes, the website stays whole: a real ``arena serve`` on
127.0.0.1 with a bot whose ``ready`` name and package fields are hostile HTML, its pages
rendered in headless Chromium (with the server's headers, and again from a file without
them), the security headers on every response, no server path in any answer, and a
hypothesis run over every route's parameters that never gets a 500."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from engine import RuleSpec  # noqa: E402

from arena.league import League  # noqa: E402
from arena.replay.html import json_for_script  # noqa: E402
from arena.web import store  # noqa: E402
from arena.packages.package import Manifest  # noqa: E402
from arena.web.security import parse_id, scrub  # noqa: E402

from test_web_site import MAX_UPLOAD_KIB, Server, chromium_dom  # noqa: E402

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_BOT = ROOT / "bots" / "examples" / "packages" / "python" / "bot.py"

#: Every way a value could break out of its context; if any of it ran, <html> gets data-pwned.
PWN = "document.documentElement.setAttribute('data-pwned','{}')"
HOSTILE = ("<!--<script>" + f"</script><script>{PWN.format(1)}</script>"
           + f"<img src=x onerror=\"{PWN.format(2)}\"><svg onload=\"{PWN.format(3)}\">"
           + "\u2028\u2029 & \"quoted\" 'single' ]]> --> </textarea></pre></table></title>")
#: What a bot may say in ``ready`` (printable, at most 200 characters) that would have blanked the viewer.
READY = "<!--<script>" + f"</script><script>{PWN.format(4)}</script><img src=x onerror=\"{PWN.format(5)}\">"


def pwned(dom: str) -> bool:
    return "data-pwned=" in dom


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    folder = root / "league.db.bots" / "evil@1"  # where a submitted package lives
    folder.mkdir(parents=True)
    bot = folder / "evil_bot.py"
    text = EXAMPLE_BOT.read_text()
    assert 'NAME, VERSION = "py-example", "1.0"' in text
    bot.write_text(text.replace('NAME, VERSION = "py-example", "1.0"',
                                f"NAME, VERSION = {READY!r}, '<!--<script>'"))
    # build logs made public, so the hostile one is on a page anyone can open
    server = Server(root, "--concurrency", "1", "--build-timeout", "60", "--check-timeout", "120",
                    "--max-upload-kib", str(MAX_UPLOAD_KIB), "--public-build-logs")
    with League.create(server.league, RuleSpec(), 2, 0, {"move_ms": 1000}, "basic") as league:
        league.add("random", bot="random")
        league.add("evil@1", cmd=[sys.executable, str(bot)])
    with store.open_league(server.league) as league:
        server.tokens = {"mallory": store.new_token(league, "mallory")}
        manifest = Manifest(name="evil", version="1", author="mallory", run="python3 bot.py", toolchain=("python3",))
        sid = store.add_submission(league, "mallory", manifest, folder, False)
        store.update_submission(
            league, sid, status="accepted", finished=time.time(), verdict=f"passed {HOSTILE}",
            manifest=dict(manifest.to_json(), description=HOSTILE, build=HOSTILE),
            build_log=f"$ make\n{HOSTILE}\nFile \"{root}/league.db.bots/evil@1/bot.py\", line 1",
            check_report={"ok": True, "checks": [{"ok": True, "name": HOSTILE, "detail": HOSTILE,
                                                  "offending": HOSTILE}]},
            sandbox={"build": {"tier": HOSTILE, "protections": [HOSTILE], "unavailable": [
                {"protection": HOSTILE, "reason": f"{root}/secret"}]}})
        server.sid = sid
    server.start()
    # a game in which both bots said ready (on a loaded machine a start may miss its limit,
    # and that game has no name to show): the league plays on until there is one
    deadline, server.gid = time.monotonic() + 300, None
    while time.monotonic() < deadline and server.gid is None:
        status, out = server.get("/api/bots/evil/games")
        for game in out["games"] if status == 200 else []:
            status, body, _ = server.request("GET", f"/game/{game['id']}/replay.json")
            ready = json.loads(body)["ready"] if status == 200 else [None]
            if all(ready) and READY in [r.get("name") for r in ready]:
                server.gid = game["id"]
                break
        time.sleep(0.5)
    assert server.gid is not None, server.log.read_text()[-3000:]
    yield server
    assert server.stop() == 0, server.log.read_text()[-3000:]


def pages(site) -> dict[str, str]:
    """Every page that shows something the hostile bot or its author wrote."""
    return {"leaderboard": "/", "bot": "/bot/evil", "history": "/bot/evil/games", "author": "/author/mallory",
            "submission": f"/submission/{site.sid}", "game": f"/game/{site.gid}", "live": "/live",
            "replay": f"/game/{site.gid}/replay"}


def test_the_embedded_json_escapes_everything_that_could_end_a_script():
    text = json_for_script({"ready": HOSTILE})
    assert json.loads(text) == {"ready": HOSTILE}
    assert not re.search("[<>&\u2028\u2029]", text)


@given(st.recursive(st.text() | st.integers() | st.none(),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                    max_leaves=20))
def test_any_value_round_trips_through_the_script_json(value):
    text = json_for_script(value)
    assert json.loads(text) == value
    assert not re.search("[<>&\u2028\u2029]", text)


def test_scrub_cuts_absolute_paths_and_keeps_urls_and_fractions():
    assert scrub("cannot open /srv/league.db.bots/x@1/bot.py: gone") == "cannot open bot.py: gone"
    assert scrub({"a": ['File "/tmp/arena-sandbox-1/bot.py", line 3']}) == {"a": ['File "bot.py", line 3']}
    assert scrub("/usr/bin/python3 /srv/a/bot.py") == "python3 bot.py"
    assert scrub("see https://example.org/a/b and 1/2/3 and and/or") == "see https://example.org/a/b and 1/2/3 and and/or"
    assert scrub("league.db.bots/x@1/bot.py", ("league.db.bots/",)) == "x@1/bot.py"


def test_parse_id_takes_only_ids_sqlite_can_hold():
    assert parse_id("12") == 12 and parse_id(str(2 ** 63 - 1)) == 2 ** 63 - 1
    for bad in ("0", "-1", str(2 ** 63), "99999999999999999999999", "1e3", "١٢", "", "x"):
        assert parse_id(bad) is None, bad


def test_every_response_carries_the_security_headers(site):
    answers = [site.request("GET", p) for p in pages(site).values()]
    answers += [site.request("GET", p) for p in ("/api", "/api/leaderboard", f"/game/{site.gid}/replay.json",
                                                  "/rules", "/submit", "/nope", "/api/nope", "/game/0",
                                                  "/submission/99999999999999999999999")]
    answers += [site.request("POST", "/api/submissions", b"x", {"Authorization": "Bearer nope"}),
                site.request("DELETE", "/"), site.request("POST", "/api/leaderboard", b"")]
    statuses = set()
    for status, _, headers in answers:
        statuses.add(status)
        csp = headers["Content-Security-Policy"]
        assert "default-src 'none'" in csp and "frame-ancestors" in csp and "base-uri 'none'" in csp
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["Referrer-Policy"] == "same-origin"
        assert headers["X-Frame-Options"] in ("DENY", "SAMEORIGIN")
    assert {200, 401, 404, 405} <= statuses
    # only the replay viewer may run a script (its own, by hash), and only it may be framed (by the site)
    for name, p in pages(site).items():
        csp = site.request("GET", p)[2]["Content-Security-Policy"]
        if name == "replay":
            assert re.search(r"script-src 'sha256-[A-Za-z0-9+/=]+'$", csp.split(";")[2].strip())
            assert "frame-ancestors 'self'" in csp
        else:
            assert "script-src 'none'" in csp and "frame-ancestors 'none'" in csp


def test_the_replay_json_downloads_as_a_file(site):
    status, body, headers = site.request("GET", f"/game/{site.gid}/replay.json")
    assert status == 200 and headers["Content-Disposition"] == f'attachment; filename="game-{site.gid}.json"'
    record = json.loads(body)
    assert record["format"] == "project-l-replay" and READY in [r.get("name") for r in record["ready"]]


def test_hostile_names_and_fields_run_no_script_and_leave_pages_whole(site, tmp_path):
    for name, p in pages(site).items():
        status, body, _ = site.request("GET", p)
        assert status == 200, (p, body[:300])
        source = body.decode()
        if name not in ("leaderboard", "game", "live"):
            assert HOSTILE[:12] not in source, f"{p} embeds the hostile text unescaped"
        # in the browser, with the server's headers
        dom = chromium_dom(site.url + p)
        assert not pwned(dom), f"a script ran on {p}"
        # and from a file, without them (nor the viewer's own <meta> policy): the escaping alone keeps
        # every script out
        meta = re.compile(r'<meta http-equiv="Content-Security-Policy"[^>]*>')
        assert bool(meta.search(source)) == (name == "replay")
        local = tmp_path / f"{name}.html"
        local.write_text(meta.sub("", source))
        bare = chromium_dom(local.as_uri())
        assert not pwned(bare), f"a script ran on {p} without the server's headers"
        for page in (dom, bare):
            if name == "replay":  # the viewer ran and shows the name as text
                assert "final scores" in page, f"the replay viewer of {p} is blank"
                assert "&lt;!--&lt;script&gt;&lt;/script&gt;&lt;script&gt;" in page
                assert 'id="bots-summary"' in page and 'id="log"' in page
            else:  # the page parsed as it was written: nothing added, nothing swallowed
                assert not re.search(r"<(script|img)\b", page), f"{p} gained an element"
                assert not re.search(r"<[^>]*\son\w+=", page), f"{p} gained an event handler"
                for tag in ("<svg", "<table", "<h2", "<form", "<pre"):
                    # counted in the page read from the file only: served again, a page may have
                    # changed as the league plays on (a game ends, a chart appears, a live game
                    # goes), and the browser parses the same text alike with or without headers
                    if page is bare:
                        assert page.count(tag) == source.count(tag), f"{p}: {tag} elements added or swallowed"
                assert "</main>" in page and "<header>" in page
    bot = chromium_dom(site.url + "/bot/evil")
    assert 'id="description"' in bot and "&lt;!--&lt;script&gt;" in bot
    sub = chromium_dom(f"{site.url}/submission/{site.sid}")
    assert 'id="build-log"' in sub and "&lt;/textarea&gt;&lt;/pre&gt;" in sub


def test_no_server_path_in_any_page_or_api_answer(site):
    secrets = {str(site.root), str(site.league), str(Path(sys.executable).parent), str(ROOT)}
    answers = [site.request("GET", p)[1] for p in pages(site).values()]
    answers += [site.request("GET", p)[1] for p in (
        "/api/leaderboard", "/api/bots/evil", "/api/bots/evil/games", "/api/authors/mallory",
        f"/api/games/{site.gid}", f"/api/submissions/{site.sid}", "/api/games/live", "/api/rules",
        f"/game/{site.gid}/replay.json", "/rules", "/api")]
    for body in answers:
        text = body.decode()
        for secret in secrets:
            assert secret not in text and secret.replace("/", "\\/") not in text
        assert "league.db.bots/" not in text and "league.db.replays/" not in text
    board = {r["name"]: r for r in site.get("/api/leaderboard")[1]["table"]}
    assert board["evil@1"]["bot"] == f"{Path(sys.executable).name} evil_bot.py"


# ------------------------------------------------------------- every route, any parameter
ID_TEXT = st.one_of(st.integers(min_value=-(2 ** 70), max_value=2 ** 70).map(str),
                    st.text(min_size=1, max_size=30), st.sampled_from(["0", "1", "2", "9" * 30, "evil", "random"]))
QUERY = st.dictionaries(st.sampled_from(["page", "per_page", "opponent", "result", "keep_previous", "x"]),
                        st.one_of(ID_TEXT, st.sampled_from(["win", "draw", "loss", "", "1"])), max_size=4)


def routes(site) -> list[tuple[list[str], str]]:
    """Every route of the running site, read from its /api page."""
    html = site.request("GET", "/api")[1].decode()
    found = re.findall(r"<tr><td>([A-Z, ]+)</td><td><code>([^<]+)</code>", html)
    assert len(found) >= 20, found
    return [(methods.split(", "), path.replace("&amp;", "&")) for methods, path in found]


def test_the_api_page_lists_every_route(tmp_path):
    from starlette.routing import Route

    from arena.web.app import create_app, endpoints

    with League.create(tmp_path / "l.db", RuleSpec(), 2) as league:
        league.add("random", bot="random")
    app = create_app(tmp_path / "l.db", play=False)
    listed = {e["path"] for e in endpoints(app)}
    for r in app.routes:
        if isinstance(r, Route):
            assert re.sub(r":\w+}", "}", r.path) in listed
            assert (r.endpoint.__doc__ or "").strip(), f"{r.path} has no docstring for the /api page"


def test_no_parameter_of_any_route_gets_a_500(site):
    table = routes(site)

    @settings(max_examples=int(os.environ.get("ARENA_WEB_FUZZ_EXAMPLES", "250")), deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(route=st.sampled_from(table), params=st.lists(ID_TEXT, min_size=3, max_size=3), query=QUERY,
           body=st.binary(max_size=300),
           token=st.text(st.characters(min_codepoint=33, max_codepoint=126), max_size=20))
    def probe(route, params, query, body, token):
        methods, template = route
        values = iter(params)
        path = re.sub(r"\{[^}]+\}", lambda m: quote(next(values), safe=""), template)
        q = "&".join(f"{quote(k)}={quote(v, safe='')}" for k, v in query.items())
        url = path + (f"?{q}" if q else "")
        for method in methods:
            headers = {"Authorization": f"Bearer {token}"} if method == "POST" else {}
            status, out, answer = site.request(method, url, body if method == "POST" else None, headers)
            assert status < 500, (method, url, status, out[:500])
            assert "frame-ancestors" in answer["Content-Security-Policy"]
            assert answer["X-Content-Type-Options"] == "nosniff"

    probe()
    assert "Traceback" not in site.log.read_text()


def test_a_saved_viewer_with_a_hostile_ready_name_runs_only_its_own_script(tmp_path):
    from test_replay_html import play_replay

    from arena.replay.html import PAGE_POLICY, render_html

    record = play_replay(seed=3, variants=(), bots=("greedy", "random"))
    record["ready"] = [{"name": READY, "version": "<!--"}, {"name": "random", "version": "1.0"}]
    page = render_html(record)
    assert f'<meta http-equiv="Content-Security-Policy" content="{PAGE_POLICY}">' in page
    assert "<!--" not in page.split("<body", 1)[1]
    path = tmp_path / "viewer.html"
    path.write_text(page)
    dom = chromium_dom(path.as_uri())
    assert not pwned(dom) and "final scores" in dom
    assert "&lt;!--&lt;script&gt;&lt;/script&gt;" in dom


def asgi_get(app, path: str = "/") -> tuple[int, dict, bytes]:
    """One GET through an ASGI app, without a server: status, headers, body."""
    import asyncio

    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(), "query_string": b"",
             "headers": [], "scheme": "http", "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1),
             "root_path": "", "http_version": "1.1", "asgi": {"version": "3.0"}}
    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    headers = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    return start["status"], headers, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


def test_an_unexpected_error_is_a_plain_500_with_the_headers(caplog):
    from arena.web.security import SecurityHeaders, page_policy

    async def broken(scope, receive, send):
        raise RuntimeError("secret detail /srv/arena/ladder.db")

    status, headers, body = asgi_get(SecurityHeaders(broken, page_policy()))
    assert status == 500 and b"Server error" in body
    assert b"secret" not in body and b"Traceback" not in body and b"/srv" not in body
    assert headers["x-content-type-options"] == "nosniff" and "frame-ancestors 'none'" in headers[
        "content-security-policy"]
    assert "secret detail" in caplog.text  # the operator's log has it


def test_a_route_keeps_its_own_policy_and_gets_the_other_headers():
    from arena.web.security import SecurityHeaders

    async def framed(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-security-policy", b"default-src 'none'; frame-ancestors 'self'"),
            (b"x-content-type-options", b"sniff-away")]})
        await send({"type": "http.response.body", "body": b"ok"})

    status, headers, body = asgi_get(SecurityHeaders(framed, "default-src 'none'; frame-ancestors 'none'"))
    assert status == 200 and body == b"ok"
    assert headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'self'"
    assert headers["x-frame-options"] == "SAMEORIGIN" and headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "same-origin"

"""The pages a ladder's users expect, against a real ``arena serve`` on 127.0.0.1: a bot's whole
match history (paged, filtered by opponent and result), head-to-head records, replay JSON
downloads that play back, an author's page, the description and owner on a bot's page,
withdrawing a version from its page, live games, the rules page's sandbox read from the
records, and the API page."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from engine import RuleSpec  # noqa: E402

from arena.league import League  # noqa: E402
from arena.web import store  # noqa: E402
from arena.packages.package import Manifest, pack  # noqa: E402

from test_web_site import Server  # noqa: E402

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_BOT = ROOT / "bots" / "examples" / "packages" / "python" / "bot.py"
DESCRIPTION = "Plans one turn ahead <b>greedily</b> & keeps its pieces"


class Serve(Server):
    """:class:`test_web_site.Server` with more options for ``arena serve``."""

    def __init__(self, root: Path, *args: str):
        super().__init__(root, "--concurrency", "1", *args)

    def html(self, path: str) -> tuple[int, str]:
        status, body, _ = self.request("GET", path)
        return status, body.decode()

    def form(self, path: str, fields: dict) -> tuple[int, str]:
        status, body, _ = self.request("POST", path, urlencode(fields).encode(),
                                       {"Content-Type": "application/x-www-form-urlencoded"})
        return status, body.decode()


def submitted(league, root: Path, author: str, name: str, version: str, status: str = "accepted",
              description: str | None = None) -> int:
    """A submission as the pipeline leaves it (the league entry runs the example bot from its folder)."""
    folder = root / "league.db.bots" / f"{name}@{version}"
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text(EXAMPLE_BOT.read_text())
    manifest = Manifest(name=name, version=version, author=author, run="python3 bot.py", toolchain=("python3",))
    sid = store.add_submission(league, author, manifest, folder, True)
    store.update_submission(league, sid, status=status, finished=time.time(), verdict=f"{status} (test)",
                            manifest=dict(manifest.to_json(), description=description))
    if status == "accepted":
        league.add(f"{name}@{version}", cmd=[sys.executable, str(folder / "bot.py")])
    return sid


def live_now(server: Serve, timeout: float = 60) -> tuple[dict, str, str]:
    """The first non-empty answer of /api/games/live, the /live page right after it, and the page
    of a bot of a game in flight that says so."""
    first = page = None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, out = server.get("/api/games/live")
        assert status == 200
        if out["games"] and first is None:
            first = out, server.html("/live")[1]
        if out["games"]:
            bot = server.html(f"/bot/{out['games'][0]['bots'][0].split('@')[0]}")[1]
            if 'id="playing"' in bot:
                return (*first, bot)
        time.sleep(0.05)
    raise AssertionError(f"no game was ever in flight, or no bot page said so: {first}")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("ladder")
    server = Serve(root, "--pace", "0")
    with League.create(server.league, RuleSpec(), 2, 0, {"move_ms": 1000}) as league:
        league.add("random", bot="random")
        league.add("greedy", bot="greedy")
    with store.open_league(server.league) as league:
        server.tokens = {a: store.new_token(league, a) for a in ("alice", "bob", "carol")}
        server.sids = {
            "pyb@1": submitted(league, root, "alice", "pyb", "1", description=DESCRIPTION),
            "pyb@2": submitted(league, root, "alice", "pyb", "2"),
            "other@1": submitted(league, root, "bob", "other", "1"),
            "pyb@3": submitted(league, root, "bob", "pyb", "3", status="check failed"),
        }
    server.start()
    server.live = live_now(server)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        total = server.get("/api/bots/pyb/games")[1]["total"]
        if total >= 8 and server.get("/api/bots/other/games")[1]["total"] >= 2:
            break
        time.sleep(0.5)
    assert total >= 8, server.log.read_text()[-3000:]
    assert server.stop() == 0, server.log.read_text()[-3000:]
    # the rest reads a league that no longer changes
    server.args = ["--no-play", "--pending-per-author", "1"]
    server.start()
    yield server
    assert server.stop() == 0, server.log.read_text()[-3000:]


def all_games(site, name: str, **filters) -> list[dict]:
    query = urlencode(dict(filters, per_page=200))
    status, out = site.get(f"/api/bots/{name}/games?{query}")
    assert status == 200 and out["pages"] == 1
    return out["games"]


def test_match_history_is_paged_newest_first(site):
    every = all_games(site, "pyb")
    ids = [g["id"] for g in every]
    assert ids == sorted(ids, reverse=True) and len(ids) >= 8
    seen = []
    status, first = site.get("/api/bots/pyb/games?per_page=3")
    assert status == 200 and first["pages"] == -(-len(ids) // 3) and first["total"] == len(ids)
    for page in range(1, first["pages"] + 1):
        out = site.get(f"/api/bots/pyb/games?per_page=3&page={page}")[1]
        assert len(out["games"]) == min(3, len(ids) - 3 * (page - 1))
        seen += [g["id"] for g in out["games"]]
    assert seen == ids
    assert site.get(f"/api/bots/pyb/games?per_page=3&page={first['pages'] + 1}")[1]["games"] == []
    # the page: a table row per game, with links to the next page and to each replay file
    status, page = site.html("/bot/pyb/games?per_page=3&page=2")
    assert status == 200 and f"page 2 of {first['pages']}" in page
    assert re.findall(r'<tr><td><a href="/game/(\d+)">', page) == [str(i) for i in ids[3:6]]
    assert '<a href="/bot/pyb/games?per_page=3">newer</a>' in page
    assert (first["pages"] > 2) == ('<a href="/bot/pyb/games?per_page=3&amp;page=3">older</a>' in page)
    assert page.count('download>JSON</a>') == 3
    assert '<input type="hidden" name="per_page" value="3">' in page  # the filters keep the page size


def test_match_history_filters_by_opponent_and_result(site):
    every = all_games(site, "pyb")
    for g in every:
        me = g["me"]
        assert me["bot"].startswith("pyb@")
        ranks = [x["rank"] for x in g["seats"]]
        expected = "loss" if me["rank"] != 1 else "draw" if ranks.count(1) > 1 else "win"
        assert g["result"] == expected
    by_result = {r: all_games(site, "pyb", result=r) for r in ("win", "draw", "loss")}
    assert sum(len(v) for v in by_result.values()) == len(every)
    assert all(g["result"] == r for r, games in by_result.items() for g in games)
    for opponent in ("random", "greedy", "other"):
        mine = all_games(site, "pyb", opponent=opponent)
        assert [g["id"] for g in mine] == [g["id"] for g in every
                                           if any(o.split("@")[0] == opponent for o in g["opponents"])]
    versioned = all_games(site, "pyb", opponent="other@1")
    assert [g["id"] for g in versioned] == [g["id"] for g in all_games(site, "pyb", opponent="other")]
    both = all_games(site, "pyb", opponent="random", result="win")
    assert {g["id"] for g in both} == {g["id"] for g in by_result["win"]} & {
        g["id"] for g in all_games(site, "pyb", opponent="random")}
    # the page keeps the filters in its form and its links
    status, page = site.html("/bot/pyb/games?opponent=random&result=win")
    assert status == 200
    assert '<option value="random" selected>' in page and '<option value="win" selected>' in page
    assert page.count('<tr><td><a href="/game/') == len(both)
    assert '<option value="other@1" selected>' in site.html("/bot/pyb/games?opponent=other@1")[1]


@pytest.mark.parametrize("query", ["result=lost", "page=0", "page=-1", "per_page=0", "per_page=201", "page=x",
                                   "per_page=1.5", "page=" + "9" * 40])
def test_match_history_refuses_bad_parameters_with_400(site, query):
    status, out = site.get(f"/api/bots/pyb/games?{query}")
    assert status == 400 and out["error"]
    status, page = site.html(f"/bot/pyb/games?{query}")
    assert status == 400 and "Bad request" in page


def test_unknown_bots_and_authors_are_404(site):
    for path in ("/bot/nobody/games", "/author/nobody", "/bot/nobody"):
        assert site.html(path)[0] == 404
    for path in ("/api/bots/nobody/games", "/api/authors/nobody", "/api/bots/nobody", "/api/games/0"):
        status, out = site.get(path)
        assert status == 404 and out["error"]


def test_head_to_head_counts_every_pair_of_seats(site):
    expected: dict[str, dict] = {}
    for g in all_games(site, "pyb"):
        me = g["me"]
        for x in g["seats"]:
            name = x["bot"].split("@")[0]
            if x is me or x == me or name == "pyb":
                continue
            r = expected.setdefault(name, {"games": 0, "ahead": 0, "level": 0, "behind": 0})
            r["games"] += 1
            r["ahead" if me["rank"] < x["rank"] else "level" if me["rank"] == x["rank"] else "behind"] += 1
    status, bot = site.get("/api/bots/pyb")
    assert status == 200
    got = {r["opponent"]: {k: r[k] for k in ("games", "ahead", "level", "behind")} for r in bot["head_to_head"]}
    assert got == expected and expected
    for r in bot["head_to_head"]:
        assert r["share"] == round((r["ahead"] + r["level"] / 2) / r["games"], 3)
    page = site.html("/bot/pyb")[1]
    table = re.search(r'<table id="head-to-head">.*?</table>', page).group(0)
    for name, r in expected.items():
        assert f'<a href="/bot/pyb/games?opponent={name}">{r["games"]}</a>' in table


def test_a_downloaded_replay_plays_back(site, tmp_path):
    gid = all_games(site, "pyb")[0]["id"]
    status, game = site.get(f"/api/games/{gid}")
    assert status == 200 and game["replay_url"] == f"{site.url}/game/{gid}/replay.json"
    status, body, headers = site.request("GET", f"/game/{gid}/replay.json")
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert headers["Content-Disposition"] == f'attachment; filename="game-{gid}.json"'
    path = tmp_path / f"game-{gid}.json"
    path.write_bytes(body)
    record = json.loads(body)
    assert [x["bot"] for x in game["seats"]] == record["bots"]
    out = subprocess.run([sys.executable, "-m", "arena.cli", "replay", str(path), "--html", str(tmp_path / "r.html")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    page = site.html(f"/game/{gid}")[1]
    assert f'href="/game/{gid}/replay.json" download' in page
    assert site.request("GET", "/game/999999/replay.json")[0] == 404


def test_the_bot_page_shows_its_owner_description_and_only_the_owners_submissions(site):
    status, page = site.html("/bot/pyb")
    assert status == 200
    assert '<p id="author">Author: <a href="/author/alice">alice</a></p>' in page
    assert '<p id="description">Plans one turn ahead &lt;b&gt;greedily&lt;/b&gt; &amp; keeps its pieces</p>' in page
    assert f'/submission/{site.sids["pyb@1"]}"' in page and f'/submission/{site.sids["pyb@3"]}"' not in page
    assert site.get("/api/bots/pyb")[1]["description"] == DESCRIPTION
    house = site.html("/bot/greedy")[1]
    assert "A house bot of this league" in house and 'id="withdraw"' not in house


def test_an_authors_page_lists_their_bots_and_submissions(site):
    status, page = site.html("/author/alice")
    assert status == 200
    bots = re.search(r'<table id="bots">.*?</table>', page).group(0)
    assert bots.count('<a href="/bot/pyb">pyb</a>') == 2 and "other" not in bots
    status, out = site.get("/api/authors/bob")
    assert status == 200 and [b["name"] for b in out["bots"]] == ["other"]
    assert {s["entry"]: s["status"] for s in out["submissions"]} == {"other@1": "accepted", "pyb@3": "check failed"}
    assert "folder" not in out["submissions"][0] and "build_log" not in out["submissions"][0]
    board = site.html("/")[1]
    assert '<a href="/author/alice">alice</a>' in board


def test_withdrawing_a_version_from_its_page(site):
    page = site.html("/bot/pyb")[1]
    form = re.search(r'<form id="withdraw" method="post" action="/bot/pyb/withdraw">.*?</form>', page).group(0)
    assert '<option value="pyb@1">' in form and '<option value="pyb@2">' in form
    status, page = site.form("/bot/pyb/withdraw", {"entry": "pyb@2", "token": "not-a-token"})
    assert status == 401 and "Unknown token" in page
    status, page = site.form("/bot/pyb/withdraw", {"entry": "pyb@2", "token": site.tokens["bob"]})
    assert status == 403 and "belongs to alice" in page
    status, page = site.form("/bot/pyb/withdraw", {"entry": "other@1", "token": site.tokens["bob"]})
    assert status == 404 and "not a version of pyb" in page
    assert site.form("/bot/pyb/withdraw", {"token": site.tokens["alice"]})[0] == 400
    status, page = site.form("/bot/pyb/withdraw", {"entry": "pyb@2", "token": site.tokens["alice"]})
    assert status == 200 and 'id="message">pyb@2 is withdrawn' in page
    assert "<td>pyb@2</td><td>withdrawn</td>" in page
    assert '<option value="pyb@2">' not in page and '<option value="pyb@1">' in page
    rows = {r["name"]: r for r in site.get("/api/leaderboard")[1]["table"]}
    assert rows["pyb@2"]["status"] == "retired" and rows["pyb@1"]["status"] == "active"
    assert "accepted, withdrawn" in site.html(f"/submission/{site.sids['pyb@2']}")[1]
    status, page = site.form("/bot/pyb/withdraw", {"entry": "pyb@2", "token": site.tokens["alice"]})
    assert status == 409 and "already withdrawn" in page


def test_live_games_were_shown_while_the_league_played(site):
    out, page, bot = site.live
    assert re.search(r'<p id="playing">Playing now: <a href="/live">\d+ games?</a> in flight.</p>', bot)
    assert out["status"] == "playing"
    game = out["games"][0]
    assert len(game["bots"]) == 2 and {"group", "rotation", "started"} <= set(game)
    assert '<table id="live">' in page or "No game in progress right now." in page
    assert 'http-equiv="refresh" content="5"' in page
    assert site.get("/api/games/live")[1] == {"status": "off", "games": []}
    assert "No game in progress right now." in site.html("/live")[1]


def test_the_rules_page_states_the_sandbox_from_the_records(site):
    with store.open_league(site.league) as league:
        in_force = store.sandbox_in_force(league)
    games = in_force["games"]
    assert games is not None and in_force["builds"] is None
    status, page = site.html("/rules")
    assert status == 200
    item = re.search(r'<li id="in-force-games">.*?</li>', page).group(0)
    assert f"tier <b>{games['tier']}</b>" in item and f"the newest {games['records']} games" in item
    assert ("network: none" in item) == (not games["network"])
    assert ("memory: capped" in item) == games["memory_capped"]
    assert "none recorded yet" in re.search(r'<li id="in-force-builds">.*?</li>', page).group(0)
    assert site.get("/api/rules")[1]["in_force"]["games"]["tier"] == games["tier"]


def test_the_api_page_lists_every_endpoint_and_each_answers(site):
    status, page = site.html("/api")
    assert status == 200
    listed = re.findall(r"<tr><td>([A-Z, ]+)</td><td><code>([^<]+)</code></td><td>([^<]+)</td>", page)
    paths = {p for _, p, _ in listed}
    for path in ("/api/leaderboard", "/api/bots/{name}", "/api/bots/{name}/games", "/api/authors/{name}",
                 "/api/games/{gid}", "/api/games/live", "/api/rules", "/api/submissions", "/api/submissions/{sid}",
                 "/bot/{name}/games", "/author/{name}", "/game/{gid}/replay.json", "/live", "/api"):
        assert path in paths, path
    for path in ("/me", "/api/me", "/live/{group}/{rotation}", "/api/games/live/{group}/{rotation}"):
        assert path in paths, path
    game = all_games(site, "pyb")[0]
    values = {"name": "pyb", "bot": "pyb", "gid": str(game["id"]), "sid": str(site.sids["pyb@1"]), "group": str(game["group"]),
              "rotation": str(game["rotation"])}
    for methods, path, summary in listed:
        assert summary.strip(), path
        if "GET" in methods:
            named = dict(values, name="alice") if "author" in path else values
            url = re.sub(r"\{(\w+)\}", lambda m: named[m.group(1)], path)
            if path.startswith(("/api/play/", "/play/game/")):  # a person's game: none was played here
                assert site.request("GET", url)[0] in (403, 404), url
                continue
            if path == "/api/me":  # an author's own page answers their token only
                assert site.request("GET", url)[0] == 401
                assert site.request("GET", url, headers={"Authorization": f"Bearer {site.tokens['bob']}"})[0] == 200
                continue
            assert site.request("GET", url)[0] == 200, url  # a stored game's live page leads to the game's own


def test_a_refusal_for_a_quota_says_when_to_try_again(site, tmp_path):
    folder = tmp_path / "carol-bot"
    folder.mkdir()
    (folder / "bot.py").write_text(EXAMPLE_BOT.read_text())
    toml = 'name = "carolbot"\nversion = "{}"\nauthor = "carol"\ntoolchain = ["python3"]\nrun = "python3 bot.py"\n'
    (folder / "bot.toml").write_text(toml.format("1"))
    first = site.submit(pack(folder)[0], site.tokens["carol"])
    assert first[0] == 202, first
    (folder / "bot.toml").write_text(toml.format("2"))
    data, name = pack(folder)
    status, body, headers = site.request("POST", "/api/submissions", data,
                                         {"Authorization": f"Bearer {site.tokens['carol']}"})
    # the first is still being built and checked (that takes seconds): one in progress is the limit
    assert status == 429 and json.loads(body)["error"]
    assert int(headers["Retry-After"]) >= 1
    boundary = "----quota"
    form = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"token\"\r\n\r\n{site.tokens['carol']}\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"package\"; filename=\"{name}\"\r\n"
            f"Content-Type: application/gzip\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    status, body, headers = site.request("POST", "/submit", form,
                                         {"Content-Type": f"multipart/form-data; boundary={boundary}"})
    assert status == 429 and int(headers["Retry-After"]) >= 1 and 'id="error"' in body.decode()


def test_a_replay_that_cannot_be_shown_is_a_404_not_a_500(site):
    oldest = all_games(site, "pyb")[-1]
    path = site.root / "league.db.replays" / f"{oldest['group']}-{oldest['rotation']}.json"
    kept = path.read_bytes()
    try:
        record = json.loads(kept)
        record["final_digest"] = "0" * 64  # no longer what the actions lead to
        for text, code in ((json.dumps(record), 404), ("[1, 2, 3]", 404), ("{not json", 404)):
            path.write_text(text)
            status, page = site.html(f"/game/{oldest['id']}/replay")
            assert status == code and ("cannot be shown" in page or "No replay" in page), page[-500:]
            assert site.html(f"/game/{oldest['id']}")[0] == 200
            assert site.html("/bot/pyb")[0] == 200
    finally:
        path.write_bytes(kept)
    assert site.html(f"/game/{oldest['id']}/replay")[0] == 200

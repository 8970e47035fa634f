"""The HTML replay viewer, checked in headless Chromium, and the terminal replay's colours."""

from __future__ import annotations

import fcntl
import json
import os
import random
import re
import select
import shutil
import subprocess
import tempfile
import time

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.replay.html import render_html, viewer_data
from arena.plugins import policy
from engine import Game, RuleSpec, make_replay

runner = CliRunner()
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars"]


def play_replay(seed=5, variants=("revised",), bots=("greedy", "greedy")) -> dict:
    game = Game.new(RuleSpec.make(list(variants)), len(bots), seed)
    pols = [policy(b) for b in bots]
    rng = random.Random(seed)
    while not game.is_over:
        game.apply(pols[game.to_move()].choose(game, rng))
    return make_replay(game, None, {"bots": list(bots)})


@pytest.fixture(scope="module")
def record():
    rec = play_replay()
    # What the referee records for bot processes: a time per action, and faults with the move they hit.
    rec["move_times"] = [{"wall_ms": 1.5 + i % 7, "cpu_ms": 1.0} for i in range(len(rec["actions"]))]
    rec["faults"] = [[], [{"verdict": "timeout", "detail": "no reply within 1000 ms", "move": 12}]]
    return rec


@pytest.fixture(scope="module")
def chromium():
    """The Chromium binary; installed with apt-get (Debian's package) when missing."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        subprocess.run("apt-get update && apt-get install -y chromium", shell=True, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=900)
        exe = shutil.which("chromium") or shutil.which("chromium-browser")
    assert exe, "chromium could not be installed"
    return exe


def browse(chromium: str, url: str, *extra: str) -> str:
    with tempfile.TemporaryDirectory(prefix="arena-chromium-") as profile:
        proc = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=5000",
                               *extra, url], capture_output=True, text=True, timeout=120)
    return proc.stdout


class DevTools:
    """Chromium driven through the DevTools protocol over ``--remote-debugging-pipe`` (fds 3 and 4)."""

    def __init__(self, exe: str, profile: str):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()

        def child():  # move the pipe ends to fds 3 (commands in) and 4 (replies out)
            a = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--remote-debugging-pipe",
                                      "about:blank"], preexec_fn=child, close_fds=False,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buf = b""
        self.n = 0
        self.session = None

    def call(self, method: str, params: dict | None = None, browser: bool = False, timeout: float = 30):
        self.n += 1
        msg = {"id": self.n, "method": method, "params": params or {}}
        if self.session and not browser:
            msg["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(msg).encode() + b"\0")
        end = time.monotonic() + timeout
        while True:
            while b"\0" in self.buf:
                raw, self.buf = self.buf.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self.n:
                    assert "error" not in reply, reply["error"]
                    return reply["result"]
            ready, _, _ = select.select([self.from_chrome], [], [], max(0.0, end - time.monotonic()))
            assert ready, f"no answer from chromium to {method}"
            chunk = os.read(self.from_chrome, 1 << 16)
            assert chunk, "chromium closed the pipe"
            self.buf += chunk

    def open(self, url: str) -> None:
        target = self.call("Target.createTarget", {"url": url}, browser=True)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 browser=True)["sessionId"]
        for _ in range(100):
            if self.js("!!document.getElementById('step-label') && document.getElementById('step-label').textContent"):
                return
            time.sleep(0.05)
        raise AssertionError("the viewer did not start")

    def js(self, expression: str):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def key(self, key: str, code: int) -> None:
        for kind in ("rawKeyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", {"type": kind, "key": key, "code": key,
                                                 "windowsVirtualKeyCode": code})

    def close(self) -> None:
        try:
            self.call("Browser.close", browser=True, timeout=5)
        except AssertionError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        os.close(self.to_chrome)
        os.close(self.from_chrome)


def text_of(dom: str, elem_id: str) -> str:
    m = re.search(rf'id="{elem_id}"[^>]*>(.*?)</', dom, re.S)
    assert m, f"no element #{elem_id} in the page"
    return m.group(1)


def scores_shown(dom: str) -> list[str]:
    return re.findall(r'class="score">score (-?\d+)<', dom)


@pytest.fixture(scope="module")
def page(tmp_path_factory, record):
    path = tmp_path_factory.mktemp("viewer") / "game.json"
    path.write_text(json.dumps(record))
    out = path.with_suffix(".html")
    result = runner.invoke(app, ["replay", str(path), "--html", str(out)])
    assert result.exit_code == 0, result.output
    assert "viewer written" in result.output
    return out


def test_snapshots_follow_the_game(record):
    data = viewer_data(record)
    assert len(data["steps"]) == len(record["actions"]) + 1
    last = data["steps"][-1]
    assert [s["score"] for s in last["seats"]] == record["result"]["scores"]
    assert data["steps"][0]["round"] == 1 and last["phase"] == "over"
    assert data["actions"][12]["faults"][0]["verdict"] == "timeout"
    assert data["actions"][0]["ms"] == 1.5
    assert set(data["cards"]) >= {u["puzzle"] for s in data["steps"] for p in s["seats"] for u in p["unfinished"]}


def test_page_is_self_contained(record):
    page = render_html(record)
    assert "<script src" not in page and "<link" not in page and "@import" not in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "url(" not in page


def test_chromium_shows_the_table_at_each_step(chromium, page, record, tmp_path):
    data = viewer_data(record)
    last = len(data["steps"]) - 1
    browser = DevTools(chromium, str(tmp_path / "profile"))
    try:
        browser.open(f"{page.as_uri()}#step=12")
        for step in (12, 0, 30, last):
            browser.js(f"location.hash = '#step={step}'")
            for _ in range(40):
                if browser.js("document.body.dataset.step") == str(step):
                    break
                time.sleep(0.05)
            dom = browser.js("document.documentElement.outerHTML")
            assert f'data-step="{step}"' in dom.split("<body", 1)[1][:40]
            assert text_of(dom, "step-label") == f"step {step} / {last}"
            expected = "the deal" if step == 0 else data["actions"][step - 1]["text"]
            assert text_of(dom, "action-text") == expected
            snap = data["steps"][step]
            assert scores_shown(dom) == [str(s["score"]) for s in snap["seats"]]
            for colour in ("white", "black"):
                for card in snap["rows"][colour]:
                    if card:
                        assert f'data-card="{card}"' in dom
            pieces_on_puzzles = sum(len(p["cells"]) for s in snap["seats"] for u in s["unfinished"] for p in u["pieces"])
            assert dom.count('class="cell piece"') == pieces_on_puzzles
            assert len(re.findall(r'class="player[ "]', dom)) == len(snap["seats"])
    finally:
        browser.close()


def test_stepping_with_buttons_keys_slider_and_the_action_list(chromium, page, record, tmp_path):
    data = viewer_data(record)
    last = len(data["steps"]) - 1
    browser = DevTools(chromium, str(tmp_path / "profile"))
    try:
        browser.open(page.as_uri())
        shown = lambda: int(browser.js("document.body.dataset.step"))  # noqa: E731
        label = lambda: browser.js("document.getElementById('step-label').textContent")  # noqa: E731
        assert shown() == 0 and label() == f"step 0 / {last}"
        for _ in range(3):
            browser.js("document.getElementById('next').click()")
        assert shown() == 3 and browser.js("location.hash") == "#step=3"
        assert browser.js("document.getElementById('action-text').textContent") == data["actions"][2]["text"]
        browser.js("document.getElementById('prev').click()")
        assert shown() == 2
        browser.key("ArrowRight", 39)
        browser.key("ArrowRight", 39)
        assert shown() == 4
        browser.key("ArrowLeft", 37)
        assert shown() == 3
        browser.key("End", 35)
        assert shown() == last and label() == f"step {last} / {last}"
        browser.js("document.getElementById('next').click()")  # past the end: stays
        assert shown() == last
        browser.js("document.getElementById('first').click()")
        assert shown() == 0
        browser.js("var s = document.getElementById('slider'); s.value = 20; s.dispatchEvent(new Event('input'))")
        assert shown() == 20
        scores = browser.js("Array.from(document.querySelectorAll('.player .score')).map(e => e.textContent)")
        assert scores == [f"score {s['score']}" for s in data["steps"][20]["seats"]]
        browser.js("document.getElementById('slider').focus()")
        browser.key("ArrowRight", 39)  # the focused slider moves one step, not two
        assert shown() == 21
        browser.js("document.querySelector('#log li[data-step=\"10\"]').click()")
        assert shown() == 10 and browser.js("document.querySelector('#log li.current').dataset.step") == "10"
        browser.js("location.hash = '#step=7'")
        time.sleep(0.2)
        assert shown() == 7
    finally:
        browser.close()


def test_chromium_shows_times_and_faults(chromium, page):
    dom = browse(chromium, f"{page.as_uri()}#step=13", "--dump-dom")
    assert "fault of seat 1 (greedy): timeout" in dom
    assert re.search(r'id="action-time"[^>]*>\d+\.\d ms<', dom)
    row = re.search(r'<tr data-seat="1">(.*?)</tr>', dom).group(1)
    assert '<td class="fault">1</td>' in row


def test_chromium_clamps_a_step_past_the_end(chromium, page, record):
    dom = browse(chromium, f"{page.as_uri()}#step=99999", "--dump-dom")
    last = len(record["actions"])
    assert text_of(dom, "step-label") == f"step {last} / {last}"
    assert "game over" in text_of(dom, "status")


def test_chromium_screenshot_is_drawn(chromium, page, tmp_path):
    shot = tmp_path / "shot.png"
    browse(chromium, f"{page.as_uri()}#step=30", f"--screenshot={shot}", "--window-size=1400,1000")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


def test_what_a_variant_adds_is_shown_too(chromium, tmp_path):
    """Solo (R12): the grid, the locks and the automaton's pile and score come from the observation."""
    record = play_replay(seed=3, variants=("solo",), bots=("greedy",))
    data = viewer_data(record)
    solo = data["steps"][-1]["extra"]["solo"]
    assert set(solo["automaton_pile"]) <= set(data["cards"])
    assert {c for c in solo["grid"] if c} <= set(data["cards"])
    path = tmp_path / "solo.html"
    path.write_text(render_html(record))
    dom = browse(chromium, f"{path.as_uri()}#step={len(record['actions'])}", "--dump-dom")
    assert f"automaton: score {solo['automaton_score']}" in dom
    assert 'data-row="solo-grid"' in dom and 'data-row="white"' not in dom
    assert scores_shown(dom) == [str(record["result"]["scores"][0])]


def test_html_of_a_bad_replay_is_a_sentence(tmp_path, record):
    bad = dict(record, actions=record["actions"][:5] + [{"seat": 0, "action": {"type": "take_piece"}}] * 40)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    result = runner.invoke(app, ["replay", str(path), "--html", str(tmp_path / "bad.html")])
    assert result.exit_code == 3
    assert "does not reproduce" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "bad.html").exists()


def test_terminal_replay_colours_pieces_when_asked(tmp_path, record, monkeypatch):
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    monkeypatch.delenv("NO_COLOR", raising=False)
    coloured = runner.invoke(app, ["replay", str(path), "--color"])
    assert coloured.exit_code == 0 and "\x1b[" in coloured.output
    plain = runner.invoke(app, ["replay", str(path), "--no-color"])
    assert plain.exit_code == 0 and "\x1b[" not in plain.output
    assert "reproduces" in plain.output


@pytest.mark.parametrize("env, tty, expected", [
    ({}, True, True), ({}, False, False), ({"NO_COLOR": "1"}, True, False), ({"FORCE_COLOR": "1"}, False, True),
    ({"TERM": "dumb"}, True, False), ({"NO_COLOR": "", "FORCE_COLOR": "1"}, True, False),
])
def test_use_color_follows_the_terminal_and_the_environment(monkeypatch, env, tty, expected):
    from arena.replay.render import use_color

    for key in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)

    class Stream:
        def isatty(self):
            return tty

    assert use_color(Stream()) is expected


def test_truecolor_terminals_get_the_viewer_palette(monkeypatch):
    from arena.replay.render import PIECE_COLOURS, paint

    monkeypatch.setenv("COLORTERM", "truecolor")
    r, g, b = (int(PIECE_COLOURS["L3"][i:i + 2], 16) for i in (1, 3, 5))
    assert paint("L3", "L") == f"\x1b[1;38;2;{r};{g};{b}mL\x1b[0m"
    monkeypatch.delenv("COLORTERM")
    assert paint("L3", "L") == "\x1b[34mL\x1b[0m"


def test_bots_are_named_with_the_name_and_version_they_sent_in_ready(record):
    """The referee keeps each seat's `ready` in the replay; the viewer labels the bots with it."""
    rec = dict(record, bots=["greedy", "rawbot.py"],
               ready=[{"name": "greedy", "version": "1.0"}, {"name": "Lucky", "version": "2.5"}])
    data = viewer_data(rec)
    assert data["bots"] == ["greedy 1.0", "rawbot.py (Lucky 2.5)"]
    assert data["title"].startswith("greedy 1.0 vs rawbot.py (Lucky 2.5)")
    # a replay without `ready` (in-process games) keeps the seat names
    assert viewer_data(record)["bots"] == ["greedy", "greedy"]

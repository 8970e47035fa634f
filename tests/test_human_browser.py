"""A person at the table in Chromium: a whole game against greedy played by clicking (and
the first moves by the keyboard), on a phone-sized window, with the pieces and puzzles
labelled for a screen reader."""

from __future__ import annotations

import json
import time
import urllib.request

from test_human_table import Table
from test_replay_html import DevTools, chromium  # noqa: F401  (the fixture: Chromium, installed if missing)

from engine.replay import load_replay

FIRST_BUTTON = """(() => {
  if (!document.getElementById('end').hidden) return 'over';
  const b = document.querySelector('#moves button');
  if (!b) return 'wait';
  b.click();
  return 'clicked';
})()"""


class Page(DevTools):
    """The DevTools driver, opening the table's page and typing keys as a keyboard does."""

    def open_table(self, url: str) -> None:
        target = self.call("Target.createTarget", {"url": "about:blank"}, browser=True)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 browser=True)["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 2,
                                                        "mobile": True})
        self.call("Page.enable")
        self.call("Page.navigate", {"url": url})

    def press(self, key: str, code: int) -> None:
        self.call("Input.dispatchKeyEvent", {"type": "keyDown", "key": key, "code": key, "windowsVirtualKeyCode": code,
                                             **({"text": "\r"} if key == "Enter" else {})})
        self.call("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "code": key, "windowsVirtualKeyCode": code})

    def wait_for(self, expression: str, limit_s: float = 120):
        end = time.monotonic() + limit_s
        while time.monotonic() < end:
            value = self.js(expression)
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"never true: {expression}")


def test_a_whole_game_against_greedy_by_clicking_and_keys_on_a_phone(chromium, tmp_path):  # noqa: F811
    table = Table(tmp_path, "greedy", "--seed", "11")
    browser = Page(chromium, str(tmp_path / "profile"))
    try:
        browser.open_table(f"{table.url}/?token={table.token}")
        browser.wait_for("document.querySelectorAll('#moves button.legal').length > 0")
        # labels a screen reader reads: every move button, every puzzle and piece drawn
        labels = browser.js("""[...document.querySelectorAll('#moves button, svg.puzzle, svg.piece')]
                               .map(e => e.getAttribute('aria-label') || '')""")
        assert labels and all(labels), labels
        assert any(x.startswith("puzzle ") for x in labels + browser.js(
            "[...document.querySelectorAll('svg.puzzle')].map(e => e.getAttribute('aria-label'))"))
        # nothing wider than the phone
        assert browser.js("document.documentElement.scrollWidth") <= 392
        # the keyboard: tab to the first move and press enter, three times
        for _ in range(3):
            turn = browser.wait_for("document.querySelector('#moves button.legal') && "
                                    "document.querySelector('#moves button.legal').getAttribute('aria-label')")
            for _ in range(60):
                if browser.js("document.activeElement && document.activeElement.classList.contains('legal')"):
                    break
                browser.press("Tab", 9)
            else:
                raise AssertionError("tab never reached a move")
            before = browser.js("document.querySelector('#moves').textContent")
            browser.press("Enter", 13)
            browser.wait_for(f"document.querySelector('#moves').textContent !== {json.dumps(before)}")
            assert turn
        # then click the first button offered until the game is over
        end = time.monotonic() + 600
        clicks = 0
        while (state := browser.js(FIRST_BUTTON)) != "over":
            assert time.monotonic() < end, "the game did not end"
            clicks += state == "clicked"
            time.sleep(0.15 if state == "clicked" else 0.1)
        assert clicks > 10
        rows = browser.js("[...document.querySelectorAll('#scores tr')].map(r => r.textContent)")
        assert len(rows) == 3 and any("You" in r for r in rows)
        link = browser.js("document.getElementById('replay-link').getAttribute('href')")
        assert link.startswith("/replay?token=")
        with urllib.request.urlopen(table.url + link, timeout=30) as r:
            assert "<svg" in r.read().decode() or r.status == 200
        assert browser.js("document.getElementById('log').children.length") > 10
        browser.js("document.getElementById('leave').click()")
        out, err = table.proc.communicate(timeout=60)
        assert table.proc.returncode == 0 and "Traceback" not in err, err
    finally:
        browser.close()
        table.kill()
    replay = load_replay(table.replay)
    assert replay["seats"][0] == "greedy" and replay["seats"][1] not in ("greedy", "person", "")
    assert replay["seats"][1] in out

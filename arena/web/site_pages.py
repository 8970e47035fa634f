"""The pages of a bot, its match history, an author, the live games and the API list.

Server-rendered like :mod:`.pages` (no script); every value from the league file, a
package or a bot goes through :func:`.pages.esc` (text and attributes) or
:func:`urllib.parse.quote` (in a link).
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

from .chart import line_chart
from .history import PER_PAGE, RESULTS
from .pages import elo_cells, esc, games_table, layout, link_author, link_bot, status_tag, when

PENDING = ("queued", "building", "checking")


def _history_link(name: str, label: str, **params) -> str:
    query = urlencode({k: v for k, v in params.items() if v not in (None, "", 1)})
    return f'<a href="{esc(f"/bot/{quote(name, safe=str())}/games" + ("?" + query if query else ""))}">{esc(label)}</a>'


def head_to_head_table(name: str, rows: list[dict]) -> str:
    """Games against each opponent: ahead, level, behind, mean scores, with a link to those games."""
    if not rows:
        return '<p class="muted">No games yet.</p>'
    body = "".join(
        f"<tr><td>{link_bot(r['opponent'])}</td><td class=\"num\">{_history_link(name, str(r['games']), opponent=r['opponent'])}</td>"
        f"<td class=\"num\">{r['ahead']}</td><td class=\"num\">{r['level']}</td><td class=\"num\">{r['behind']}</td>"
        f"<td class=\"num\">{r['share'] * 100:.0f}%</td><td class=\"num\">{r['score_for']:.1f} : {r['score_against']:.1f}</td></tr>"
        for r in rows)
    return ("<table id=\"head-to-head\"><tr><th>opponent</th><th>games</th><th>ahead</th><th>level</th><th>behind</th>"
            "<th>share</th><th>mean score</th></tr>" + body + "</table>")


def withdraw_form(name: str, versions: list[dict]) -> str:
    """A form for the bot's author: take one active version out of the ladder (token needed)."""
    active = [v["entry"] for v in versions if v["status"] == "active" and v.get("submission")]
    if not active:
        return ""
    options = "".join(f'<option value="{esc(e)}">{esc(e)}</option>' for e in active)
    return (f"<h2>Withdraw a version</h2><form id=\"withdraw\" method=\"post\" action=\"/bot/{quote(name, safe='')}/withdraw\">"
            f"<p>The author may take a version out of the ladder: it plays no more games; its games and rating stay "
            f"in the records.</p><p><label>Version <select name=\"entry\">{options}</select></label> "
            "<label>Token <input type=\"password\" name=\"token\" size=\"40\" required></label> "
            "<button type=\"submit\">Withdraw</button></p></form>")


def bot_page(data: dict, h2h: list[dict], message: str | None = None, ok: bool = True,
             playing: list[dict] = ()) -> str:
    """``/bot/NAME``: description, versions, rating over time, head-to-head, recent games, faults, submissions."""
    name = data["name"]
    rows = []
    for v in data["versions"]:
        elo, ci = elo_cells(v["row"])
        row = v["row"] or {}
        sub = f'<a href="/submission/{v["submission"]}">submission</a>' if v["submission"] else "added by hand"
        rows.append(f"<tr><td>{esc(v['entry'])}</td><td>{esc(v['status'])}</td><td class=\"num\">{elo}</td>"
                    f"<td class=\"num\">{ci}</td><td class=\"num\">{row.get('games', 0)}</td>"
                    f"<td class=\"num\">{row.get('faults', 0)}</td><td>{sub}</td></tr>")
    versions = ("<table id=\"versions\"><tr><th>version</th><th>status</th><th>rating</th><th>95% interval</th><th>games</th>"
                "<th>faults</th><th></th></tr>" + "".join(rows) + "</table>") if rows else \
        '<p class="muted">No version has entered the ladder yet.</p>'
    faults = "".join(f'<tr><td><a href="/game/{f["game"]}">#{f["game"]}</a></td><td>{esc(f["entry"])}</td>'
                     f'<td>{esc(f["verdict"])}</td><td class="num">{esc(f["move"])}</td><td>{esc(f["detail"])}</td></tr>'
                     for f in data["faults"])
    faults = (f"<table><tr><th>game</th><th>version</th><th>verdict</th><th>move</th><th>detail</th></tr>{faults}</table>"
              if faults else '<p class="muted">No faults.</p>')
    subs = "".join(f'<tr><td><a href="/submission/{s["id"]}">{esc(s["entry"])}</a></td><td>{status_tag(s["status"], s.get("withdrawn"))}</td>'
                   f'<td>{esc(s["verdict"]) or "-"}</td><td class="muted">{when(s["submitted"])}</td></tr>'
                   for s in data["submissions"])
    who = (f"Author: {link_author(data['author'])}" if data.get("author")
           else "A house bot of this league" if data.get("house") else "")
    head = (f'<p id="author">{who}</p>' if who else "") + (
        f'<p id="description">{esc(data["description"])}</p>' if data.get("description") else "")
    note = f'<p class="{"ok" if ok else "bad"}" id="message">{esc(message)}</p>' if message else ""
    if playing:
        note += (f'<p id="playing">Playing now: <a href="/live">{len(playing)} game{"" if len(playing) == 1 else "s"}'
                 "</a> in flight.</p>")
    pending = any(s["status"] in PENDING for s in data["submissions"])
    body = (f"{note}{head}<h2>Versions</h2>{versions}<h2>Rating over time</h2>{line_chart(data['history'])}"
            f"<h2>Head to head</h2>{head_to_head_table(name, h2h)}"
            f"<h2>Recent games</h2>{games_table(data['games'])}"
            f"<p>{_history_link(name, 'Every game, with filters')}</p><h2>Faults</h2>{faults}"
            + (f"<h2>Submissions</h2><table><tr><th>version</th><th>status</th><th>verdict</th><th>submitted</th></tr>"
               f"{subs}</table>" if subs else "")
            + withdraw_form(name, data["versions"]))
    return layout(name, body, refresh_s=10 if pending else None)


def history_page(h: dict) -> str:
    """``/bot/NAME/games``: every game of the bot, newest first, by pages, filtered by opponent and result."""
    name = h["name"]
    choices = h["opponents"] + ([h["opponent"]] if h["opponent"] and h["opponent"] not in h["opponents"] else [])
    opts = "".join(f'<option value="{esc(o)}"{" selected" if o == h["opponent"] else ""}>{esc(o)}</option>'
                   for o in choices)
    res = "".join(f'<option value="{r}"{" selected" if r == h["result"] else ""}>{r}</option>' for r in RESULTS)
    form = (f"<form id=\"filters\" method=\"get\" action=\"/bot/{quote(name, safe='')}/games\"><p>"
            f"<label>Opponent <select name=\"opponent\"><option value=\"\">any</option>{opts}</select></label> "
            f"<label>Result <select name=\"result\"><option value=\"\">any</option>{res}</select></label> "
            + (f"<input type=\"hidden\" name=\"per_page\" value=\"{h['per_page']}\">" if h["per_page"] != PER_PAGE else "")
            + "<button type=\"submit\">Show</button></p></form>")
    rows = "".join(
        f'<tr><td><a href="/game/{g["id"]}">#{g["id"]}</a></td><td>{esc(g["me"]["bot"])}</td>'
        f'<td>{", ".join(link_bot(o.split("@")[0], o) for o in g["opponents"])}</td>'
        f'<td class="{ {"win": "ok", "loss": "bad"}.get(g["result"], "pending") }">{g["result"]}</td>'
        f'<td class="num">{" : ".join(str(x["score"]) for x in g["seats"])}</td>'
        f'<td class="num">{esc(g["rounds"])}</td><td class="muted">{when(g.get("played"))}</td>'
        f'<td><a href="/game/{g["id"]}/replay.json" download>JSON</a></td></tr>' for g in h["games"])
    table = ("<table id=\"games\"><tr><th>game</th><th>version</th><th>opponents</th><th>result</th><th>scores by seat</th>"
             "<th>rounds</th><th>played</th><th>replay</th></tr>" + rows + "</table>") if rows else \
        '<p class="muted">No game matches.</p>'
    nav = []
    keep = {"opponent": h["opponent"], "result": h["result"],
            "per_page": h["per_page"] if h["per_page"] != PER_PAGE else None}
    if h["page"] > 1:
        nav.append(_history_link(name, "newer", **keep, page=h["page"] - 1))
    if h["page"] < h["pages"]:
        nav.append(_history_link(name, "older", **keep, page=h["page"] + 1))
    body = (f"<p>{link_bot(name, 'Back to ' + name)}. {h['total']} game{'' if h['total'] == 1 else 's'}; "
            f"page {h['page']} of {h['pages']}.</p>{form}{table}<p id=\"pages\">{' · '.join(nav)}</p>")
    return layout(f"{name}: games", body)


def author_page(a: dict) -> str:
    """``/author/NAME``: the author's bots with every version's rating, and their submissions."""
    bots = []
    for b in a["bots"]:
        for v in b["versions"]:
            elo, ci = elo_cells(v)
            bots.append(f"<tr><td>{link_bot(b['name'])}</td><td>{esc(v['version'])}</td><td>{esc(v['status'])}</td>"
                        f"<td class=\"num\">{elo}</td><td class=\"num\">{ci}</td><td class=\"num\">{v['games']}</td></tr>")
    bots_html = ("<table id=\"bots\"><tr><th>bot</th><th>version</th><th>status</th><th>rating</th><th>95% interval</th>"
                 "<th>games</th></tr>" + "".join(bots) + "</table>") if bots else '<p class="muted">No bot in the ladder yet.</p>'
    subs = "".join(f'<tr><td><a href="/submission/{s["id"]}">{esc(s["entry"])}</a></td><td>{status_tag(s["status"], s.get("withdrawn"))}</td>'
                   f'<td>{esc(s["verdict"]) or "-"}</td><td class="muted">{when(s["submitted"])}</td></tr>'
                   for s in a["submissions"])
    subs_html = (f"<table id=\"submissions\"><tr><th>version</th><th>status</th><th>verdict</th><th>submitted</th></tr>"
                 f"{subs}</table>") if subs else '<p class="muted">No submissions yet.</p>'
    return layout(f"Author {a['author']}", f"<h2>Bots</h2>{bots_html}<h2>Submissions</h2>{subs_html}")


def live_page(games: list[dict], player_status: str) -> str:
    """``/live``: the games the background player has in flight (the page reloads itself)."""
    rows = "".join(
        f"<tr><td class=\"num\"><a href=\"/live/{int(g['group'])}/{int(g['rotation'])}\">"
        f"{esc(g.get('group'))}-{esc(g.get('rotation'))}</a></td>"
        f"<td>{' vs '.join(link_bot(str(b).split('@')[0], str(b)) for b in g.get('bots') or [])}</td>"
        f"<td>{esc(g.get('state') or 'in flight')}</td><td class=\"muted\">{when(g.get('started'))}</td></tr>"
        for g in games)
    table = ("<table id=\"live\"><tr><th>game (follow it)</th><th>seats</th><th>state</th><th>since</th></tr>" + rows + "</table>"
             if rows else '<p class="muted">No game in progress right now.</p>')
    return layout("Live games", f"<p>Background play: {esc(player_status)}. A game appears in the "
                  f"<a href=\"/\">leaderboard</a> and gets its page and replay when it ends.</p>{table}", refresh_s=5)


def api_page(endpoints: list[dict]) -> str:
    """``/api``: every page and JSON endpoint of the site."""
    def table(items: list[dict]) -> str:
        return ("<table><tr><th>method</th><th>path</th><th>what</th></tr>"
                + "".join(f"<tr><td>{esc(', '.join(e['methods']))}</td><td><code>{esc(e['path'])}</code></td>"
                          f"<td>{esc(e['summary'])}</td></tr>" for e in items) + "</table>")

    json_ = [e for e in endpoints if e["path"].startswith("/api/")]
    html_ = [e for e in endpoints if not e["path"].startswith("/api/")]
    body = ("<p>The JSON API answers with <code>application/json</code>; an error is <code>{\"error\": "
            "\"a sentence\"}</code> with a 4xx status. Submitting needs a token from the league's operator, sent as "
            "<code>Authorization: Bearer TOKEN</code>. Ids are whole numbers; match history takes "
            "<code>?opponent=BOT&amp;result=win|draw|loss&amp;page=N&amp;per_page=N</code> (at most 200 a page).</p>"
            f"<h2>JSON endpoints</h2><div id=\"api-json\">{table(json_)}</div>"
            f"<h2>Pages</h2><div id=\"api-pages\">{table(html_)}</div>")
    return layout("API", body)


#: The bot authors' documents the site serves itself, by their page name.
DOCS = {"protocol": ("protocol.md", "The bot protocol"), "writing-a-bot": ("writing-a-bot.md", "Writing a bot")}


def doc_page(title: str, markdown: str) -> str:
    """``/docs/NAME``: one of the project's documents for bot authors, as text (the page runs
    no script, so the Markdown is shown as written, links to the other documents made links)."""
    import re

    text = esc(markdown)
    text = re.sub(r"\(([a-z-]+)\.md(#[\w-]*)?\)",
                  lambda m: f'(<a href="/docs/{m[1]}{m[2] or ""}">{m[1]}.md{m[2] or ""}</a>)'
                  if m[1] in DOCS else m[0], text)
    return layout(title, f'<pre class="doc">{text}</pre>')


#: The script of a live game's page: it asks ``/api/games/live/G/R`` every second, moves the
#: viewer to the newest move, and opens the game's page once the game is stored. It writes
#: nothing but a number into the page (``textContent``), and follows only a path the server gave.
LIVE_SCRIPT = """
(function () {
  var state = document.getElementById("live-state"), frame = document.getElementById("live-frame");
  var moves = document.getElementById("live-moves"), shown = Number(state.getAttribute("data-moves"));
  function tick() {
    fetch(state.getAttribute("data-poll"), {cache: "no-store", credentials: "omit"}).then(function (r) {
      return r.json();
    }).then(function (d) {
      if (typeof d.game_url === "string" && /^\\/game\\/\\d+$/.test(d.game_url)) { location.replace(d.game_url); return; }
      if (typeof d.moves === "number" && d.moves !== shown) {
        shown = d.moves;
        moves.textContent = String(shown);
        if (frame) { frame.src = frame.getAttribute("data-base") + "?n=" + shown + "#step=" + shown; }
      }
      setTimeout(tick, 1000);
    }).catch(function () { setTimeout(tick, 3000); });
  }
  setTimeout(tick, 1000);
})();
"""


def live_game_page(group: int, rotation: int, state: dict, followed: bool) -> str:
    """``/live/G/R``: a game in flight, its viewer moved to each new move as it is played
    (:data:`LIVE_SCRIPT`); the game's own page once it is stored."""
    g, r, n = int(group), int(rotation), int(state.get("moves") or 0)
    bots = " vs ".join(link_bot(str(b).split("@")[0], str(b)) for b in state.get("bots") or [])
    viewer = (f'<iframe id="live-frame" data-base="/live/{g}/{r}/replay" src="/live/{g}/{r}/replay?n={n}#step={n}" '
              f'title="game {g}-{r} so far"></iframe>' if followed else
              '<p class="muted" id="live-blind">This game cannot be followed move by move (its bots play inside a '
              "worker, or on a cluster): its replay opens here when it ends.</p>")
    body = (f'<p id="live-state" data-poll="/api/games/live/{g}/{r}" data-moves="{n}">{bots}: '
            f'<b id="live-moves">{n}</b> moves so far'
            + (f' (shown {int(state["delay"])} moves behind the play)' if state.get("delay") else "")
            + f'; started {when(state.get("started"))}. This page follows the game '
            "and shows its replay when it ends.</p>" + viewer + f"<script>{LIVE_SCRIPT}</script>")
    return layout(f"Game {g}-{r}, live", body)

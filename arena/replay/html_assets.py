"""The inline CSS and JavaScript of the HTML replay viewer (:mod:`arena.replay.html`).

Kept as Python strings so the page is assembled without package data files, and written
without any external resource: the page works offline and from ``file://``.
"""

CSS = """
:root { --bg: #f4f1ea; --ink: #222; --muted: #777; --card: #fffdf7; --black-card: #3b3b3b; --hole: #d7d0c2; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.35 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--ink); }
header { padding: 10px 16px 4px; }
header h1 { font-size: 18px; margin: 0 0 2px; }
#result { color: var(--muted); }
#controls { display: flex; gap: 6px; align-items: center; padding: 6px 16px; position: sticky; top: 0;
  background: var(--bg); border-bottom: 1px solid #ddd5c5; z-index: 2; }
#controls button { font-size: 15px; min-width: 34px; padding: 3px 6px; cursor: pointer; }
#slider { flex: 1; }
#step-label { min-width: 120px; text-align: right; font-variant-numeric: tabular-nums; }
#current { padding: 6px 16px; font-weight: 600; }
#action-time { font-weight: normal; color: var(--muted); margin-left: 10px; }
.fault { color: #b00020; font-weight: 600; }
main { display: flex; gap: 16px; padding: 0 16px 16px; align-items: flex-start; }
#table { flex: 1; min-width: 0; }
aside { width: 340px; flex: none; }
#status { margin: 4px 0 8px; color: #444; }
.row { display: flex; gap: 8px; align-items: flex-start; margin-bottom: 8px; flex-wrap: wrap; }
.row-label { width: 86px; font-weight: 600; padding-top: 4px; }
.card { background: var(--card); border: 1px solid #c9bfa9; border-radius: 6px; padding: 4px; width: 104px; }
.card.black { background: var(--black-card); color: #eee; border-color: #222; }
.card.empty { opacity: .35; height: 124px; border-style: dashed; }
.card-head { font-size: 11px; display: flex; justify-content: space-between; margin-bottom: 3px; }
.grid { display: grid; grid-template-columns: repeat(5, 18px); grid-template-rows: repeat(5, 18px); gap: 1px; }
.cell { width: 18px; height: 18px; }
.cell.hole { background: var(--hole); border-radius: 2px; }
.card.black .cell.hole { background: #1c1c1c; }
.cell.piece { border: 0 solid rgba(0,0,0,.55); }
.players { display: flex; flex-wrap: wrap; gap: 10px; }
.player { background: #fff; border: 2px solid #ddd5c5; border-radius: 8px; padding: 8px; min-width: 300px; flex: 1; }
.player.to-move { border-color: #e0a030; box-shadow: 0 0 0 2px #f3d8a0; }
.player.forfeited { opacity: .6; }
.player h3 { margin: 0 0 4px; font-size: 15px; display: flex; justify-content: space-between; gap: 8px; }
.score { font-variant-numeric: tabular-nums; }
.supply, .completed { display: flex; flex-wrap: wrap; gap: 6px; margin: 4px 0; align-items: center; }
.chip { display: inline-flex; align-items: center; gap: 3px; background: #f6f3ec; border-radius: 4px; padding: 2px 4px; font-size: 12px; }
.mini { display: grid; gap: 1px; }
.mini span { width: 6px; height: 6px; }
.puzzles { display: flex; gap: 6px; flex-wrap: wrap; }
.done { font-size: 12px; padding: 1px 5px; border-radius: 3px; background: #eee6d3; }
.done.black { background: #444; color: #eee; }
#bots-summary { border-collapse: collapse; width: 100%; font-size: 12px; margin-bottom: 10px; }
#bots-summary td, #bots-summary th { border-bottom: 1px solid #e2dccd; padding: 2px 4px; text-align: right; }
#bots-summary td:first-child, #bots-summary th:first-child { text-align: left; }
#log { max-height: 60vh; overflow: auto; margin: 0; padding-left: 42px; font-size: 12px; background: #fff; border: 1px solid #ddd5c5; }
#log li { cursor: pointer; padding: 1px 4px; }
#log li.current { background: #f3d8a0; }
#log li.seat1 { color: #2a4f8f; }
#log li.seat2 { color: #2f7a36; }
#log li.seat3 { color: #8a3f8a; }
aside h2 { font-size: 14px; margin: 8px 0 4px; }
.reserve { font-size: 12px; color: #555; }
.solo-grid { display: grid; grid-template-columns: repeat(3, 104px); gap: 6px; }
.row.extra code { font-size: 12px; white-space: pre-wrap; }
"""

JS = r"""
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("replay-data").textContent);
  var LAST = D.steps.length - 1;
  var step = 0;

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (k === "text") e.textContent = attrs[k];
      else if (k === "cls") e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    (children || []).forEach(function (c) { if (c) e.appendChild(c); });
    return e;
  }

  function miniShape(name) {
    var s = D.shapes[name];
    if (!s) return el("span", {text: name});
    var rows = 1, cols = 1;
    s.cells.forEach(function (c) { rows = Math.max(rows, c[0] + 1); cols = Math.max(cols, c[1] + 1); });
    var g = el("span", {cls: "mini"});
    g.style.gridTemplateColumns = "repeat(" + cols + ", 6px)";
    g.style.gridTemplateRows = "repeat(" + rows + ", 6px)";
    s.cells.forEach(function (c) {
      var d = el("span");
      d.style.gridRow = c[0] + 1; d.style.gridColumn = c[1] + 1; d.style.background = s.colour;
      g.appendChild(d);
    });
    return g;
  }

  function card(id, pieces) {
    if (!id) return el("div", {cls: "card empty"});
    var c = D.cards[id] || {color: "white", points: "?", reward: "?", recess: []};
    var box = el("div", {cls: "card " + c.color, "data-card": id});
    box.appendChild(el("div", {cls: "card-head"}, [el("b", {text: id}),
      el("span", {text: c.points + "p \u2192 " + c.reward})]));
    var grid = el("div", {cls: "grid"});
    var owner = {}, shape = {};
    (pieces || []).forEach(function (p, i) {
      p.cells.forEach(function (rc) { owner[rc[0] * 5 + rc[1]] = i; shape[rc[0] * 5 + rc[1]] = p.piece; });
    });
    var hole = {};
    c.recess.forEach(function (rc) { hole[rc[0] * 5 + rc[1]] = true; });
    for (var i = 0; i < 25; i++) {
      var cell = el("div", {cls: "cell"});
      if (i in owner) {
        var r = Math.floor(i / 5), q = i % 5, me = owner[i];
        cell.className = "cell piece";
        cell.style.background = (D.shapes[shape[i]] || {}).colour || "#999";
        cell.title = shape[i];
        cell.setAttribute("data-piece", shape[i]);
        cell.style.borderTopWidth = (r === 0 || owner[i - 5] !== me) ? "2px" : "0";
        cell.style.borderBottomWidth = (r === 4 || owner[i + 5] !== me) ? "2px" : "0";
        cell.style.borderLeftWidth = (q === 0 || owner[i - 1] !== me) ? "2px" : "0";
        cell.style.borderRightWidth = (q === 4 || owner[i + 1] !== me) ? "2px" : "0";
      } else if (hole[i]) {
        cell.className = "cell hole";
      }
      grid.appendChild(cell);
    }
    box.appendChild(grid);
    return box;
  }

  function chipList(obj) {
    var names = Object.keys(obj || {}).filter(function (k) { return obj[k] > 0; });
    if (!names.length) return [el("span", {cls: "chip", text: "none"})];
    return names.map(function (n) {
      return el("span", {cls: "chip", "data-shape": n, title: n}, [miniShape(n), el("span", {text: n + "\u00d7" + obj[n]})]);
    });
  }

  var root = document.body;
  var header = el("header", null, [el("h1", {id: "title", text: D.title}), el("div", {id: "result"})]);
  var slider = el("input", {type: "range", id: "slider", min: "0", max: String(LAST), value: "0"});
  var controls = el("nav", {id: "controls"}, [
    el("button", {id: "first", title: "first (Home)", text: "|\u25c0"}),
    el("button", {id: "prev", title: "back (\u2190)", text: "\u25c0"}),
    slider,
    el("button", {id: "next", title: "forward (\u2192)", text: "\u25b6"}),
    el("button", {id: "last", title: "last (End)", text: "\u25b6|"}),
    el("span", {id: "step-label"})]);
  var current = el("div", {id: "current"}, [el("span", {id: "action-text"}), el("span", {id: "action-time"}),
    el("div", {id: "action-faults"})]);
  var table = el("section", {id: "table"}, [el("div", {id: "status"}), el("div", {id: "rows"}),
    el("div", {id: "players", cls: "players"}), el("div", {id: "reserve", cls: "reserve"})]);
  var log = el("ol", {id: "log", start: "1"});
  var aside = el("aside", null, [el("h2", {text: "Bots"}), el("table", {id: "bots-summary"}),
    el("h2", {text: "Actions"}), log]);
  root.appendChild(header); root.appendChild(controls); root.appendChild(current);
  root.appendChild(el("main", null, [table, aside]));

  var res = D.result;
  document.getElementById("result").textContent = !res ? "in play; " + D.actions.length + " actions so far" :
    "final scores " + res.scores.join(" : ") + ", ranking " +
    res.ranking.join(", ") + ", " + res.rounds + " rounds" + (res.adjudicated ? " (adjudicated)" : "") +
    "; " + (D.actions.length) + " actions";

  // Per-bot time and faults over the whole game.
  var sum = D.bots.map(function () { return {moves: 0, ms: 0, max: 0, timed: 0, faults: 0}; });
  D.actions.forEach(function (a) {
    var s = sum[a.seat];
    if (!s) return;
    s.moves++;
    if (a.ms !== null && a.ms !== undefined) { s.ms += a.ms; s.timed++; s.max = Math.max(s.max, a.ms); }
  });
  (D.faults || []).forEach(function (items, seat) { if (sum[seat]) sum[seat].faults = (items || []).length; });
  var bs = document.getElementById("bots-summary");
  bs.appendChild(el("tr", null, ["seat / bot", "moves", "total ms", "mean ms", "max ms", "faults"].map(function (h) {
    return el("th", {text: h}); })));
  sum.forEach(function (s, i) {
    var timed = s.timed > 0;
    bs.appendChild(el("tr", {"data-seat": String(i)}, [
      el("td", {text: i + " " + D.bots[i]}), el("td", {text: String(s.moves)}),
      el("td", {text: timed ? s.ms.toFixed(0) : "-"}), el("td", {text: timed ? (s.ms / s.timed).toFixed(1) : "-"}),
      el("td", {text: timed ? s.max.toFixed(1) : "-"}), el("td", {cls: s.faults ? "fault" : "", text: String(s.faults)})]));
  });
  if (!D.timed) aside.insertBefore(el("div", {cls: "reserve", text: "Times per move are not recorded in this replay (in-process game)."}), log.previousSibling);

  D.actions.forEach(function (a, i) {
    var li = el("li", {cls: "seat" + a.seat, "data-step": String(i + 1),
      text: a.text + (a.faults.length ? "  \u26a0 " + a.faults.map(function (f) { return f.verdict; }).join(", ") : "")});
    li.addEventListener("click", function () { go(i + 1); });
    log.appendChild(li);
  });

  function render() {
    var s = D.steps[step];
    root.setAttribute("data-step", String(step));
    slider.value = String(step);
    document.getElementById("step-label").textContent = "step " + step + " / " + LAST;
    var a = step > 0 ? D.actions[step - 1] : null;
    document.getElementById("action-text").textContent = a ? a.text : "the deal";
    document.getElementById("action-time").textContent = a && a.ms !== null && a.ms !== undefined ?
      a.ms.toFixed(1) + " ms" : (a && a.fallback ? "random move (fault policy)" : "");
    var fd = document.getElementById("action-faults");
    fd.textContent = "";
    (a ? a.faults : []).forEach(function (f) {
      fd.appendChild(el("div", {cls: "fault", text: "fault of seat " + f.seat + " (" + D.bots[f.seat] + "): " +
        f.verdict + (f.detail ? " \u2014 " + f.detail : "")}));
    });
    var status = "round " + s.round + ", " + (s.phase === "over" ? "game over" :
      s.phase + " phase, seat " + s.to_move + " to move" + (s.phase === "action" ? " (" + s.actions_left + " actions left)" : "")) +
      (s.end_triggered ? ", end triggered" + (s.final_round ? " (last round " + s.final_round + ")" : "") : "");
    document.getElementById("status").textContent = status;
    var rows = document.getElementById("rows");
    rows.textContent = "";
    ["white", "black"].forEach(function (colour) {
      if (!s.rows || !(colour in s.rows) || !s.rows[colour].length) return;
      var r = el("div", {cls: "row", "data-row": colour},
        [el("div", {cls: "row-label", text: colour + " (" + s.decks[colour] + " in deck)"})]);
      s.rows[colour].forEach(function (id) { r.appendChild(card(id, [])); });
      rows.appendChild(r);
    });
    renderExtra(s.extra || {});
    var players = document.getElementById("players");
    players.textContent = "";
    s.seats.forEach(function (p, i) {
      var box = el("div", {cls: "player" + (s.to_move === i ? " to-move" : "") + (p.forfeited ? " forfeited" : ""),
        "data-seat": String(i)});
      box.appendChild(el("h3", null, [el("span", {text: "seat " + i + " \u00b7 " + D.bots[i] + (p.forfeited ? " (forfeited)" : "")}),
        el("span", {cls: "score", text: "score " + (p.score === undefined ? "?" : p.score)})]));
      box.appendChild(el("div", {cls: "supply"}, [el("span", {text: "supply"})].concat(chipList(p.supply))));
      var pz = el("div", {cls: "puzzles"});
      p.unfinished.forEach(function (u) { pz.appendChild(card(u.puzzle, u.pieces)); });
      if (!p.unfinished.length) pz.appendChild(el("span", {cls: "chip", text: "no unfinished puzzles"}));
      box.appendChild(pz);
      var done = el("div", {cls: "completed"}, [el("span", {text: "completed " + p.completed_count})]);
      (p.completed || []).forEach(function (id) {
        var c = D.cards[id] || {color: "white", points: "?"};
        done.appendChild(el("span", {cls: "done " + c.color, "data-card": id, text: id + " " + c.points + "p"}));
      });
      box.appendChild(done);
      players.appendChild(box);
    });
    var reserve = s.reserve || {};
    document.getElementById("reserve").textContent = "reserve: " + Object.keys(reserve).map(function (k) {
      return k + "\u00d7" + reserve[k]; }).join(" ");
    var items = log.children;
    for (var i = 0; i < items.length; i++) items[i].className = "seat" + D.actions[i].seat + (i === step - 1 ? " current" : "");
    if (step > 0 && items[step - 1] && items[step - 1].scrollIntoView) items[step - 1].scrollIntoView({block: "nearest"});
  }

  // What a variant adds to the table: the solo grid and automaton get a layout, anything
  // else is listed as data so no variant's state is hidden.
  function renderExtra(extra) {
    var rows = document.getElementById("rows");
    Object.keys(extra).forEach(function (key) {
      var v = extra[key];
      if (key === "solo" && v && v.grid) {
        var grid = el("div", {cls: "row", "data-row": "solo-grid"}, [el("div", {cls: "row-label",
          text: "grid (locks " + (v.locks || []).join(" · ") + ")"})]);
        var box = el("div", {cls: "solo-grid"});
        v.grid.forEach(function (id) { box.appendChild(card(id, [])); });
        grid.appendChild(box);
        rows.appendChild(grid);
        var auto = el("div", {cls: "row", "data-row": "automaton"}, [el("div", {cls: "row-label",
          text: "automaton: score " + v.automaton_score + ", supply " + v.automaton_supply})]);
        (v.automaton_pile || []).forEach(function (id) {
          var c = D.cards[id] || {color: "white", points: "?"};
          auto.appendChild(el("span", {cls: "done " + c.color, "data-card": id, text: id + " " + c.points + "p"}));
        });
        rows.appendChild(auto);
        return;
      }
      rows.appendChild(el("div", {cls: "row extra", "data-row": key}, [el("div", {cls: "row-label", text: key}),
        el("code", {text: JSON.stringify(v)})]));
    });
  }

  function go(n, keepHash) {
    step = Math.max(0, Math.min(LAST, n | 0));
    render();
    if (!keepHash && history.replaceState) {
      try { history.replaceState(null, "", "#step=" + step); } catch (e) { /* file:// in some browsers */ }
    }
  }

  function fromHash() {
    var m = /step=(\d+)/.exec(location.hash || "");
    return m ? parseInt(m[1], 10) : 0;
  }

  document.getElementById("first").addEventListener("click", function () { go(0); });
  document.getElementById("prev").addEventListener("click", function () { go(step - 1); });
  document.getElementById("next").addEventListener("click", function () { go(step + 1); });
  document.getElementById("last").addEventListener("click", function () { go(LAST); });
  slider.addEventListener("input", function () { go(parseInt(slider.value, 10)); });
  document.addEventListener("keydown", function (e) {
    if (e.target === slider) return;  // the slider steps by itself; handling the key too would skip one
    if (e.key === "ArrowRight") go(step + 1);
    else if (e.key === "ArrowLeft") go(step - 1);
    else if (e.key === "Home") go(0);
    else if (e.key === "End") go(LAST);
  });
  window.addEventListener("hashchange", function () { go(fromHash(), true); });
  go(fromHash(), true);
})();
"""

// The person's table: draws what GET /api/state says, sends one item of its "legal" list.
// It keeps no game state of its own: every view comes from the server.
"use strict";
(function () {
  const token = new URLSearchParams(location.search).get("token") || "";
  // the API lies beside the page: "/api/..." locally, "/play/game/N/api/..." on a league's site
  const base = location.pathname.replace(/\/[^\/]*$/, "");
  const COLORS = { O1: "#f2c500", I2: "#2e9c4a", I3: "#1f6fd1", L3: "#e0712c", I4: "#7a3fb0", O4: "#d43a3a",
                   T4: "#16a3a3", L4: "#8a5a2b", Z4: "#c2358e" };
  const SVGNS = "http://www.w3.org/2000/svg";
  let cards = { puzzles: {}, shapes: {} };
  let view = null, shownEvents = 0, sending = false, choice = {};
  const queue = [];
  const $ = (id) => document.getElementById(id);

  function api(path, options) {
    const sep = path.includes("?") ? "&" : "?";
    return fetch(base + path + sep + "token=" + encodeURIComponent(token), options);
  }
  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function svgEl(tag, attrs) {
    const e = document.createElementNS(SVGNS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  }
  function cellsText(cells) { return cells.map((c) => "row " + (c[0] + 1) + " column " + (c[1] + 1)).join(", "); }

  // A puzzle card drawn 5 by 5: its holes, the pieces in it, and (optionally) a piece being placed.
  function puzzleSvg(id, pieces, extra) {
    const s = svgEl("svg", { viewBox: "0 0 50 50", class: "puzzle", role: "img" });
    const card = cards.puzzles[id];
    const filled = pieces || [];
    let label = "puzzle " + id;
    if (card) {
      label += ", " + card.color + ", " + card.points + " points, reward " + card.reward + ", " + card.cells.length + " cells";
      for (const [r, c] of card.cells) s.appendChild(svgEl("rect", { x: c * 10, y: r * 10, width: 10, height: 10, class: "cell-hole" }));
    }
    for (const p of filled) {
      for (const [r, c] of p.cells) s.appendChild(svgEl("rect", { x: c * 10, y: r * 10, width: 10, height: 10, class: "cell-filled", fill: COLORS[p.piece] || "#888" }));
    }
    if (filled.length) label += ", " + filled.length + " pieces in it";
    if (extra) {
      for (const [r, c] of extra.cells) s.appendChild(svgEl("rect", { x: c * 10 + 1, y: r * 10 + 1, width: 8, height: 8, class: "cell-new", fill: COLORS[extra.piece] || "#888" }));
      label += ", " + extra.piece + " placed at " + cellsText(extra.cells);
    }
    s.setAttribute("aria-label", label);
    return s;
  }
  function pieceSvg(name) {
    const s = svgEl("svg", { viewBox: "0 0 40 40", class: "piece", role: "img", "aria-label": "piece " + name });
    const shape = cards.shapes[name];
    for (const [r, c] of (shape ? shape.cells : [])) s.appendChild(svgEl("rect", { x: c * 10, y: r * 10, width: 10, height: 10, fill: COLORS[name] || "#888", stroke: "#333" }));
    return s;
  }
  function figure(svg, caption) {
    const f = el("figure");
    f.appendChild(svg);
    f.appendChild(el("figcaption", {}, caption));
    return f;
  }

  function describe(a) {
    switch (a.type) {
      case "take_puzzle": return a.slot === undefined || a.slot === null ? "take the top " + a.color + " card of its deck, unseen"
        : "take the " + a.color + " puzzle in slot " + (a.slot + 1) + (a.puzzle ? " (" + a.puzzle + ")" : "");
      case "take_piece": return "take a level-1 piece";
      case "upgrade": return "upgrade " + a.give + " to " + a.take;
      case "recycle": return "recycle the " + a.color + " row";
      case "pass": return "pass";
      case "place": return "place " + a.piece + " on " + a.puzzle + " at " + cellsText(a.cells);
      case "master": return "master action: " + (a.placements || []).map((p) => p.piece + " on " + p.puzzle).join("; ");
      case "finish": return a.hidden ? "finishing touches (hidden until the end)" :
        "finishing touches: " + ((a.placements || []).length ? a.placements.map((p) => p.piece + " on " + p.puzzle + " at " + cellsText(p.cells)).join("; ") : "none");
      default: return a.type + " " + JSON.stringify(Object.fromEntries(Object.entries(a).filter(([k]) => k !== "type")));
    }
  }
  function who(seat) { return seat === view.seat ? "You" : (view.names[seat] || "seat " + seat) + " (seat " + seat + ")"; }

  function send(action) {
    if (sending) return;
    sending = true;
    choice = {};
    $("moves").replaceChildren(el("p", {}, "Sending " + describe(action) + "…"));
    api("/api/action", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(action) })
      .then((r) => r.json().then((body) => {
        sending = false;
        if (!r.ok) $("status").textContent = body.error;
        refresh(0);
      }))
      .catch(() => { sending = false; refresh(1000); });
  }
  function moveButton(label, action, svg) {
    const b = el("button", { type: "button", class: "legal", "aria-label": label, title: label });
    if (svg) b.appendChild(svg);
    b.appendChild(document.createTextNode(svg ? "" : label));
    b.addEventListener("click", () => send(action));
    return b;
  }
  function stepButton(label, onClick, svg) {
    const b = el("button", { type: "button", class: "legal step", "aria-label": label, title: label });
    if (svg) b.appendChild(svg);
    b.appendChild(document.createTextNode(" " + label));
    b.addEventListener("click", onClick);
    return b;
  }
  function piecesIn(puzzleId) {
    for (const s of view.observation.seats) for (const u of s.unfinished) if (u.puzzle === puzzleId) return u.pieces;
    return [];
  }

  // The legal list, offered in steps where it is long: a piece, then a puzzle, then where it goes.
  function drawMoves() {
    const box = $("moves");
    box.replaceChildren();
    const legal = view.legal || [];
    if (!legal.length) {
      box.appendChild(el("p", {}, view.over ? "The game is over." : "Waiting for the others to move…"));
      return;
    }
    const places = legal.filter((a) => a.type === "place");
    const others = legal.filter((a) => a.type !== "place");
    if (choice.piece && choice.puzzle) {
      box.appendChild(el("p", { class: "group" }, "Where does " + choice.piece + " go on " + choice.puzzle + "? (each way it can be turned or flipped)"));
      for (const a of places.filter((p) => p.piece === choice.piece && p.puzzle === choice.puzzle)) {
        box.appendChild(moveButton(describe(a), a, puzzleSvg(a.puzzle, piecesIn(a.puzzle), a)));
      }
      box.appendChild(stepButton("back to the pieces", () => { choice = {}; drawMoves(); }));
      return;
    }
    if (choice.piece) {
      box.appendChild(el("p", { class: "group" }, "Which puzzle gets " + choice.piece + "?"));
      const puzzles = [...new Set(places.filter((p) => p.piece === choice.piece).map((p) => p.puzzle))];
      for (const id of puzzles) box.appendChild(stepButton("place " + choice.piece + " on " + id, () => { choice.puzzle = id; drawMoves(); }, puzzleSvg(id, piecesIn(id))));
      box.appendChild(stepButton("back to the pieces", () => { choice = {}; drawMoves(); }));
      return;
    }
    const shapes = [...new Set(places.map((p) => p.piece))];
    if (shapes.length) {
      box.appendChild(el("p", { class: "group" }, "Place a piece"));
      for (const s of shapes) box.appendChild(stepButton("place a piece " + s, () => { choice = { piece: s }; drawMoves(); }, pieceSvg(s)));
    }
    const byType = {};
    for (const a of others) (byType[a.type] = byType[a.type] || []).push(a);
    for (const type of Object.keys(byType)) {
      box.appendChild(el("p", { class: "group" }, { take_puzzle: "Take a puzzle", take_piece: "Take a piece", upgrade: "Upgrade a piece",
        recycle: "Recycle a row", pass: "Pass", master: "Master action (one piece on each puzzle)", finish: "Finishing touches" }[type] || type));
      for (const a of byType[type]) box.appendChild(moveButton(describe(a), a));
    }
  }

  function drawBoard() {
    const obs = view.observation;
    if (!obs) return;
    const rows = $("rows");
    rows.replaceChildren();
    for (const color of Object.keys(obs.rows)) {
      const line = el("div", { class: "cards", role: "list", "aria-label": color + " row" });
      obs.rows[color].forEach((id, slot) => {
        const item = el("div", { role: "listitem" });
        item.appendChild(id ? figure(puzzleSvg(id, []), color + " " + (slot + 1) + ": " + id) : el("span", {}, "(empty)"));
        line.appendChild(item);
      });
      rows.appendChild(line);
    }
    $("decks").textContent = "Decks: " + Object.entries(obs.decks).map(([c, n]) => n + " " + c).join(", ") +
      " cards left (their order is never shown). Round " + obs.round + ", phase " + obs.phase +
      (obs.actions_left !== undefined && obs.to_move === obs.seat ? ", " + obs.actions_left + (obs.actions_left === 1 ? " action" : " actions") + " left" : "") + ".";
    const seats = $("seats");
    seats.replaceChildren();
    for (const s of obs.seats) {
      const box = el("div", { class: "seat" + (s.seat === view.seat ? " mine" : "") + (s.seat === obs.to_move ? " to-move" : "") });
      box.appendChild(el("h3", {}, who(s.seat) + (s.forfeited ? " (forfeited)" : "")));
      const supply = el("div", { class: "cards", "aria-label": "pieces of " + who(s.seat) });
      for (const [name, n] of Object.entries(s.supply)) supply.appendChild(figure(pieceSvg(name), name + " ×" + n));
      box.appendChild(supply);
      const puzzles = el("div", { class: "cards", "aria-label": "puzzles in progress of " + who(s.seat) });
      for (const u of s.unfinished) puzzles.appendChild(figure(puzzleSvg(u.puzzle, u.pieces), u.puzzle));
      box.appendChild(puzzles);
      box.appendChild(el("p", {}, s.completed_count + " completed" + ("score" in s ? ", score " + s.score : ", score hidden")));
      seats.appendChild(box);
    }
  }

  function animateEvents() {
    for (; shownEvents < view.events.length; shownEvents++) queue.push(view.events[shownEvents]);
    if (queue.length && !animateEvents.busy) {
      animateEvents.busy = true;
      const step = () => {
        const e = queue.shift();
        if (!e) { animateEvents.busy = false; return; }
        const li = el("li", { class: "new" }, who(e.seat) + ": " + (e.forfeit ? "forfeited" : describe(e.action)));
        $("log").appendChild(li);
        $("log").scrollTop = $("log").scrollHeight;
        setTimeout(step, queue.length > 20 ? 30 : 250);
      };
      step();
    }
  }

  function drawEnd() {
    const end = $("end");
    if (!view.over) { end.hidden = true; return; }
    end.hidden = false;
    const res = view.result || {};
    const t = $("scores");
    t.replaceChildren();
    const head = el("tr");
    for (const h of ["seat", "player", "score", "rank", "completed"]) head.appendChild(el("th", { scope: "col" }, h));
    t.appendChild(head);
    (res.scores || []).forEach((score, s) => {
      const tr = el("tr");
      for (const v of [s, who(s), score, (res.ranking || [])[s], (res.completed || [])[s]]) tr.appendChild(el("td", {}, String(v)));
      t.appendChild(tr);
    });
    if (view.replay) $("replay-link").href = base + "/" + view.replay; else $("replay-link").hidden = true;
  }

  function draw() {
    const status = view.over ? (view.result && view.result.stopped ? "The game was stopped." : "Game over.")
      : view.legal.length ? "Your move." : "Waiting for the others…";
    $("status").textContent = status;
    drawBoard();
    drawMoves();
    animateEvents();
    drawEnd();
  }

  function refresh(delay) {
    setTimeout(() => {
      const wait = view && !view.legal.length && !view.over ? "turn=" + view.turn + "&events=" + view.events.length : "";
      api("/api/state" + (wait ? "?" + wait : ""))
        .then((r) => r.json())
        .then((v) => {
          const changed = !view || v.turn !== view.turn || v.over !== view.over;
          view = v;
          if (changed) choice = {};
          draw();
          if (!view.over && !view.legal.length) refresh(0);
        })
        .catch(() => refresh(1000));
    }, delay);
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("leave").addEventListener("click", () => {
      api("/api/leave", { method: "POST" }).then(() => { $("status").textContent = "You left the table; you may close this page."; });
    });
    api("/api/cards").then((r) => r.json()).then((c) => {
      for (const p of c.puzzles) cards.puzzles[p.id] = p;
      for (const s of c.shapes) cards.shapes[s.name] = s;
      refresh(0);
    });
  });
})();

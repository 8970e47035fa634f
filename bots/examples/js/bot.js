#!/usr/bin/env node
// A Project L protocol bot in plain Node.js (no npm packages): one file.
//
// Run it:      arena play greedy --cmd "node bots/examples/js/bot.js"
// Check it:    arena check-bot -- node bots/examples/js/bot.js
//
// It asks for the legal options in every request (`legal_actions: true` in `ready`)
// and prefers, in order: a placement on the puzzle closest to completion, taking a
// puzzle while it holds fewer than two, an upgrade, a level-1 piece; else it passes.
// Decisions: the first option offered. The protocol is in docs/protocol.md.
'use strict';
const readline = require('readline');

const NAME = 'js-example';
const VERSION = '1.0';
let seed = 1;
function random() {            // a small deterministic generator, seeded by `hello`
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}
function pick(list) { return list[Math.floor(random() * list.length)]; }
function send(obj) { process.stdout.write(JSON.stringify(obj) + '\n'); }

function chooseAction(msg) {
  const legal = msg.legal || [{type: 'pass'}];
  const obs = msg.observation;
  const me = obs.seats[obs.seat];
  const byType = t => legal.filter(a => a.type === t);
  const places = byType('place');
  if (places.length) {
    const filled = {};
    for (const u of me.unfinished) filled[u.puzzle] = u.pieces.length;
    places.sort((a, b) => (filled[b.puzzle] || 0) - (filled[a.puzzle] || 0));
    return places[0];
  }
  const takes = byType('take_puzzle');
  if (takes.length && me.unfinished.length < 2) return pick(takes);
  const upgrades = byType('upgrade');
  if (upgrades.length && random() < 0.7) return pick(upgrades);
  const pieces = byType('take_piece');
  if (pieces.length) return pieces[0];
  return {type: 'pass'};
}

const rl = readline.createInterface({input: process.stdin, terminal: false});
rl.on('line', line => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  switch (msg.type) {
    case 'hello':
      seed = (msg.seed || 1) % 2147483648;
      send({type: 'ready', id: msg.id, name: NAME, version: VERSION, legal_actions: true});
      break;
    case 'action':
      send({id: msg.id, action: chooseAction(msg)});
      break;
    case 'reward':
    case 'level_up':
    case 'finish':
      send({id: msg.id, action: (msg.legal && msg.legal[0]) ||
            {type: msg.type, ...(msg.type === 'level_up' ? {steps: []} : {placements: []})}});
      break;
    case 'game_over':
      process.stderr.write(`game over: ${JSON.stringify(msg.result.scores)}\n`);
      break;
    case 'quit':
      process.exit(0);
  }
});

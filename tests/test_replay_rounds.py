"""``arena replay`` labels each action with the round the engine played it in (R2): the
last action of a round is still that round's, though the game's counter has moved on."""

from __future__ import annotations

import json
import random

from typer.testing import CliRunner

from arena.cli import app
from arena.replay.view import played_steps
from engine import Game, RuleSpec, make_replay


def played_game(variants, players, seed):
    game = Game.new(RuleSpec.make(variants), players, seed)
    rng = random.Random(seed)
    rounds = []
    while not game.is_over:
        rounds.append(game.round)
        game.apply(rng.choice(game.legal_actions()))
    return game, rounds


def test_each_action_is_labelled_with_the_round_it_was_played_in(tmp_path):
    for variants, players in (([], 2), (["revised"], 3), (["solo"], 1)):
        game, rounds = played_game(variants, players, 5)
        record = make_replay(game, None, {})
        labels = [played_in for _, _, played_in, _ in played_steps(record)]
        assert labels == rounds, variants
    game, rounds = played_game([], 2, 5)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(make_replay(game, None, {})))
    out = CliRunner().invoke(app, ["replay", str(path), "--no-color"]).stdout
    lines = [x for x in out.splitlines() if x.startswith("[")]
    assert len(lines) == len(rounds)
    first_of_round_2 = rounds.index(2)
    assert lines[first_of_round_2 - 1].startswith(f"[{first_of_round_2 - 1:4}] round 1:")  # the action that ends round 1
    assert lines[first_of_round_2].startswith(f"[{first_of_round_2:4}] round 2:")
    assert lines[-1].startswith(f"[{len(rounds) - 1:4}] round {rounds[-1]}:")

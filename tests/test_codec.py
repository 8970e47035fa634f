"""R14 Canonical action and decision JSON, both directions, and every malformed message."""

from __future__ import annotations

import json
import random

import pytest

from arena.plugins import policy
from conftest import W09, dealt, take
from engine import Game, IllegalAction, RuleSpec, action_from_json, action_to_json
from engine.actions import BLACK, WHITE, Finish, LevelUp, Master, Pass, Reward, TakePiece, TakePuzzle, Upgrade


@pytest.fixture(scope="module")
def rules():
    return dealt().rules


def _place(rules, cid, piece, cells):
    return action_from_json(rules, {"type": "place", "puzzle": cid, "piece": piece, "cells": cells})


def test_R14_canonical_forms(rules):
    si = rules.shape_index
    p = _place(rules, "W09", "I2", [[3, 2], [2, 2]])
    cases = [
        (TakePuzzle(WHITE, 0), {"type": "take_puzzle", "color": "white", "slot": 0}),
        (TakePuzzle(BLACK, 3), {"type": "take_puzzle", "color": "black", "slot": 3}),
        (TakePiece(), {"type": "take_piece"}),
        (Upgrade(si["I2"], si["L3"]), {"type": "upgrade", "give": "I2", "take": "L3"}),
        (p, {"type": "place", "puzzle": "W09", "piece": "I2", "cells": [[2, 2], [3, 2]]}),
        (Master((p,)), {"type": "master", "placements": [{"puzzle": "W09", "piece": "I2", "cells": [[2, 2], [3, 2]]}]}),
        (Pass(), {"type": "pass"}),
        (Reward(si["T4"]), {"type": "reward", "take": "T4"}),
        (LevelUp(((si["L4"], si["T4"]),)), {"type": "level_up", "steps": [{"give": "L4", "take": "T4"}]}),
        (LevelUp(()), {"type": "level_up", "steps": []}),
        (Finish(()), {"type": "finish", "placements": []}),
        (Finish((p, p)), {"type": "finish", "placements": [placement := {"puzzle": "W09", "piece": "I2", "cells": [[2, 2], [3, 2]]}, placement]}),
    ]
    for action, obj in cases:
        assert action_to_json(rules, action) == obj
        back = action_from_json(rules, obj)
        assert type(back) is type(action) and back == action
        assert json.loads(json.dumps(obj)) == obj


def test_R14_cells_in_any_order_and_orientation_name_one_placement(rules):
    a = _place(rules, "W24", "L3", [[3, 2], [2, 1], [3, 1]])
    b = _place(rules, "W24", "L3", [[2, 1], [3, 1], [3, 2]])
    assert a == b
    assert action_to_json(rules, a)["cells"] == [[2, 1], [3, 1], [3, 2]]


def test_R14_every_legal_action_of_real_games_round_trips():
    for seed, bots in ((1, ("greedy", "random")), (2, ("random", "random", "greedy"))):
        game = Game.new(RuleSpec.make((), {"max_rounds": 15}), len(bots), seed)
        pols = [policy(b) for b in bots]
        rng = random.Random(seed)
        while not game.is_over:
            for a in game.legal_actions():
                back = action_from_json(game.rules, json.loads(json.dumps(action_to_json(game.rules, a))))
                assert type(back) is type(a) and back == a
            for m in list(game.master_actions())[:20]:
                assert action_from_json(game.rules, action_to_json(game.rules, m)) == m
            game.apply(pols[game.to_move()].choose(game, rng))


PL = {"puzzle": "W09", "piece": "I2", "cells": W09}


@pytest.mark.parametrize("obj, rule, words", [
    # not an object / no type
    (["take_piece"], "R14", "an action must be a JSON object, got list"),
    ("pass", "R14", "an action must be a JSON object, got str"),
    (None, "R14", "an action must be a JSON object, got NoneType"),
    ({}, "R14", "needs a string field 'type'"),
    ({"type": 3}, "R14", "needs a string field 'type'"),
    ({"type": "recycle", "color": "white"}, "R14", "unknown action type 'recycle' under rules base"),
    ({"type": "Take_Piece"}, "R14", "unknown action type"),
    # extra fields
    ({"type": "pass", "now": True}, "R14", "pass has no field 'now'"),
    ({"type": "take_piece", "piece": "O1"}, "R14", "take_piece has no field 'piece'"),
    ({"type": "take_puzzle", "color": "white", "slot": 0, "blind": True}, "R14", "take_puzzle has no field 'blind'"),
    # take_puzzle fields
    ({"type": "take_puzzle", "slot": 0}, "R14", "field 'color' to be \"white\" or \"black\", got None"),
    ({"type": "take_puzzle", "color": "grey", "slot": 0}, "R14", "got 'grey'"),
    ({"type": "take_puzzle", "color": 0, "slot": 0}, "R14", "field 'color'"),
    ({"type": "take_puzzle", "color": "white"}, "R14", "needs an integer field 'slot', got None"),
    ({"type": "take_puzzle", "color": "white", "slot": "0"}, "R14", "integer field 'slot', got '0'"),
    ({"type": "take_puzzle", "color": "white", "slot": 1.0}, "R14", "integer field 'slot'"),
    ({"type": "take_puzzle", "color": "white", "slot": True}, "R14", "integer field 'slot', got True"),
    # upgrade fields
    ({"type": "upgrade", "give": "O1"}, "R14", "upgrade needs a piece name in field 'take', got None"),
    ({"type": "upgrade", "take": "I2"}, "R14", "field 'give'"),
    ({"type": "upgrade", "give": 1, "take": "I2"}, "R14", "field 'give', got 1"),
    ({"type": "upgrade", "give": "O1", "take": "P5"}, "R0", "unknown piece 'P5'"),
    ({"type": "upgrade", "give": "o1", "take": "I2"}, "R0", "unknown piece 'o1'"),
    # place fields
    ({"type": "place", "piece": "I2", "cells": W09}, "R14", "needs a card id in field 'puzzle', got None"),
    ({"type": "place", "puzzle": 9, "piece": "I2", "cells": W09}, "R14", "field 'puzzle', got 9"),
    ({"type": "place", "puzzle": "W99", "piece": "I2", "cells": W09}, "R3.5", "there is no puzzle 'W99' in this game"),
    ({"type": "place", "puzzle": "W09", "cells": W09}, "R14", "field 'piece'"),
    ({"type": "place", "puzzle": "W09", "piece": "X5", "cells": W09}, "R0", "unknown piece 'X5'"),
    ({"type": "place", "puzzle": "W09", "piece": "I2"}, "R14", "needs field 'cells'"),
    ({"type": "place", "puzzle": "W09", "piece": "I2", "cells": []}, "R14", "needs field 'cells'"),
    ({"type": "place", "puzzle": "W09", "piece": "I2", "cells": "2,2 3,2"}, "R14", "needs field 'cells'"),
    ({"type": "place", "puzzle": "W09", "piece": "I2", "cells": [[2, 2], 3]}, "R14", "each cell must be a [row, col] pair of integers, got 3"),
    ({"type": "place", "puzzle": "W09", "piece": "I2", "cells": [[2, 2], [3, 2, 0]]}, "R14", "[row, col] pair"),
    ({"type": "place", "puzzle": "W09", "piece": "I2", "cells": [[2, 2], [3]]}, "R14", "[row, col] pair"),
    ({"type": "place", "puzzle": "W09", "piece": "I2", "cells": [[2, 2], [3.0, 2]]}, "R14", "[row, col] pair"),
    ({"type": "place", "puzzle": "W09", "piece": "I2", "cells": [[2, 2], [True, 2]]}, "R14", "[row, col] pair"),
    ({"type": "place", "puzzle": "W09", "piece": "I2", "cells": [[2, 2], ["3", 2]]}, "R14", "[row, col] pair"),
    ({"type": "place", "puzzle": "W09", "piece": "I2", "cells": [[2, 2], {"r": 3}]}, "R14", "[row, col] pair"),
    ({"type": "place", "puzzle": "W09", "piece": "I2", "cells": [[4, 4], [5, 4]]}, "R3.5", "cell [5, 4] is off the 5x5 grid"),
    ({"type": "place", "puzzle": "W09", "piece": "I2", "cells": [[0, -1], [0, 0]]}, "R3.5", "cell [0, -1] is off the 5x5 grid"),
    ({"type": "place", "puzzle": "W09", "piece": "I2", "cells": [[2, 2], [2, 2]]}, "R14", "cell [2, 2] is listed twice"),
    ({"type": "place", "puzzle": "W09", "piece": "I2", "cells": [[2, 2], [3, 3]]}, "R3.5", "are not a I2 in any rotation or reflection"),
    ({"type": "place", "puzzle": "W09", "piece": "L3", "cells": [[0, 0], [0, 1], [0, 2]]}, "R3.5", "not a L3"),
    ({"type": "place", "puzzle": "W09", "piece": "I2", "cells": W09, "slot": 0}, "R14", "place has no field 'slot'"),
    # master / finish placements
    ({"type": "master"}, "R14", "master needs a list in field 'placements', got None"),
    ({"type": "master", "placements": PL}, "R14", "master needs a list in field 'placements'"),
    ({"type": "master", "placements": ["W09"]}, "R14", "master placement 0 must be an object"),
    ({"type": "master", "placements": [PL, {**PL, "rotate": 1}]}, "R14", "master placement 1 has no field 'rotate'"),
    ({"type": "master", "placements": [{**PL, "cells": [[9, 9], [8, 9]]}]}, "R3.5", "off the 5x5 grid"),
    ({"type": "master", "placements": [], "extra": 1}, "R14", "master has no field 'extra'"),
    ({"type": "finish"}, "R14", "finish needs a list in field 'placements'"),
    ({"type": "finish", "placements": [PL, 7]}, "R14", "finish placement 1 must be an object"),
    ({"type": "finish", "placements": [{**PL, "piece": "Q1"}]}, "R0", "unknown piece 'Q1'"),
    # decisions
    ({"type": "reward"}, "R14", "reward needs a piece name in field 'take'"),
    ({"type": "reward", "take": "Q1"}, "R0", "unknown piece"),
    ({"type": "reward", "take": "T4", "give": "O1"}, "R14", "reward has no field 'give'"),
    ({"type": "level_up"}, "R14", "level_up needs a list in field 'steps'"),
    ({"type": "level_up", "steps": ["L4"]}, "R14", "level_up step 0 must be an object"),
    ({"type": "level_up", "steps": [{"give": "L4"}]}, "R14", "level_up step 0 needs a piece name in field 'take'"),
    ({"type": "level_up", "steps": [{"give": "L4", "take": "T4", "n": 2}]}, "R14", "level_up step 0 has no field 'n'"),
])
def test_R14_malformed_message_is_rejected_citing_the_rule(rules, obj, rule, words):
    with pytest.raises(IllegalAction) as info:
        action_from_json(rules, obj)
    err = info.value
    assert str(err).startswith(f"{rule}: ") and err.rule == rule
    assert words in err.reason


def test_R14_malformed_message_leaves_the_game_untouched():
    game = dealt()
    take(game, "white", 0)
    before = game.to_json()
    for obj in ({"type": "place", "puzzle": "W09", "piece": "I2", "cells": [[2, 2], [2, 2]]}, {"type": "x"}, []):
        with pytest.raises(IllegalAction):
            game.apply(action_from_json(game.rules, obj))
    assert game.to_json() == before


def test_R14_action_of_another_kind_has_no_json_form(rules):
    class Dance(tuple):
        pass
    with pytest.raises(IllegalAction, match=r"^R14: no JSON form for Dance"):
        action_to_json(rules, Dance())


def test_R14_unknown_action_class_is_rejected_by_apply():
    class Dance(tuple):
        pass
    game = dealt()
    before = game.to_json()
    with pytest.raises(IllegalAction, match=r"^R14: Dance is not an action of rules base"):
        game.apply(Dance())
    assert game.to_json() == before

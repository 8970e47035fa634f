"""The ``no-master`` house rule: the master action (R3.6) is neither listed nor accepted."""

from __future__ import annotations

import pytest

from conftest import SMALL_WHITES, FIVE_BLACKS, rejects
from engine.actions import Master
from variant_helpers import act, new

TWO_PLACEMENTS = [{"puzzle": "W09", "piece": "I2", "cells": [[2, 2], [3, 2]]},
                  {"puzzle": "W10", "piece": "O1", "cells": [[1, 2]]}]


def two_puzzles(variants):
    """Seat 0 holds W09 and W10, and owns an O1 and an I2: a master action is possible."""
    game = new(variants, 2, white=SMALL_WHITES, black=FIVE_BLACKS)
    act(game, {"type": "take_puzzle", "color": "white", "slot": 0})
    act(game, {"type": "take_puzzle", "color": "white", "slot": 2})
    return game


def test_R3_6_the_master_action_works_without_the_house_rule():
    game = two_puzzles(())
    assert any(len(m.placements) == 2 for m in game.master_actions())
    act(game, {"type": "master", "placements": TWO_PLACEMENTS})
    assert len(game.players[0].completed) == 1


@pytest.mark.parametrize("variants", [("no-master",), ("revised", "no-master"), ("ghost", "no-master"),
                                      ("no-master", "open-scores")])
def test_no_master_the_master_action_is_neither_listed_nor_accepted(variants):
    game = two_puzzles(variants)
    assert list(game.master_actions()) == []
    assert not any(type(a) is Master for a in game.legal_actions())
    error = rejects(game, {"type": "master", "placements": TWO_PLACEMENTS}, "R14")
    assert "master" in str(error)
    placements = tuple(m for m in next(iter(two_puzzles(()).master_actions())).placements)
    rejects(game, Master(placements), "R14")


def test_no_master_single_placements_are_still_allowed():
    game = two_puzzles(("no-master",))
    act(game, TWO_PLACEMENTS[0] | {"type": "place"})
    assert len(game.players[0].completed) == 1


def test_no_master_in_solo():
    game = new(("solo", "no-master"), 1)
    act(game, {"type": "take_puzzle", "slot": 0})
    assert list(game.master_actions()) == []
    rejects(game, {"type": "master", "placements": []}, "R14")

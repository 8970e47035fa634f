"""R7 Scoring and ranking: points, finishing-touch cost, tie-breaks, shared places, forfeits."""

from __future__ import annotations

import pytest

from conftest import W09, act, dealt, pass_turn, place, set_player, start_finish, take

ONE = {"O1": 1}


@pytest.mark.parametrize("seats, scores, ranking", [
    # different scores
    ([dict(completed=["W09"]), dict(completed=["W01"]), dict()], [1, 2, 0], [2, 1, 3]),
    # finishing-touch pieces cost points (R7.1)
    ([dict(completed=["B01"], finish_pieces=3), dict(completed=["B13"]), dict()], [2, 3, 0], [2, 1, 3]),
    # equal scores: more completed puzzles first
    ([dict(completed=["W01"]), dict(completed=["W09", "W10"]), dict(completed=["W22", "W01"])], [2, 2, 2], [3, 1, 1]),
    # equal scores and completed: more pieces owned
    ([dict(completed=["W09"], supply_counts={"O1": 2}), dict(completed=["W10"], supply_counts={"L4": 1}), dict()],
     [1, 1, 0], [1, 2, 3]),
    # pieces locked on puzzles completed in the finishing touches count as owned
    ([dict(completed=["W09"], supply_counts=ONE, locked=2), dict(completed=["W10"], supply_counts={"O1": 2}), dict()],
     [1, 1, 0], [1, 2, 3]),
    # everything equal: a shared place, and the next place skips
    ([dict(completed=["W09"], supply_counts=ONE), dict(completed=["W10"], supply_counts=ONE), dict(supply_counts=ONE)],
     [1, 1, 0], [1, 1, 3]),
    ([dict(completed=["W01"]), dict(supply_counts=ONE), dict(supply_counts=ONE)], [2, 0, 0], [1, 2, 2]),
    # negative scores rank below zero
    ([dict(finish_pieces=2, supply_counts=ONE), dict(supply_counts=ONE), dict(finish_pieces=1, supply_counts=ONE)],
     [-2, 0, -1], [3, 1, 2]),
])
def test_R7_1_R7_2_scores_and_ranking(seats, scores, ranking):
    game = dealt(3)
    for seat, kw in enumerate(seats):
        kw.setdefault("supply_counts", {})
        set_player(game, seat, **kw)
    assert game.scores() == scores
    assert game.ranking() == ranking


def test_R7_2_pieces_lying_on_unfinished_puzzles_count_as_owned():
    game = dealt(2)
    take(game, "white", 2)  # W10
    place(game, "W10", "O1", [[1, 2]])
    # seat 0: I2 in the supply and O1 on W10; seat 1: O1 and I2 in the supply
    assert game.ranking() == [1, 1]
    pass_turn(game)
    act(game, {"type": "take_piece"})
    assert game.ranking() == [2, 1]


def test_R7_3_forfeited_seat_ranks_below_every_other():
    game = dealt(3)
    set_player(game, 0, completed=["B01"])
    set_player(game, 1, completed=["W09"])
    game.forfeit(0)
    assert game.scores()[0] == 5
    assert game.ranking() == [3, 1, 2]
    game.forfeit(1)
    assert game.ranking() == [2, 3, 1]


def test_R7_3_forfeited_seat_passes_for_the_rest_of_the_game():
    game = dealt(3)
    game.forfeit(0)
    assert game.to_move() == 1 and game.history[-1] == (0, None)
    turns = []
    while game.phase_name == "action":
        turns.append(game.to_move())
        pass_turn(game)
        if len(turns) > 10:
            break
    assert 0 not in turns
    game.forfeit(1)
    assert game.to_move() == 2


def test_R7_3_forfeited_seat_is_skipped_in_the_finishing_touches():
    game = dealt(3, black=["B13", "B14", "B15", "B16"])
    start_finish(game)
    game.forfeit(0)
    assert game.to_move() == 1
    game.forfeit(2)
    act(game, {"type": "finish", "placements": []})
    assert game.is_over
    assert game.result()["forfeited"] == [True, False, True]
    assert game.result()["ranking"] == [2, 1, 2]


def test_R7_3_all_seats_forfeited_ends_the_game():
    game = dealt(2)
    game.forfeit(1)
    game.forfeit(0)
    assert game.is_over and game.result()["forfeited"] == [True, True]


def test_R7_1_result_reports_scores_from_play():
    game = dealt(2, black=["B13", "B14", "B15", "B16"])
    take(game, "white", 0)  # W09, 1 point
    place(game, "W09", "I2", W09)
    start_finish(game)
    act(game, {"type": "finish", "placements": []})
    act(game, {"type": "finish", "placements": []})
    res = game.result()
    assert res["scores"] == [1, 0] and res["ranking"] == [1, 2] and res["completed"] == [1, 0]
    assert res["rounds"] == 2 and not res["adjudicated"] and res["forfeited"] == [False, False]

"""Time controls: per-move limit, chess clock with increment, banked overage, validation."""

import pytest

from arena.process.timecontrol import Clock, TimeControl, TimeControlError


def test_defaults_and_round_trip():
    tc = TimeControl.from_json({"move_ms": 250})
    assert tc.move_ms == 250 and tc.game_ms is None and tc.grace_ms == 50
    assert TimeControl.from_json(tc.to_json()) == tc


def test_per_move_limit_only():
    c = Clock(TimeControl(move_ms=300))
    c.charge(290)
    assert c.allowance_ms() == 300 and c.view()["game_left_ms"] is None


def test_chess_clock_takes_every_move_and_adds_the_increment():
    c = Clock(TimeControl(move_ms=1000, game_ms=1500, increment_ms=100))
    assert c.allowance_ms() == 1000
    c.charge(900)
    assert c.left_ms == pytest.approx(700)
    assert c.allowance_ms() == pytest.approx(700), "the move limit is capped by what is left"
    c.charge(800)
    assert c.left_ms == pytest.approx(100) and c.allowance_ms() == pytest.approx(100)


def test_banked_overage_takes_only_the_time_over_the_move_limit():
    c = Clock(TimeControl(move_ms=100, game_ms=500, mode="bank"))
    assert c.allowance_ms() == 600
    c.charge(80)
    assert c.left_ms == 500
    c.charge(350)
    assert c.left_ms == 250 and c.allowance_ms() == 350


@pytest.mark.parametrize("obj, words", [
    ({"move_ms": 0}, "at least 1"),
    ({"move_ms": -5}, "move_ms"),
    ({"move_ms": "fast"}, "move_ms"),
    ({"game_ms": "x"}, "game_ms"),
    ({"mode": "hourglass"}, "mode"),
    ({"moves_ms": 10}, "no field 'moves_ms'"),
    ([1], "mapping"),
])
def test_bad_time_controls_are_sentences(obj, words):
    with pytest.raises(TimeControlError, match=words):
        TimeControl.from_json(obj)


def test_to_json_is_every_field_as_plain_data():
    """``to_json`` writes the fields out by hand (``dataclasses.asdict`` deep-copies, five
    times slower, once per seat and game): it must stay every field, and read back equal."""
    from dataclasses import asdict

    for tc in (TimeControl(), TimeControl(move_ms=50, game_ms=9000, increment_ms=10, startup_ms=500, grace_ms=0,
                                          mode="bank")):
        assert tc.to_json() == asdict(tc)
        assert TimeControl.from_json(tc.to_json()) == tc

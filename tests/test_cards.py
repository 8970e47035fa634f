"""Card data: the packaged sets are the published game, and a malformed card file is
rejected with a :class:`CardDataError` naming the file, the card and the field."""

from __future__ import annotations

import copy

import pytest
import yaml

from engine import CardDataError
from engine.cards import card_set, check_rewards, load_card_file

SHAPE_CELLS = {"O1": 1, "I2": 2, "I3": 3, "L3": 3, "I4": 4, "O4": 4, "T4": 4, "L4": 4, "Z4": 4}


def _valid() -> dict:
    return {
        "set": "mini",
        "reserve_per_shape": 10,
        "pieces": {"O1": {"level": 1, "shape": ["#"]}, "I2": {"level": 2, "shape": ["##"]}},
        "puzzles": [
            {"id": "M01", "color": "white", "points": 1, "reward": "I2",
             "shape": [".....", "..#..", "..#..", ".....", "....."]},
            {"id": "M02", "color": "black", "points": 3, "reward": "O1",
             "shape": [".....", ".###.", ".###.", ".....", "....."]},
        ],
    }


def _write(tmp_path, data, name="mini.yaml"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _with(change):
    data = _valid()
    change(data)
    return data


# ---------------------------------------------------------------- the packaged sets
def test_base_set_is_the_published_game():
    cs = card_set("base")
    assert {s.name: s.level for s in cs.shapes} == SHAPE_CELLS
    assert all(len(s.cells) == s.level for s in cs.shapes)
    whites = [p for p in cs.puzzles if p.color == "white"]
    blacks = [p for p in cs.puzzles if p.color == "black"]
    assert len(whites) == 32 and len(blacks) == 20
    assert [p.id for p in whites] == [f"W{i:02}" for i in range(1, 33)]
    assert [p.id for p in blacks] == [f"B{i:02}" for i in range(1, 21)]
    assert all(0 <= p.points <= 2 for p in whites) and all(3 <= p.points <= 5 for p in blacks)
    assert all(p.reward in SHAPE_CELLS for p in cs.puzzles)
    assert cs.reserve_per_shape == 10
    check_rewards([cs])


def test_base_set_recess_is_the_shape_rows():
    for p in card_set("base").puzzles:
        cells = {(r, c) for r, row in enumerate(p.rows) for c, ch in enumerate(row) if ch == "#"}
        assert p.size == len(cells) >= 2
        assert p.recess == sum(1 << (r * 5 + c) for r, c in cells)


def test_unknown_card_set_is_named():
    with pytest.raises(CardDataError, match=r"no card set named 'nope' \(known: .*base"):
        card_set("nope")


def test_valid_file_loads(tmp_path):
    cs = load_card_file(_write(tmp_path, _valid()))
    assert cs.name == "mini" and [p.id for p in cs.puzzles] == ["M01", "M02"]
    assert cs.puzzles[0].recess == (1 << 7) | (1 << 12) and cs.puzzles[1].size == 6
    check_rewards([cs])


# ---------------------------------------------------------------- malformed files
def _del(*path):
    def change(data):
        target = data
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return change


def _set(value, *path):
    def change(data):
        target = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


@pytest.mark.parametrize("change, where, field, words", [
    # missing fields
    (_del("puzzles", 0, "points"), "puzzle M01", "'points'", "missing field 'points'"),
    (_del("puzzles", 1, "color"), "puzzle M02", "'color'", "missing field 'color'"),
    (_del("puzzles", 0, "id"), "puzzle #1", "'id'", "missing field 'id'"),
    (_del("pieces", "I2", "level"), "piece I2", "'level'", "missing field 'level'"),
    (_del("set"), "mini.yaml", "'set'", "missing field 'set'"),
    (_del("puzzles"), "mini.yaml", "'puzzles'", "missing field 'puzzles'"),
    # wrong types
    (_set("two", "puzzles", 0, "points"), "puzzle M01", "'points'", "must be int, got 'two'"),
    (_set(True, "puzzles", 0, "points"), "puzzle M01", "'points'", "must be int, got True"),
    (_set(7, "puzzles", 0, "id"), "puzzle #1", "'id'", "must be str, got 7"),
    (_set("1", "pieces", "O1", "level"), "piece O1", "'level'", "must be int"),
    (_set(5, "puzzles", 1, "reward"), "puzzle M02", "'reward'", "must be a piece name"),
    (_set("grey", "puzzles", 1, "color"), "puzzle M02", "'color'", "must be white or black, got 'grey'"),
    (_set(-1, "puzzles", 1, "points"), "puzzle M02", "'points'", "must not be negative"),
    (_set([], "puzzles"), None, None, None),  # an empty set is allowed
    (_set({"M01": {}}, "puzzles"), "mini.yaml", "'puzzles'", "must be list"),
    (_set(["#"], "pieces"), "mini.yaml", "'pieces'", "must be dict"),
    (_set(0, "reserve_per_shape"), "mini.yaml", "'reserve_per_shape'", "must be a positive integer, got 0"),
    (_set(3, "extra"), "mini.yaml", "'extra'", "unknown top-level field 'extra'"),
    (_set(1, "puzzles", 0, "rotation"), "puzzle M01", "'rotation'", "unknown field 'rotation'"),
    (_set(1, "pieces", "O1", "colour"), "piece O1", "'colour'", "unknown field 'colour'"),
    (_set("O1", "puzzles", 0), "puzzle #1", None, "must be a mapping"),
    (_set(["#"], "pieces", "O1"), "piece O1", None, "must be a mapping with 'level' and 'shape'"),
    # grids
    (_set([".....", "..x..", "..#..", ".....", "....."], "puzzles", 0, "shape"), "puzzle M01", "'shape'", "row 1 has characters ['x']"),
    (_set(["#o"], "pieces", "I2", "shape"), "piece I2", "'shape'", "row 0 has characters ['o']"),
    (_set([".....", "..#..", "..#..", "....."], "puzzles", 0, "shape"), "puzzle M01", "'shape'", "must be 5 strings of 5 characters"),
    (_set([".....", "..#...", "..#..", ".....", "....."], "puzzles", 0, "shape"), "puzzle M01", "'shape'", "5 strings of 5"),
    (_set(["....."] * 5, "puzzles", 0, "shape"), "puzzle M01", "'shape'", "has no recess cells"),
    (_set("##", "pieces", "I2", "shape"), "piece I2", "'shape'", "must be a list of strings"),
    # pieces
    (_set(3, "pieces", "I2", "level"), "piece I2", "'level'", "is 3 but the shape has 2 cells"),
    (_set({"level": 2, "shape": ["#.", ".#"]}, "pieces", "I2"), "piece I2", "'shape'", "is not one connected piece"),
    (_set({"level": 2, "shape": ["#.#"]}, "pieces", "I2"), "piece I2", "'shape'", "not one connected piece"),
    # ids
    (_set("M01", "puzzles", 1, "id"), "puzzle M01", "'id'", "is used twice"),
])
def test_malformed_card_file_names_file_card_and_field(tmp_path, change, where, field, words):
    path = _write(tmp_path, _with(change))
    if where is None:
        load_card_file(path)
        return
    with pytest.raises(CardDataError) as info:
        load_card_file(path)
    message = str(info.value)
    assert message.startswith("mini.yaml")
    assert where in message
    if field:
        assert field in message
    assert words in message


def test_unknown_reward_names_file_card_and_field(tmp_path):
    cs = load_card_file(_write(tmp_path, _with(_set("Q4", "puzzles", 1, "reward"))))
    with pytest.raises(CardDataError) as info:
        check_rewards([cs])
    assert str(info.value) == "mini.yaml: puzzle M02: field 'reward' names unknown piece 'Q4'"


def test_level_up_rewards_are_allowed(tmp_path):
    check_rewards([load_card_file(_write(tmp_path, _with(_set("+2", "puzzles", 1, "reward"))))])


def test_reward_may_name_a_shape_of_another_loaded_set(tmp_path):
    other = copy.deepcopy(_valid())
    other["set"] = "extra"
    other["pieces"] = {"X5": {"level": 5, "shape": [".#.", "###", ".#."]}}
    other["puzzles"] = []
    mini = _with(_set("X5", "puzzles", 1, "reward"))
    sets = [load_card_file(_write(tmp_path, mini)), load_card_file(_write(tmp_path, other, "extra.yaml"))]
    check_rewards(sets)
    with pytest.raises(CardDataError, match="names unknown piece 'X5'"):
        check_rewards(sets[:1])


@pytest.mark.parametrize("text, words", [
    ("set: [unclosed", "not valid YAML"),
    ("- just\n- a list\n", "the file must be a mapping with 'set', 'pieces' and 'puzzles'"),
    ("", "the file must be a mapping"),
])
def test_unreadable_card_file_is_named(tmp_path, text, words):
    with pytest.raises(CardDataError) as info:
        load_card_file(_write(tmp_path, text))
    assert str(info.value).startswith("mini.yaml") or "mini.yaml" in str(info.value)
    assert words in str(info.value)


def test_missing_card_file_is_named(tmp_path):
    with pytest.raises(CardDataError, match=r"nothere\.yaml: cannot read the card file"):
        load_card_file(tmp_path / "nothere.yaml")

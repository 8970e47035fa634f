"""Placement geometry (bitmasks on the 5x5 grid) and the exact-cover solver."""

from __future__ import annotations

import itertools

import pytest

from engine.cards import card_set
from engine.geometry import FULL, cells_to_mask, geometry_for, mask_to_cells, orientations
from engine.solver import min_cells_needed, solve


@pytest.fixture(scope="module")
def geo():
    return geometry_for(card_set("base").shapes)


def _idx(geo, name):
    return geo.shape_index[name]


# distinct orientations (rotations and reflections) and placements on the 5x5 grid
@pytest.mark.parametrize("name, orients, placements", [
    ("O1", 1, 25), ("I2", 2, 40), ("I3", 2, 30), ("L3", 4, 64), ("I4", 2, 20),
    ("O4", 1, 16), ("T4", 4, 48), ("L4", 8, 96), ("Z4", 4, 48),
])
def test_orientations_and_placements_per_shape(geo, name, orients, placements):
    s = geo.shapes[_idx(geo, name)]
    assert len(orientations(s.cells)) == orients
    assert len(geo.by_shape[_idx(geo, name)]) == placements


def test_every_placement_is_distinct_and_on_the_grid(geo):
    seen = set()
    for pid, (s, m) in enumerate(zip(geo.placement_shape, geo.placement_mask)):
        assert m & ~FULL == 0
        assert bin(m).count("1") == geo.shapes[s].level
        assert (s, m) not in seen
        seen.add((s, m))
        assert geo.lookup[(s, m)] == pid
        assert geo.placement_of(s, mask_to_cells(m)) == pid


def test_orientations_are_normalised_to_the_origin():
    for o in orientations(((0, 0), (1, 0), (1, 1))):
        assert min(r for r, _ in o) == 0 and min(c for _, c in o) == 0
        assert list(o) == sorted(o)


def test_mask_and_cells_round_trip():
    for cells in ([[0, 0]], [[4, 4]], [[2, 1], [3, 1], [3, 2]], [[r, c] for r in range(5) for c in range(5)]):
        assert mask_to_cells(cells_to_mask(cells)) == sorted(cells)
    assert cells_to_mask([[0, 0]]) == 1 and cells_to_mask([[4, 4]]) == 1 << 24
    assert cells_to_mask([[r, c] for r in range(5) for c in range(5)]) == FULL
    assert mask_to_cells(0) == []


def test_placement_of_accepts_every_rotation_and_reflection(geo):
    l3 = _idx(geo, "L3")
    for cells in ([[0, 0], [1, 0], [1, 1]], [[0, 1], [1, 0], [1, 1]], [[0, 0], [0, 1], [1, 0]], [[0, 0], [0, 1], [1, 1]]):
        assert geo.placement_of(l3, cells) is not None
    assert geo.placement_of(l3, [[0, 0], [0, 1], [0, 2]]) is None
    assert geo.placement_of(l3, [[0, 0], [1, 1], [2, 2]]) is None
    assert geo.placement_of(_idx(geo, "I3"), [[0, 0], [0, 1], [0, 2]]) is not None


def test_fits_lists_exactly_the_placements_inside_the_empty_cells(geo):
    empty = cells_to_mask([[1, 1], [1, 2], [2, 1], [2, 2], [3, 1]])
    for s in range(len(geo.shapes)):
        fits = set(geo.fits(s, empty))
        expected = {p for p in geo.by_shape[s] if geo.placement_mask[p] & ~empty == 0}
        assert fits == expected
    assert len(geo.fits(_idx(geo, "O4"), empty)) == 1
    assert len(geo.fits(_idx(geo, "L3"), empty)) == 4 + 1
    assert geo.fits(_idx(geo, "I4"), empty) == ()
    assert len(geo.fits(_idx(geo, "O1"), FULL)) == 25


def test_geometry_is_shared_per_shape_tuple():
    shapes = card_set("base").shapes
    assert geometry_for(shapes) is geometry_for(tuple(shapes))


# ---------------------------------------------------------------- solver
def _counts(geo, **named):
    out = [0] * len(geo.shapes)
    for k, v in named.items():
        out[_idx(geo, k)] = v
    return out


@pytest.mark.parametrize("card, counts, solvable", [
    ("W09", {"I2": 1}, True),
    ("W09", {"O1": 2}, True),
    ("W09", {"O1": 1}, False),
    ("W31", {"O4": 1}, True),
    ("W31", {"I2": 2}, True),
    ("W31", {"L3": 1, "O1": 1}, True),
    ("W31", {"I3": 1, "O1": 1}, False),
    ("W15", {"I3": 1, "I2": 1}, True),
    ("W15", {"I4": 1}, False),
    ("B03", {"O1": 21}, True),
    ("B03", {"L4": 4}, True),
    ("B03", {"L4": 3, "O1": 3}, False),
])
def test_solver_tiles_exactly_within_the_counts(geo, card, counts, solvable):
    puzzle = next(p for p in card_set("base").puzzles if p.id == card)
    c = _counts(geo, **counts)
    result = solve(geo, puzzle.recess, c)
    assert (result is not None) == solvable
    if result is not None:
        covered = 0
        used = [0] * len(geo.shapes)
        for pid in result:
            m = geo.placement_mask[pid]
            assert covered & m == 0
            covered |= m
            used[geo.placement_shape[pid]] += 1
        assert covered == puzzle.recess
        assert all(u <= n for u, n in zip(used, c))
    assert c == _counts(geo, **counts), "the solver must not change the caller's counts"


def test_solver_agrees_with_brute_force_on_small_recesses(geo):
    puzzles = [p for p in card_set("base").puzzles if p.size <= 5]
    pool = ["O1", "I2", "I3", "L3"]
    memo: dict = {}
    for p in puzzles[:8]:
        for combo in itertools.product(range(3), repeat=len(pool)):
            counts = _counts(geo, **dict(zip(pool, combo)))
            found = solve(geo, p.recess, counts, memo) is not None
            assert found == _brute(geo, p.recess, counts)


def _brute(geo, empty, counts):
    if not empty:
        return True
    for s, n in enumerate(counts):
        if n:
            for pid in geo.fits(s, empty):
                if geo.placement_mask[pid] & (empty & -empty):
                    counts[s] -= 1
                    ok = _brute(geo, empty & ~geo.placement_mask[pid], counts)
                    counts[s] += 1
                    if ok:
                        return True
    return False


def test_min_cells_needed_counts_empty_cells():
    assert min_cells_needed(0) == 0 and min_cells_needed(FULL) == 25

"""Exact cover of a puzzle's empty cells by pieces from a multiset of shapes.

Fills the lowest empty cell first with every placement anchored there, so each tiling is
found once; failures are memoised per (empty cells, counts). Used by the built-in bots and
by anyone who wants to know whether (and how) a supply can complete a puzzle.
"""

from __future__ import annotations


def solve(geometry, empty: int, counts: list[int], memo: dict | None = None) -> list[int] | None:
    """Placement ids that tile ``empty`` exactly using at most ``counts[s]`` of each shape,
    or None when no tiling exists."""
    if memo is None:
        memo = {}
    counts = list(counts)
    return _solve(geometry, empty, counts, memo)


def _solve(g, empty, counts, memo):
    if not empty:
        return []
    key = (empty, tuple(counts))
    if key in memo:
        return None
    cell = (empty & -empty).bit_length() - 1
    masks = g.placement_mask
    for s, n in enumerate(counts):
        if not n:
            continue
        for pid in g.anchor[s][cell]:
            m = masks[pid]
            if m & empty == m:
                counts[s] -= 1
                rest = _solve(g, empty & ~m, counts, memo)
                counts[s] += 1
                if rest is not None:
                    return [pid] + rest
    memo[key] = True
    return None


def min_cells_needed(empty: int) -> int:
    """How many cells are still empty."""
    return bin(empty).count("1")

"""Placement geometry: every placement of every shape on the 5x5 grid, as bitmasks.

Cell ``(row, col)`` is bit ``row * 5 + col``. A *placement* is one shape in one rotation or
reflection at one position; duplicates (symmetric orientations) are removed. Placements
are numbered once per set of shapes; legality of a placement on a puzzle is a mask test,
and the placements that fit a given set of empty cells are cached by (shape, empty mask).
"""

from __future__ import annotations

from functools import lru_cache

from .cards import GRID, Shape

FULL = (1 << (GRID * GRID)) - 1


def orientations(cells) -> list[tuple[tuple[int, int], ...]]:
    """All distinct rotations and reflections of ``cells``, each normalised to the origin."""
    seen = []
    pts = list(cells)
    for flip in (False, True):
        cur = [(r, -c) for r, c in pts] if flip else pts
        for _ in range(4):
            cur = [(c, -r) for r, c in cur]
            mr = min(r for r, _ in cur)
            mc = min(c for _, c in cur)
            norm = tuple(sorted((r - mr, c - mc) for r, c in cur))
            if norm not in seen:
                seen.append(norm)
    return seen


def cells_to_mask(cells) -> int:
    """Bitmask of ``(row, col)`` cells (assumed on the grid)."""
    m = 0
    for r, c in cells:
        m |= 1 << (r * GRID + c)
    return m


def mask_to_cells(mask: int) -> list[list[int]]:
    """``[[row, col], ...]`` of the set bits of ``mask``, in row-major order."""
    out = []
    i = 0
    while mask:
        if mask & 1:
            out.append([i // GRID, i % GRID])
        mask >>= 1
        i += 1
    return out


class Geometry:
    """Placements of a fixed tuple of shapes; shape ``i`` is ``shapes[i]``."""

    def __init__(self, shapes: tuple[Shape, ...]):
        self.shapes = shapes
        self.shape_index = {s.name: i for i, s in enumerate(shapes)}
        self.placement_shape: list[int] = []
        self.placement_mask: list[int] = []
        self.by_shape: list[tuple[int, ...]] = []
        self.lookup: dict[tuple[int, int], int] = {}
        for si, shape in enumerate(shapes):
            ids = []
            for orient in orientations(shape.cells):
                h = max(r for r, _ in orient) + 1
                w = max(c for _, c in orient) + 1
                for dr in range(GRID - h + 1):
                    for dc in range(GRID - w + 1):
                        mask = cells_to_mask((r + dr, c + dc) for r, c in orient)
                        pid = len(self.placement_mask)
                        self.placement_shape.append(si)
                        self.placement_mask.append(mask)
                        self.lookup[(si, mask)] = pid
                        ids.append(pid)
            self.by_shape.append(tuple(ids))
        # anchor[s][cell]: placements of shape s whose lowest cell is ``cell`` (for solvers
        # that always fill the lowest empty cell first).
        self.anchor: list[list[tuple[int, ...]]] = []
        for ids in self.by_shape:
            table: list[list[int]] = [[] for _ in range(GRID * GRID)]
            for pid in ids:
                m = self.placement_mask[pid]
                table[(m & -m).bit_length() - 1].append(pid)
            self.anchor.append([tuple(t) for t in table])
        self._fits: dict[tuple[int, int], tuple[int, ...]] = {}
        #: each placement's cells, row-major, as ``((row, col), ...)``: for JSON, where
        #: ``list(map(list, cells))`` gives :func:`mask_to_cells`'s lists without the loop
        self.placement_cells: list[tuple[tuple[int, int], ...]] = [
            tuple(map(tuple, mask_to_cells(m))) for m in self.placement_mask]

    def cells_of(self, pid: int) -> list[list[int]]:
        """``mask_to_cells(placement_mask[pid])``, a new list each call."""
        return list(map(list, self.placement_cells[pid]))

    def fits(self, shape: int, empty: int) -> tuple[int, ...]:
        """Placement ids of ``shape`` that lie entirely within the ``empty`` cells."""
        key = (shape, empty)
        hit = self._fits.get(key)
        if hit is None:
            pm = self.placement_mask
            hit = tuple(p for p in self.by_shape[shape] if pm[p] & empty == pm[p])
            self._fits[key] = hit
        return hit

    def placement_of(self, shape: int, cells) -> int | None:
        """The placement id of ``shape`` covering exactly ``cells``, or None."""
        return self.lookup.get((shape, cells_to_mask(cells)))


@lru_cache(maxsize=None)
def geometry_for(shapes: tuple[Shape, ...]) -> Geometry:
    """One shared :class:`Geometry` per tuple of shapes."""
    return Geometry(shapes)

"""Card data: piece shapes and puzzle cards, loaded from YAML and validated on load.

The card files live in ``engine/cards/``: ``base.yaml`` (the published game's 9 shapes
and 52 puzzles) and ``ghost.yaml`` (the Ghost Piece expansion, stand-in data). A malformed
file raises :class:`~engine.errors.CardDataError` naming the file, the card and the field.

Each packaged file has a JSON twin (``base.json``) holding the same data and the SHA-256 of
the YAML text it was made from: every process that plays (a bot process, a worker) reads
the twin, which takes a millisecond where importing PyYAML and reading the YAML took
twenty. A twin whose hash is not the YAML's is ignored (the YAML is the source; after
editing it, ``python tools/card_twins.py`` writes the twins again, and a test fails until then).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from .errors import CardDataError

CARD_DIR = Path(__file__).parent / "cards"
GRID = 5
COLORS = ("white", "black")


@dataclass(frozen=True)
class Shape:
    """A piece shape: its name (``L3``), level (number of cells) and cells at the origin."""

    name: str
    level: int
    cells: tuple[tuple[int, int], ...]
    ghost: bool = False


@dataclass(frozen=True)
class Puzzle:
    """A puzzle card: id, colour, points, reward and the recess as a 25-bit mask.

    ``reward`` is a shape name, or ``"+1"``/``"+2"`` for a level-up reward (R11.3).
    """

    id: str
    color: str
    points: int
    reward: str
    recess: int
    rows: tuple[str, ...]

    @property
    def size(self) -> int:
        """Number of recess cells."""
        return bin(self.recess).count("1")


@dataclass(frozen=True)
class CardSet:
    """One card file: its name, shapes and puzzles, in file order."""

    name: str
    shapes: tuple[Shape, ...]
    puzzles: tuple[Puzzle, ...]
    reserve_per_shape: int
    source: str = ""


def _grid_cells(rows, where: str) -> list[tuple[int, int]]:
    if not isinstance(rows, list) or not rows or not all(isinstance(r, str) for r in rows):
        raise CardDataError(f"{where}: field 'shape' must be a list of strings of '#' and '.'")
    cells = []
    for r, row in enumerate(rows):
        bad = set(row) - {"#", "."}
        if bad:
            raise CardDataError(f"{where}: field 'shape' row {r} has characters {sorted(bad)}; only '#' and '.' are allowed")
        cells.extend((r, c) for c, ch in enumerate(row) if ch == "#")
    return cells


def _require(entry: dict, field: str, kind, where: str):
    if field not in entry:
        raise CardDataError(f"{where}: missing field '{field}'")
    value = entry[field]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise CardDataError(f"{where}: field '{field}' must be {getattr(kind, '__name__', kind)}, got {value!r}")
    return value


def parse_card_set(data, source: str) -> CardSet:
    """Validate the parsed YAML ``data`` of a card file named ``source``."""
    if not isinstance(data, dict):
        raise CardDataError(f"{source}: the file must be a mapping with 'set', 'pieces' and 'puzzles'")
    for key in data:
        if key not in ("set", "reserve_per_shape", "pieces", "puzzles"):
            raise CardDataError(f"{source}: unknown top-level field '{key}'")
    name = _require(data, "set", str, source)
    reserve = data.get("reserve_per_shape", 10)
    if not isinstance(reserve, int) or isinstance(reserve, bool) or reserve < 1:
        raise CardDataError(f"{source}: field 'reserve_per_shape' must be a positive integer, got {reserve!r}")
    pieces = _require(data, "pieces", dict, source)
    shapes = []
    for pname, entry in pieces.items():
        where = f"{source}: piece {pname}"
        if not isinstance(entry, dict):
            raise CardDataError(f"{where}: must be a mapping with 'level' and 'shape'")
        unknown = set(entry) - {"level", "shape", "ghost"}
        if unknown:
            raise CardDataError(f"{where}: unknown field '{sorted(unknown)[0]}'")
        level = _require(entry, "level", int, where)
        cells = _grid_cells(entry.get("shape"), where)
        if len(cells) != level:
            raise CardDataError(f"{where}: field 'level' is {level} but the shape has {len(cells)} cells")
        if not _connected(cells):
            raise CardDataError(f"{where}: field 'shape' is not one connected piece")
        shapes.append(Shape(str(pname), level, tuple(cells), bool(entry.get("ghost", False))))
    puzzles = []
    seen = set()
    raw = _require(data, "puzzles", list, source)
    for i, entry in enumerate(raw):
        where = f"{source}: puzzle #{i + 1}"
        if not isinstance(entry, dict):
            raise CardDataError(f"{where}: must be a mapping")
        pid = _require(entry, "id", str, where)
        where = f"{source}: puzzle {pid}"
        unknown = set(entry) - {"id", "color", "points", "reward", "shape"}
        if unknown:
            raise CardDataError(f"{where}: unknown field '{sorted(unknown)[0]}'")
        if pid in seen:
            raise CardDataError(f"{where}: field 'id' is used twice")
        seen.add(pid)
        color = _require(entry, "color", str, where)
        if color not in COLORS:
            raise CardDataError(f"{where}: field 'color' must be white or black, got {color!r}")
        points = _require(entry, "points", int, where)
        if points < 0:
            raise CardDataError(f"{where}: field 'points' must not be negative")
        reward = entry.get("reward")
        if not isinstance(reward, str):
            raise CardDataError(f"{where}: field 'reward' must be a piece name or '+1'/'+2'")
        rows = entry.get("shape")
        if not isinstance(rows, list) or len(rows) != GRID or any(not isinstance(r, str) or len(r) != GRID for r in rows):
            raise CardDataError(f"{where}: field 'shape' must be {GRID} strings of {GRID} characters")
        cells = _grid_cells(rows, where)
        if not cells:
            raise CardDataError(f"{where}: field 'shape' has no recess cells")
        mask = 0
        for r, c in cells:
            mask |= 1 << (r * GRID + c)
        puzzles.append(Puzzle(pid, color, points, reward, mask, tuple(rows)))
    return CardSet(name, tuple(shapes), tuple(puzzles), reserve, source)


def check_rewards(sets: Iterable[CardSet]) -> None:
    """Every reward must name a shape of the loaded sets (or be a level-up ``+1``/``+2``)."""
    sets = list(sets)
    names = {s.name for cs in sets for s in cs.shapes}
    for cs in sets:
        for p in cs.puzzles:
            if p.reward not in names and p.reward not in ("+1", "+2"):
                raise CardDataError(f"{cs.source or cs.name}: puzzle {p.id}: field 'reward' names unknown piece {p.reward!r}")


def _connected(cells) -> bool:
    cells = set(cells)
    if not cells:
        return False
    todo = [next(iter(cells))]
    seen = set(todo)
    while todo:
        r, c = todo.pop()
        for n in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if n in cells and n not in seen:
                seen.add(n)
                todo.append(n)
    return len(seen) == len(cells)


def load_card_file(path: str | Path) -> CardSet:
    """Load and validate one card file (through its JSON twin when that is current)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CardDataError(f"{path}: cannot read the card file ({exc.strerror})") from None
    data = _twin_data(path, raw)
    if data is None:
        data = _yaml_data(path, raw)
    return parse_card_set(data, path.name)


def _yaml_data(path: Path, raw: bytes):
    """The YAML's data, read with libyaml's safe loader when PyYAML has it (the pure-Python
    loader takes 175 ms for the base cards against 20 ms; the same result)."""
    import yaml  # only where a twin is missing or stale: the import alone takes 15 ms

    try:
        return yaml.load(raw.decode("utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except UnicodeDecodeError as exc:
        raise CardDataError(f"{path}: not UTF-8 text ({exc.reason})") from None
    except yaml.YAMLError as exc:
        raise CardDataError(f"{path}: not valid YAML ({exc})") from None


def _twin_data(path: Path, raw: bytes):
    """The data of ``path``'s JSON twin, if it was made from exactly these bytes; else None."""
    import hashlib
    import json

    try:
        twin = json.loads(path.with_suffix(".json").read_bytes())
    except (OSError, ValueError):
        return None
    if type(twin) is not dict or twin.get("source_sha256") != hashlib.sha256(raw).hexdigest():
        return None
    return twin.get("data")


def write_json_twin(path: str | Path) -> Path:
    """Write the JSON twin of the card file ``path`` (its data and the YAML's SHA-256)."""
    import hashlib
    import json

    path = Path(path)
    raw = path.read_bytes()
    data = _yaml_data(path, raw)
    parse_card_set(data, path.name)  # a twin is only written for a valid file
    twin = path.with_suffix(".json")
    twin.write_text(json.dumps({"source": path.name, "source_sha256": hashlib.sha256(raw).hexdigest(),
                                "data": data}, indent=1) + "\n", encoding="utf-8")
    return twin


@lru_cache(maxsize=None)
def card_set(name: str) -> CardSet:
    """The packaged card set ``name`` (``base`` or ``ghost``), loaded once."""
    path = CARD_DIR / f"{name}.yaml"
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in CARD_DIR.glob("*.yaml")))
        raise CardDataError(f"no card set named {name!r} (known: {known})")
    return load_card_file(path)


def write_json_twins() -> list[Path]:
    """Write the JSON twin of every packaged card file (``python tools/card_twins.py``)."""
    return [write_json_twin(path) for path in sorted(CARD_DIR.glob("*.yaml"))]

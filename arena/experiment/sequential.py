"""Sequential stopping (``until:``) and search (``target:``): play in rounds until the answer is known.

Both name a *figure* of a game (``seat_wins`` of a seat, ``rounds``, ``score``,
``adjudicated``, ``puzzles``), measured per seat-rotated group (the mean of the group's
games: the group, not the game, is the independent unit). After every round of ``round``
groups each open rule set's figure gets an **anytime-valid** interval -- a confidence
sequence, which holds at every look at once -- so stopping the moment it answers the
question keeps the stated error rate (:mod:`engine.stats`): the betting sequence of
Waudby-Smith & Ramdas on the figure's bounds, which the rules give (:func:`bounds`): a
share lies in [0, 1], rounds in [1, max_rounds + 1], the mean score between the most a
player can lose and the deal's points shared out, puzzles completed between none and the
whole deal; a paired difference between the one rule set's least minus the other's most
and back. Its guarantee holds for every distribution on those bounds, so a figure that
comes out the same in every group so far still has an interval of some width -- a
different value may be rare, not impossible. A figure whose bounds the rules do not give
(a variant that ends the game itself, or a score penalty that does not say its largest
value) is refused when the file is read.

A variant says what the host cannot know: a function of ``ruleset.score_penalties`` gives
its largest penalty as ``fn.most(ruleset)`` (a penalty is at least 0), a
``ruleset.end_check`` the most rounds a game lasts as ``fn.most_rounds(ruleset)``.

``until:`` -- one stopping rule per rule set:

- ``width: W``: stop once the interval is at most ``W`` wide (the precision wanted);
- ``against: reference``: the paired difference (each group minus the same group under the
  first rule set), stopped once the interval excludes 0 (a difference, either sign) or,
  with ``margin: M``, lies within ``±M`` (no difference that matters). The reference plays
  as long as a rule set compared with it does.

``target:`` -- a search over the sweep's cells (one or two parameters) for the values
whose figure meets a wanted value (``value: V, within: D`` or ``range: [lo, hi]``). A
candidate is **met** when its interval lies inside the range, **ruled out** when its
interval lies wholly outside it, and open otherwise; only open candidates play. Every
candidate's interval is at level ``alpha / K`` (K candidates, Bonferroni), so all the
conclusions hold together with probability ``1 - alpha``. ``strategy: race`` plays every
open candidate each round (successive elimination); ``strategy: bisect`` (one ordered
parameter, ``monotone: increasing`` or ``decreasing``) plays the middle candidate of each
run of open candidates -- a noisy bisection -- and a candidate found above (below) the
range rules out every value beyond it, so games go where the answer is still open.

Every rule set stops at ``max_games`` at the latest (the file's ``games`` by default).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine import compile_rules
from engine.stats import betting_interval, seats_of, win_share

from ..tournament.yamlsource import Source

UNTIL_KEYS = ("figure", "seat", "width", "against", "margin", "max_games", "round", "confidence")
TARGET_KEYS = ("figure", "seat", "value", "within", "range", "max_games", "round", "confidence", "strategy", "monotone")


def _score(r: dict) -> float:
    n = seats_of(r)
    return sum(r[f"seat{s}_score"] for s in range(n)) / n


def _puzzles(r: dict) -> float:
    return sum(r[f"seat{s}_white"] + r[f"seat{s}_black"] for s in range(seats_of(r)))


class NoBounds(Exception):
    """The rules do not bound a figure; the message says why."""


def _rounds_bounds(rules, seats: int) -> tuple[float, float]:
    # R5.3: adjudicated after max_rounds; an end triggered in that round plays one more
    if rules.end_check is not None:
        most = getattr(rules.end_check, "most_rounds", None)
        if most is None:
            raise NoBounds("a variant ends the game itself and does not say after how many rounds at most "
                           "(its end_check has no most_rounds)")
        return 1.0, float(most(rules))
    return 1.0, float(rules.max_rounds + 1)


def _top(values, k: int) -> int:
    return sum(sorted(values, reverse=True)[:max(k, 0)])


def deal_points(rules) -> int:
    """The most points a deal holds: every white puzzle and the best ``black_deck_size`` blacks."""
    white = [p.points for p in rules.puzzles if p.color == "white"]
    black = [p.points for p in rules.puzzles if p.color != "white"]
    return _top(white, rules.deck_sizes[0]) + _top(black, rules.deck_sizes[1])


def _score_bounds(rules, seats: int) -> tuple[float, float]:
    # R7.1: completed points - finishing-touch pieces x cost - the rule set's penalties (each
    # in [0, most]). A puzzle is completed by one player, so the players' mean is at most the
    # deal's points shared out; a player places at most one piece per recess cell of the
    # max_unfinished puzzles it may hold (R3.1) in its finishing touches.
    most = 0
    for penalty in rules.score_penalties:
        bound = getattr(penalty, "most", None)
        if bound is None:
            raise NoBounds(f"a variant's score penalty ({getattr(penalty, '__qualname__', penalty)}) does not say its "
                           f"largest value (no most)")
        most += bound(rules)
    cells = [bin(r).count("1") for r in rules.recess]
    finish = rules.finishing_touch_cost * _top(cells, rules.max_unfinished)
    return float(-finish - most), deal_points(rules) / seats


def _puzzles_bounds(rules, seats: int) -> tuple[float, float]:
    return 0.0, float(sum(rules.deck_sizes))


#: figure name -> (per-game value given (row, seat), bounds given (rules, seats), description)
FIGURES = {
    "seat_wins": (lambda r, s: win_share(r, s), lambda rules, n: (0.0, 1.0), "seat {seat}'s win share"),
    "adjudicated": (lambda r, s: float(bool(r["adjudicated"])), lambda rules, n: (0.0, 1.0), "share of games adjudicated"),
    "rounds": (lambda r, s: float(r["rounds"]), _rounds_bounds, "rounds per game"),
    "score": (lambda r, s: _score(r), _score_bounds, "mean score per player"),
    "puzzles": (lambda r, s: _puzzles(r), _puzzles_bounds, "puzzles completed per game"),
}


@dataclass(frozen=True)
class StopRule:
    """A validated ``until:`` or ``target:``: what to measure and when a rule set stops."""

    kind: str                      # "until" or "target"
    figure: str
    seat: int = 0
    width: float | None = None
    against: bool = False
    margin: float = 0.0
    low: float | None = None       # target range
    high: float | None = None
    max_games: int = 0
    round: int = 8                 # groups per round
    confidence: float = 0.95
    strategy: str = "race"
    monotone: str | None = None

    @property
    def alpha(self) -> float:
        """The error rate allowed (of each rule set's interval, before any Bonferroni share)."""
        return 1.0 - self.confidence

    def describe(self) -> str:
        """The figure in words."""
        return FIGURES[self.figure][2].format(seat=self.seat) + (" minus the reference's" if self.against else "")

    def to_json(self) -> dict:
        """Plain data, for the summary."""
        return {k: v for k, v in self.__dict__.items() if v is not None}


def _number(src: Source, path: tuple, v, low=None, high=None, what="a number") -> float:
    if isinstance(v, float) and not math.isfinite(v):
        raise src.error(path, f"expected a finite {what.removeprefix('a ')}, got {v!r}")
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (low is not None and v <= low) \
            or (high is not None and v >= high):
        bound = "" if low is None else f" above {low}" + ("" if high is None else f" and below {high}")
        raise src.error(path, f"expected {what}{bound}, got {v!r}")
    return float(v)


def _common(src: Source, key: str, value, known: tuple, seats: int, games: int | None) -> dict:
    if not isinstance(value, dict):
        raise src.error((key,), "expected a mapping, e.g. {figure: seat_wins, width: 0.04}")
    for k in value:
        if k not in known:
            raise src.error((key, k), f"unknown key (known keys: {', '.join(known)})")
    figure = value.get("figure")
    if figure not in FIGURES:
        raise src.error((key, "figure"), f"unknown figure {figure!r} (figures: {', '.join(FIGURES)})")
    seat = value.get("seat", 0)
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < seats:
        raise src.error((key, "seat"), f"expected a seat from 0 to {seats - 1}, got {seat!r}")
    cap = value.get("max_games", games)
    if cap is None:
        raise src.error((key,), "give 'max_games' (the most games a rule set may play) or the file's 'games'")
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
        raise src.error((key, "max_games"), f"expected a whole number of games >= 1, got {cap!r}")
    rnd = value.get("round", 8)
    if isinstance(rnd, bool) or not isinstance(rnd, int) or rnd < 1:
        raise src.error((key, "round"), f"expected a whole number of groups per round >= 1, got {rnd!r}")
    conf = _number(src, (key, "confidence"), value.get("confidence", 0.95), 0.5, 1.0, "a confidence")
    return {"figure": figure, "seat": seat, "max_games": cap, "round": rnd, "confidence": conf}


def parse_until(src: Source, value, seats: int, games: int | None) -> StopRule:
    """``until:`` validated; errors name the file, line and field."""
    common = _common(src, "until", value, UNTIL_KEYS, seats, games)
    against = value.get("against")
    if against not in (None, "reference"):
        raise src.error(("until", "against"), f"expected 'reference' (the first rule set), got {against!r}")
    width = value.get("width")
    if width is not None:
        width = _number(src, ("until", "width"), width, 0.0)
    margin = _number(src, ("until", "margin"), value["margin"], 0.0) if "margin" in value else 0.0
    if width is None and against is None:
        raise src.error(("until",), "say when to stop: 'width: W' (an interval this narrow) or 'against: reference' "
                                    "(a paired difference decided)")
    return StopRule("until", width=width, against=against is not None, margin=margin, **common)


def parse_target(src: Source, value, seats: int, games: int | None, axes) -> StopRule:
    """``target:`` validated against the sweep's axes; errors name the file, line and field."""
    common = _common(src, "target", value, TARGET_KEYS, seats, games)
    if not axes:
        raise src.error(("target",), "a search needs a 'sweep:' of one or two parameters: the values to try")
    if len(axes) > 2:
        raise src.error(("sweep",), f"a search runs over one or two parameters, not {len(axes)}")
    if "range" in value:
        rng = value["range"]
        if not (isinstance(rng, list) and len(rng) == 2):
            raise src.error(("target", "range"), "expected [low, high]")
        lo = _number(src, ("target", "range", 0), rng[0])
        hi = _number(src, ("target", "range", 1), rng[1])
        if hi < lo:
            raise src.error(("target", "range"), f"the range ends ({hi}) before it starts ({lo})")
    elif "value" in value:
        v = _number(src, ("target", "value"), value["value"])
        d = _number(src, ("target", "within"), value.get("within", 0.0), -1e-300) if "within" in value else None
        if d is None:
            raise src.error(("target",), "give 'within: D' with 'value' (the tolerance), or 'range: [low, high]'")
        lo, hi = v - d, v + d
    else:
        raise src.error(("target",), "say what is wanted: 'value: V' with 'within: D', or 'range: [low, high]'")
    strategy = value.get("strategy", "race")
    if strategy not in ("race", "bisect"):
        raise src.error(("target", "strategy"), f"expected race or bisect, got {strategy!r}")
    monotone = value.get("monotone")
    if monotone not in (None, "increasing", "decreasing"):
        raise src.error(("target", "monotone"), f"expected increasing or decreasing, got {monotone!r}")
    if strategy == "bisect" and (len(axes) != 1 or monotone is None):
        raise src.error(("target", "strategy"), "bisect needs one swept parameter and 'monotone: increasing' or "
                                                "'monotone: decreasing'")
    if monotone and len(axes) != 1:
        raise src.error(("target", "monotone"), "monotone applies to a search over one parameter")
    return StopRule("target", low=lo, high=hi, strategy=strategy, monotone=monotone, **common)


# ---------------------------------------------------------------- measuring
def bounds(rule: StopRule, spec, seats: int, reference=None) -> tuple[float, float]:
    """The figure's bounds under ``spec`` (:class:`NoBounds` when the rules give none); for a
    paired difference, the bounds of ``spec``'s figure minus ``reference``'s."""
    fn = FIGURES[rule.figure][1]
    lo, hi = fn(compile_rules(spec, seats), seats)
    if not rule.against:
        return lo, hi
    ref_lo, ref_hi = fn(compile_rules(reference if reference is not None else spec, seats), seats)
    return lo - ref_hi, hi - ref_lo


def check_bounds(src: Source, rule: StopRule, rule_sets, seats: int) -> None:
    """Refuse a figure the rules of some rule set do not bound (naming the rule set and why)."""
    key = rule.kind
    for rs in rule_sets:
        try:
            lo, hi = bounds(rule, rs.spec, seats, rule_sets[0].spec if rule.against else None)
        except NoBounds as exc:
            raise src.error((key, "figure"), f"the {rule.describe()} has no bounds under rule set {rs.name!r}: {exc}; "
                                             f"an anytime-valid interval needs them") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise src.error((key, "figure"), f"the {rule.describe()} has no range under rule set {rs.name!r} "
                                             f"(bounds {lo:g} and {hi:g})")


def group_values(rule: StopRule, rows: list[dict], ref_rows: list[dict] | None, groups: int) -> list[float]:
    """The figure of each of the first ``groups`` groups (mean of its games; paired with the
    reference's game of the same group and rotation when the rule compares)."""
    value = FIGURES[rule.figure][0]
    by_group: dict[int, list[float]] = {}
    ref = {(r["group"], r["rotation"]): r for r in ref_rows or ()}
    for r in rows:
        if r["group"] >= groups:
            continue
        v = value(r, rule.seat)
        if rule.against:
            b = ref.get((r["group"], r["rotation"]))
            if b is None:
                continue
            v -= value(b, rule.seat)
        by_group.setdefault(r["group"], []).append(v)
    return [sum(vs) / len(vs) for g, vs in sorted(by_group.items())]


def interval(values: list[float], bound: tuple[float, float], alpha: float) -> dict:
    """The anytime-valid interval of the figure after these groups: the betting confidence
    sequence on the figure's bounds."""
    return betting_interval(values, bound[0], bound[1], alpha)


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def verdict(rule: StopRule, ci: dict, at_cap: bool) -> tuple[str, str] | None:
    """``(state, reason)`` once the rule set's answer is known or its cap reached, else None.

    States: ``narrow`` (width reached), ``differs``, ``same`` (within the margin), ``met``,
    ``above``, ``below``, ``cap`` (the cap reached undecided).
    """
    lo, hi = ci["low"], ci["high"]
    if lo is not None and hi is not None and ci["n"] >= 1 and math.isfinite(hi - lo):
        span = f"[{_fmt(lo)}, {_fmt(hi)}]"
        if rule.kind == "until":
            if rule.width is not None and hi - lo <= rule.width:
                return "narrow", f"interval {span} is {_fmt(hi - lo)} wide, at most {_fmt(rule.width)}"
            if rule.against and rule.width is None:
                if lo > 0 or hi < 0:
                    return "differs", f"difference {span} excludes 0"
                if rule.margin > 0 and -rule.margin < lo and hi < rule.margin:
                    return "same", f"difference {span} lies within ±{_fmt(rule.margin)}"
        else:
            if rule.low <= lo and hi <= rule.high:
                return "met", f"interval {span} lies within the target [{_fmt(rule.low)}, {_fmt(rule.high)}]"
            if lo > rule.high:
                return "above", f"interval {span} lies above the target's {_fmt(rule.high)}"
            if hi < rule.low:
                return "below", f"interval {span} lies below the target's {_fmt(rule.low)}"
    if at_cap:
        what = "" if lo is None else f" with interval [{_fmt(lo)}, {_fmt(hi)}]"
        return "cap", f"undecided at the cap of {rule.max_games} games{what}"
    return None

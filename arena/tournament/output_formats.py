"""The live lines of ``arena match`` and ``arena run`` in the words of fastchess and
cutechess-cli (``--output-format fastchess|cutechess``), so a script or dashboard written
for their output reads ours unchanged.

Each format prints what its program prints, with the same spacing, decimals and formulas
(fastchess's ``output_fastchess.hpp`` and ``elo_wdl.cpp``/``elo_pentanomial.cpp``;
cutechess-cli's ``enginematch.cpp``, ``tournament.cpp`` and ``elo.cpp``):

- both: ``Started game N of M (A vs B)`` when a game is handed to a worker and
  ``Finished game N (A vs B): 1-0 {reason}`` when it is stored, ``N`` the game's place in
  the schedule;
- fastchess: every ``--report-every`` pairs (and at the end) the block between dashes --
  ``Results of A vs B (tc, threads, hash, book):``, ``Elo: ..., nElo: ...``,
  ``LOS: ..., DrawRatio: ..., PairsRatio: ...``, ``Games: ..., Points: ...``,
  ``Ptnml(0-2): [..], WL/DD Ratio: ..`` and ``LLR: 2.95 (100.3%) (-2.94, 2.94) [0.00, 10.00]``
  -- counting finished pairs only, as fastchess does (so ``Games`` is twice the
  pentanomial's sum); with ``--noswap`` the W/D/L figures and no ``Ptnml``; with more than
  two bots its ranking table; at the end ``Tournament finished`` or ``SPRT ([0.00, 10.00])
  completed - H1 was accepted``;
- cutechess: ``Score of A vs B: W - L - D  [0.500] N`` after every game, and every
  ``--report-every`` games (and at the end) the per-side lines, ``Elo difference: x +/- y,
  LOS: z %, DrawRatio: d %`` and ``SPRT: llr ..., lbound ..., ubound ...`` (its ranking table
  with more than two bots), then ``Finished match``.

How a Project L game becomes a chess result: at two seats the first seat is "White"; a win
is a better rank (R7), a draw equal ranks. The LLR printed is the match's own (the one that
stops it, :mod:`arena.tournament.sprt`). At three or four seats a game counts as one
result between every two of its seats (the better rank wins), and the game's result is
written ``places 1 3 2``; the pentanomial is left out there.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .chess_elo import CutechessElo, FastchessElo, Stats, f64 as _f, fmt_double as _c

FORMATS = ("arena", "fastchess", "cutechess")
DASHES = "-" * 50


def _outcome(a: int, b: int) -> str:
    """W, L or D of the seat ranked ``a`` against the seat ranked ``b`` (lower is better)."""
    return "W" if a < b else "L" if a > b else "D"


def verbose_end(game: dict) -> str:
    """The braces of a finished game, in cutechess's words where a fault ended it
    (``random loses on time``, ``random disconnects``), else how it ended."""
    faults = game.get("faults") or []
    if faults:
        f = faults[0]
        how = {"timeout": "loses on time", "crash": "disconnects", "memory_limit": "disconnects",
               "output_limit": "disconnects", "illegal": "makes an illegal move",
               "illegal_action": "makes an illegal move"}.get(f.get("verdict"), f"faults ({f.get('verdict')})")
        return f"{f.get('bot')} {how}"
    return game.get("reason") or "game over"


class EngineOutput:
    """The live lines of one format for one run: :meth:`started`, :meth:`finished`,
    :meth:`interval` and :meth:`final` return the lines to print."""

    def __init__(self, cfg, fmt: str, games: list[dict] | None = None):
        self.cfg, self.fmt = cfg, fmt
        self.order = [b.name for b in cfg.bots]
        self.games: list[dict] = list(games or [])
        self.finished_count = 0
        self.pairs_done = 0

    # ----------------------------------------------------------------- numbering
    def number(self, task) -> int:
        """The game's place in the schedule, from 1 (fastchess's and cutechess's game id)."""
        return task.group * self.cfg.rotations + task.rotation + 1

    def total(self) -> int:
        from .schedule import total_games

        return total_games(self.cfg)

    # ---------------------------------------------------------------- game lines
    def started(self, task) -> list[str]:
        return [f"Started game {self.number(task)} of {self.total()} ({' vs '.join(task.bots)})"]

    def finished(self, task, game: dict) -> list[str]:
        """``game``: the game as :class:`arena.tournament.tally.Tally` keeps it, with its faults."""
        self.games.append(game)
        self.finished_count += 1
        ranks = [x["rank"] for x in game["seats"]]
        if len(ranks) == 2:
            result = {"W": "1-0", "L": "0-1", "D": "1/2-1/2"}[_outcome(ranks[0], ranks[1])]
        else:
            result = "places " + " ".join(map(str, ranks))
        lines = [f"Finished game {self.number(task)} ({' vs '.join(task.bots)}): {result} {{{verbose_end(game)}}}"]
        if self.fmt == "cutechess" and len(self.order) == 2 and self.cfg.seats == 2:
            a, b = self.order
            s = self._stats(a, b, pairs_only=False)
            score = CutechessElo(s.wins, s.losses, s.draws).point_ratio()
            lines.append(f"Score of {a} vs {b}: {s.wins} - {s.losses} - {s.draws}  [{score:.3f}] {s.games}")
        return lines

    def due(self, every: int) -> bool:
        """Whether the interval block is due after the game just finished: every ``every``
        games (cutechess), or every ``every`` finished pairs (fastchess, as its rating
        interval counts pairs)."""
        if self.fmt == "fastchess" and self.paired:
            done = self._complete_groups()
            if done > self.pairs_done and done % every == 0:
                self.pairs_done = done
                return True
            return False
        return self.finished_count % every == 0

    @property
    def paired(self) -> bool:
        return self.cfg.seats == 2 and self.cfg.rotations == 2

    def _complete_groups(self) -> int:
        per: dict[int, int] = {}
        for g in self.games:
            per[g["group"]] = per.get(g["group"], 0) + 1
        return sum(1 for n in per.values() if n == self.cfg.rotations)

    # -------------------------------------------------------------------- stats
    def _stats(self, a: str, b: str | None, pairs_only: bool) -> Stats:
        """``a``'s results against ``b`` (every other bot if None); ``pairs_only``: finished
        pairs only, with the pentanomial (fastchess commits a pair when both games end)."""
        out = Stats()
        groups: dict[tuple, list[str]] = {}
        for g in self.games:
            seats = g["seats"]
            me = [x for x in seats if x["bot"] == a]
            if not me:
                continue
            for x in me:
                for y in seats:
                    if y is x or y["bot"] == a or (b is not None and y["bot"] != b):
                        continue
                    r = _outcome(x["rank"], y["rank"])
                    if pairs_only and self.paired:
                        groups.setdefault((g["group"], y["bot"]), []).append(r)
                    else:
                        out.add_game(r)
        for results in groups.values():
            if len(results) == 2:
                out.add_pair(results)
        return out

    # ----------------------------------------------------------------- blocks
    def interval(self) -> list[str]:
        """The block printed every ``--report-every`` games and at the end."""
        return self._fastchess_block() if self.fmt == "fastchess" else self._cutechess_block()

    def final(self, decision: str | None) -> list[str]:
        """The last line: how the tournament ended."""
        if self.fmt == "cutechess":
            return ["Finished match"]
        if decision:
            return [f"SPRT ({self._elo_bounds()}) completed - {decision} was accepted"]
        return ["Tournament finished"]

    def _sprt(self) -> dict | None:
        if self.cfg.format != "sprt":
            return None
        from .sprt import SPRT, group_scores

        o = self.cfg.format_options
        return SPRT.of(o, self.cfg.rotations).status(
            group_scores(self.games, o["candidate"], self.cfg.seats, self.cfg.rotations))

    def _elo_bounds(self) -> str:
        o = self.cfg.format_options
        return f"[{o['elo0']:.2f}, {o['elo1']:.2f}]"

    def _head_to_head(self) -> tuple[str, str] | None:
        if len(self.order) == 2:
            return self.order[0], self.order[1]
        if self.cfg.format == "sprt":
            o = self.cfg.format_options
            return o["candidate"], o["baseline"]
        return None

    def _fastchess_block(self) -> list[str]:
        lines = [DASHES]
        pair = self._head_to_head()
        penta = self.paired
        if pair is not None:
            a, b = pair
            s = self._stats(a, b, pairs_only=True)
            elo = FastchessElo(s, penta)
            with np.errstate(all="ignore"):
                draw = _f(s.wl + s.dd) / s.pairs * 100.0 if penta else 100.0 * _f(s.draws) / s.games
                pairs_ratio = _f(s.ww + s.wd) / (s.ld + s.ll)
                points = s.wins + 0.5 * s.draws
                points_ratio = _f(points) / s.games * 100
                wl_dd = _f(s.wl) / s.dd
            extra = f", {self._book()}" if self._book() else ""
            lines.append(f"Results of {a} vs {b} ({self._tc(a, b)}, {self._option(a, b, 'Threads', 't')}, "
                         f"{self._option(a, b, 'Hash', 'MB')}{extra}):")
            lines.append(f"Elo: {elo.elo_text()}, nElo: {elo.nelo_text()}")
            lines.append(f"LOS: {elo.los_text()}, DrawRatio: {draw:.2f} %"
                         + (f", PairsRatio: {pairs_ratio:.2f}" if penta else ""))
            lines.append(f"Games: {s.games}, Wins: {s.wins}, Losses: {s.losses}, Draws: {s.draws}, "
                         f"Points: {points:.1f} ({points_ratio:.2f} %)")
            if penta:
                p = s.pentanomial()
                lines.append(f"Ptnml(0-2): [{p[0]}, {p[1]}, {p[2]}, {p[3]}, {p[4]}], WL/DD Ratio: {wl_dd:.2f}")
        if pair is None or len(self.order) > 2:
            lines.extend(self._fastchess_table(penta))
        st = self._sprt()
        if st is not None:
            llr = st["llr"]
            fraction = llr / st["upper"] if llr >= 0 else -llr / st["lower"]
            lines.append(f"LLR: {llr:.2f} ({fraction * 100.0:.1f}%) ({st['lower']:.2f}, {st['upper']:.2f}) "
                         f"{self._elo_bounds()}")
        lines.append(DASHES)
        return lines

    def _fastchess_table(self, penta: bool) -> list[str]:
        rows = []
        for name in self.order:
            s = self._stats(name, None, pairs_only=True)
            rows.append((name, FastchessElo(s, penta), s))
        rows.sort(key=lambda r: (0 if not np.isnan(r[1].diff) else 1, -r[1].diff if not np.isnan(r[1].diff) else 0))
        width = max([25] + [len(r[0]) for r in rows])
        out = [f"{'Rank':<4} {'Name':<{width}} {'Elo':>10} {'+/-':>10} {'nElo':>10} {'+/-':>10} {'Games':>10} "
               f"{'Score':>10} {'Draw':>10} {'Ptnml(0-2)':>20}"]
        for rank, (name, elo, s) in enumerate(rows, 1):
            with np.errstate(all="ignore"):
                score = _f(s.wins + 0.5 * s.draws) / s.games * 100
                draw = _f(s.wl + s.dd) / s.pairs * 100.0 if penta else 100.0 * _f(s.draws) / s.games
            p = s.pentanomial()
            ptnml = f"[{p[0]}, {p[1]}, {p[2]}, {p[3]}, {p[4]}]" if penta else ""
            out.append(f"{rank:>4} {name:<{width}} {elo.diff:>10.2f} {elo.error:>10.2f} {elo.nelo:>10.2f} "
                       f"{elo.nelo_error:>10.2f} {s.games:>10} {score:>9.1f}% {draw:>9.1f}% {ptnml:>20}")
        return out

    def _cutechess_block(self) -> list[str]:
        lines: list[str] = []
        if len(self.order) == 2 and self.cfg.seats == 2:
            lines.extend(self._sides(self.order[0]))
            s = self._stats(self.order[0], self.order[1], pairs_only=False)
            e = CutechessElo(s.wins, s.losses, s.draws)
            lines.append(f"Elo difference: {e.diff():.1f} +/- {e.error_margin():.1f}, LOS: {e.los():.1f} %, "
                         f"DrawRatio: {e.draw_ratio() * 100:.1f} %")
        else:
            lines.extend(self._cutechess_table())
        st = self._sprt()
        if st is not None:
            text = (f"SPRT: llr {st['llr']:.3g} ({st['llr'] / st['upper'] * 100:.1f}%), "
                    f"lbound {st['lower']:.3g}, ubound {st['upper']:.3g}")
            if st["decision"]:
                text += f" - {st['decision']} was accepted"
            lines.append(text)
        return lines

    def _sides(self, name: str) -> list[str]:
        """cutechess-cli's ``resultsForSides``: the first bot's results in the first seat
        ("White"), in the second ("Black"), and the seats' results against each other."""
        white, black = Stats(), Stats()
        for g in self.games:
            seats = g["seats"]
            if len(seats) != 2:
                continue
            for i, side in ((0, white), (1, black)):
                if seats[i]["bot"] == name and seats[1 - i]["bot"] != name:
                    side.add_game(_outcome(seats[i]["rank"], seats[1 - i]["rank"]))
        out = []
        for label, side in (("White", white), ("Black", black)):
            if side.games:
                out.append(f"...      {name} playing {label}: {side.wins} - {side.losses} - {side.draws}  "
                           f"[{(2 * side.wins + side.draws) / (side.games * 2):.3f}] {side.games}")
        games = white.games + black.games
        if games:
            w_score, b_score = 2 * white.wins + white.draws, 2 * black.wins + black.draws
            out.append(f"...      White vs Black: {white.wins + black.losses} - {white.losses + black.wins} - "
                       f"{white.draws + black.draws}  [{(w_score + 2 * black.games - b_score) / (games * 2):.3f}] "
                       f"{games}")
        return out

    def _cutechess_table(self) -> list[str]:
        rows = []
        hero = self.cfg.format_options.get("hero") if self.cfg.format == "gauntlet" else None
        for i, name in enumerate(self.order):
            s = self._stats(name, None, pairs_only=False)
            e = CutechessElo(s.wins, s.losses, s.draws)
            key = -1.0 if name == hero else (1.0 - float(e.point_ratio())) if s.games else 2.0
            rows.append((key, -i, name, s, e))
        rows.sort(key=lambda r: (r[0], r[1]))  # equal keys: the latest inserted first (QMultiMap)
        out = [f"{'Rank':>4} {'Name':<25} {'Elo':>7} {'+/-':>7} {'Games':>7} {'Score':>7} {'Draw':>7} "]
        rank = -1 if hero else 0
        for _, _, name, s, e in rows:
            rank += 1
            out.append(f"{rank:>4} {name:<25} {e.diff():>7.0f} {e.error_margin():>7.0f} {s.games:>7} "
                       f"{e.point_ratio() * 100.0:>6.1f}% {e.draw_ratio() * 100.0:>6.1f}% ")
        return out

    # ------------------------------------------------------ the matchup's header
    def _spec(self, name: str):
        return next((b for b in self.cfg.bots if b.name == name), None)

    def _time(self, name: str) -> str:
        """fastchess's ``getTime``: ``moves/time+inc`` of a clock, else ``t/move``."""
        spec = self._spec(name)
        tc = dict(self.cfg.time_control)
        if spec is not None and spec.time_control:
            tc.update(spec.time_control)
        game, inc, move = tc.get("game_ms") or 0, tc.get("increment_ms") or 0, tc.get("move_ms") or 0
        if game + inc > 0:
            moves = f"{tc['moves']}/" if tc.get("moves") else ""
            return f"{moves}{_c(game / 1000.0)}" + (f"+{inc / 1000.0:.2g}" if inc > 0 else "")
        if move > 0:
            return f"{_c(move / 1000.0)}/move"
        return ""

    def _tc(self, a: str, b: str) -> str:
        x, y = self._time(a), self._time(b)
        return x if x == y else f"{x} - {y}"

    def _option(self, a: str, b: str, option: str, unit: str) -> str:
        def one(name):
            spec = self._spec(name)
            value = (spec.options or {}).get(option) if spec is not None else None
            return "NULL" if value is None else f"{value}{unit}"

        x, y = one(a), one(b)
        return x if x == y else f"{x} - {y}"

    def _book(self) -> str:
        path = getattr(self.cfg, "deals_path", None)
        return Path(path).name if path else ""

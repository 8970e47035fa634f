"""The figures of fastchess and cutechess-cli, computed as they compute them: a side's
W/D/L and pentanomial (:class:`Stats`), fastchess's W/D/L and pentanomial Elo, nElo and LOS
(:class:`FastchessElo`, from its ``elo_wdl.cpp`` and ``elo_pentanomial.cpp``) and
cutechess-cli's Elo, error margin and LOS (:class:`CutechessElo`, from its ``elo.cpp``),
with IEEE arithmetic throughout (a clean sweep's Elo is ``inf``, no games ``nan``), so the
lines of :mod:`arena.tournament.output_formats` print what theirs print."""

from __future__ import annotations

import math

import numpy as np

#: the 97.5% quantile of the normal law (fastchess's ``CI95ZSCORE``)
Z95 = 1.959963984540054


def f64(x) -> np.float64:
    """``x`` as an IEEE double whose division by 0 is inf or nan, as in C++."""
    return np.float64(x)


def elo_diff(score):
    """``-400 log10(1/score - 1)`` with IEEE arithmetic (inf at a score of 1, nan past it)."""
    with np.errstate(all="ignore"):
        return -400.0 * np.log10(f64(1.0) / score - 1.0)


def fmt_double(x) -> str:
    """A number as C++'s ``fmt::format("{}")`` writes a double: shortest, no ``.0``."""
    x = float(x)
    return str(int(x)) if x.is_integer() else repr(x)


class Stats:
    """One side's results against another (fastchess's ``Stats``): games and, over pairs
    of seat-swapped games, the pentanomial with ``WL`` and ``DD`` apart."""

    def __init__(self):
        self.wins = self.losses = self.draws = 0
        self.ww = self.wd = self.wl = self.dd = self.ld = self.ll = 0

    def add_game(self, result: str) -> None:
        """``result``: ``W``, ``L`` or ``D`` from this side."""
        if result == "W":
            self.wins += 1
        elif result == "L":
            self.losses += 1
        else:
            self.draws += 1

    def add_pair(self, results: list[str]) -> None:
        """A finished pair of games (both counted as games too)."""
        for r in results:
            self.add_game(r)
        key = "".join(sorted(results, key="WDL".index))
        attr = {"WW": "ww", "WD": "wd", "WL": "wl", "DD": "dd", "DL": "ld", "LL": "ll"}[key]
        setattr(self, attr, getattr(self, attr) + 1)

    @property
    def games(self) -> int:
        """Games counted."""
        return self.wins + self.losses + self.draws

    @property
    def pairs(self) -> int:
        """Finished pairs counted."""
        return self.ww + self.wd + self.wl + self.dd + self.ld + self.ll

    def pentanomial(self) -> list[int]:
        """``[LL, LD, WL+DD, WD, WW]``: pairs scoring 0, 1/4, 1/2, 3/4, 1."""
        return [self.ll, self.ld, self.wl + self.dd, self.wd, self.ww]

    def __iadd__(self, other: "Stats") -> "Stats":
        for k in vars(self):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        return self


class FastchessElo:
    """fastchess's ``EloWDL`` (``penta=False``) or ``EloPentanomial``: Elo, nElo, their 95%
    half-widths and the LOS, IEEE arithmetic throughout (nan with no games)."""

    def __init__(self, s: Stats, penta: bool):
        with np.errstate(all="ignore"):
            if penta:
                n = f64(s.pairs)
                values = [(1.0, s.ww), (0.75, s.wd), (0.5, s.wl + s.dd), (0.25, s.ld), (0.0, s.ll)]
            else:
                n = f64(s.games)
                values = [(1.0, s.wins), (0.5, s.draws), (0.0, s.losses)]
            self.score = sum(f64(c) / n * v for v, c in values)
            var = sum(f64(c) / n * (v - self.score) ** 2 for v, c in values)
            per = var / n
            hi, lo = self.score + Z95 * np.sqrt(per), self.score - Z95 * np.sqrt(per)
            self.diff = elo_diff(self.score)
            self.error = (elo_diff(hi) - elo_diff(lo)) / 2.0
            spread = np.sqrt(2 * var) if penta else np.sqrt(var)
            nelo = lambda x: (x - 0.5) / spread * (800 / math.log(10))  # noqa: E731
            self.nelo, self.nelo_error = nelo(self.score), (nelo(hi) - nelo(lo)) / 2.0
            self.los = (1 - math.erf(float(-(self.score - 0.5) / np.sqrt(2.0 * per)))) / 2.0

    def elo_text(self) -> str:
        """``-9.20 +/- 20.93`` (fastchess's ``getElo``)."""
        return f"{self.diff:.2f} +/- {self.error:.2f}"

    def nelo_text(self) -> str:
        """``-11.50 +/- 26.11``."""
        return f"{self.nelo:.2f} +/- {self.nelo_error:.2f}"

    def los_text(self) -> str:
        """``19.41 %``."""
        return f"{self.los * 100.0:.2f} %"


class CutechessElo:
    """cutechess-cli's ``Elo`` (``elo.cpp``): W/L/D Elo, its error margin (with its own
    inverse error function) and LOS."""

    def __init__(self, wins: int, losses: int, draws: int):
        self.wins, self.losses, self.draws = wins, losses, draws
        with np.errstate(all="ignore"):
            n = f64(wins + losses + draws)
            w, l, d = wins / n, losses / n, draws / n
            self.mu = w + d / 2.0
            self.stdev = np.sqrt(w * (1.0 - self.mu) ** 2 + l * (0.0 - self.mu) ** 2 + d * (0.5 - self.mu) ** 2) \
                / np.sqrt(n)

    @staticmethod
    def _erf_inv(x):
        pi = 3.1415926535897
        a = 8.0 * (pi - 3.0) / (3.0 * pi * (4.0 - pi))
        y = np.log(1.0 - x * x)
        z = 2.0 / (pi * a) + y / 2.0
        ret = np.sqrt(np.sqrt(z * z - y / a) - z)
        return -ret if x < 0.0 else ret

    @classmethod
    def _phi_inv(cls, p):
        return math.sqrt(2.0) * cls._erf_inv(2.0 * p - 1.0)

    def diff(self):
        """The Elo difference of the mean score."""
        return elo_diff(self.mu)

    def error_margin(self):
        """Half the Elo width of the 95% interval of the mean score."""
        with np.errstate(all="ignore"):
            lo = self.mu + self._phi_inv(0.025) * self.stdev
            hi = self.mu + self._phi_inv(0.975) * self.stdev
            return (elo_diff(hi) - elo_diff(lo)) / 2.0

    def los(self):
        """The likelihood of superiority, in %, from wins and losses."""
        with np.errstate(all="ignore"):
            x = f64(self.wins - self.losses) / np.sqrt(f64(2.0 * (self.wins + self.losses)))
            return 100 * (0.5 + 0.5 * math.erf(float(x)))

    def point_ratio(self):
        """Points per game (0 to 1)."""
        with np.errstate(all="ignore"):
            return f64(self.wins * 2 + self.draws) / ((self.wins + self.losses + self.draws) * 2)

    def draw_ratio(self):
        """Draws per game (0 to 1)."""
        with np.errstate(all="ignore"):
            return f64(self.draws) / (self.wins + self.losses + self.draws)

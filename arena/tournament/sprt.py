"""The sequential probability ratio test over seat-rotated groups, for 2 to 4 seats.

The statistic (derived in ``docs/tournaments.md``): the candidate's score in a game is the
fraction of the other seats it ranks above (a shared place counts a half); a group's score
``x`` is the mean over the group's N seat-rotated games of one deal -- at two seats the
pentanomial pair score 0, 1/4, 1/2, 3/4, 1. Under Plackett-Luce the candidate ranks above
each baseline seat with probability ``mu(elo) = 1 / (1 + 10^(-elo/400))`` (Luce's choice
axiom), so ``E[x] = mu(elo)`` at every seat count. Groups are independent and identically
distributed, so the test is fishtest's generalized SPRT on the distribution of group scores:

    LLR = n * sum_i p_i * log(p1_i / p0_i)

where ``p_i`` is the observed frequency of group score ``a_i`` and ``pH_i`` is the
distribution closest to it (maximum likelihood) whose mean is ``mu(eloH)``; that constrained
optimum is ``pH_i = p_i / (1 + theta (a_i - mu))`` with ``theta`` the root of the secular
equation ``sum_i p_i (a_i - mu) / (1 + theta (a_i - mu)) = 0``. The support is every score a
group can have (multiples of 1/4 at two seats, 1/12 at three, 1/24 at four), and a score
never seen counts 0.001 groups, as fishtest regularises its pentanomial counts. Unlike the
normal approximation this is exact on small samples, where the normal form overstates the
evidence. The test accepts H1 (elo >= elo1) when LLR >= log((1-beta)/alpha) and H0
(elo <= elo0) when LLR <= log(beta/(1-alpha)).

``model="normalized"`` (fastchess's ``model=normalized``) reads elo0 and elo1 as normalized
Elo (:func:`nelo`): H is then ``t = (mu - 1/2) / sigma = t_H`` with ``sigma`` the standard
deviation of a group's score and ``t_H = sqrt(2) * neloH / (800 / ln 10)``, and ``pH`` is the
distribution nearest the observed one with that ``t`` (Van den Bergh, *Comments on
normalized Elo*, section 4.1: a fixed point of ``q_i = p_i / (1 + theta phi_i)``). Its
hypotheses scale with the spread of the pair scores, so lopsided pairs -- nearly every pair
won, a small variance -- decide it within a few dozen pairs where the logistic test, whose
hypotheses stay at 0 and 10 Elo whatever the spread, needs a hundred.

Single games (``--noswap``, ``swap: false``: one game a deal, ``single=True``) are not pairs:
a group is then one game, its score one of the game's own outcomes (0, 1/2, 1 at two seats:
the trinomial of losses, draws and wins, as fishtest's ``LLR_logistic`` and ``LLR_normalized``
on ``[L, D, W]`` and fastchess's ``SPRT::getLLR(win, draw, loss)``), and normalized Elo is
measured in standard deviations of a game's score, not of a pair's: ``t_H = neloH / (800 /
ln 10)``, without the pair's ``sqrt(2)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# the weight of a group score never observed (fishtest's regularisation)
EPSILON = 1e-3


def mu(elo: float) -> float:
    """The expected pairwise score of a bot ``elo`` points stronger (logistic Elo)."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_of(score: float) -> float:
    """Inverse of :func:`mu`, clipped to +-1000."""
    score = min(max(score, 1e-3), 1 - 1e-3)
    return max(-1000.0, min(1000.0, -400.0 * math.log10(1.0 / score - 1.0)))


def game_score(ranks: list[int], bots: list[str], candidate: str) -> float | None:
    """The candidate's mean pairwise score against the other bots' seats in one game."""
    total, count = 0.0, 0
    for i, bi in enumerate(bots):
        if bi != candidate:
            continue
        for j, bj in enumerate(bots):
            if bj == candidate:
                continue
            total += 1.0 if ranks[i] < ranks[j] else 0.5 if ranks[i] == ranks[j] else 0.0
            count += 1
    return total / count if count else None


def group_scores(games: list[dict], candidate: str, seats: int, rotations: int | None = None) -> np.ndarray:
    """Scores of the complete groups (all N rotations stored, or ``rotations`` of them: one
    without seat swaps), in group order."""
    per = rotations or seats
    by_group: dict[int, list[float]] = {}
    for g in games:
        s = game_score([x["rank"] for x in g["seats"]], [x["bot"] for x in g["seats"]], candidate)
        if s is not None:
            by_group.setdefault(g["group"], []).append(s)
    return np.array([sum(v) / per for k, v in sorted(by_group.items()) if len(v) == per], dtype=float)


#: the grids of group scores: a seat-rotated group at two, three, four seats
GROUP_GRIDS = (4, 12, 24)
#: the grids of a single game's score: two seats (loss, draw, win), three, four
GAME_GRIDS = (2, 4, 12)


def score_counts(scores, grids: tuple[int, ...] = GROUP_GRIDS) -> tuple[np.ndarray, np.ndarray]:
    """The possible group scores and how often each was seen (never seen: :data:`EPSILON`).

    The grid is the coarsest of ``grids`` the scores fit: of groups 1/4, 1/12, 1/24 (two,
    three, four seats), of single games (:data:`GAME_GRIDS`) 1/2 (the trinomial), 1/4, 1/12;
    scores off every grid are taken as they are, with 0 and 1 added as never seen.
    """
    x = np.asarray(scores, dtype=float)
    for steps in grids:
        k = np.rint(x * steps)
        if np.all(np.abs(x * steps - k) < 1e-6):
            counts = np.bincount(k.astype(np.int64), minlength=steps + 1).astype(float)
            counts[counts == 0] = EPSILON
            return np.arange(steps + 1) / steps, counts
    values, counts = np.unique(np.concatenate([x, [0.0, 1.0]]), return_counts=True)
    counts = counts.astype(float)
    counts[0] -= 1
    counts[-1] -= 1
    counts[counts == 0] = EPSILON
    return values, counts


def mle_with_mean(values: np.ndarray, p: np.ndarray, mean: float) -> np.ndarray:
    """The distribution on ``values`` nearest ``p`` in likelihood whose expectation is ``mean``.

    Lagrange: ``q_i = p_i / (1 + theta (a_i - mean))``, ``theta`` solving the secular
    equation; ``mean`` must lie strictly between the smallest and largest value.
    """
    a = values - mean

    def secular(theta: float) -> float:
        return float(np.sum(p * a / (1.0 + theta * a)))

    from scipy.optimize import brentq  # here: importing scipy.optimize takes a second, and most runs never ask

    lo, hi = -1.0 / a.max(), -1.0 / a.min()
    eps = 1e-12 * (hi - lo)
    theta = brentq(secular, lo + eps, hi - eps, xtol=1e-14, rtol=1e-12)
    return p / (1.0 + theta * a)


def mle_with_t(values: np.ndarray, p: np.ndarray, t: float, reference: float = 0.5,
               iterations: int = 50, tolerance: float = 1e-9) -> np.ndarray:
    """The distribution on ``values`` nearest ``p`` in likelihood whose normalized mean
    ``(mean - reference) / sd`` is ``t``.

    With ``mu`` and ``sigma`` of the current estimate, ``phi_i = a_i - reference - t sigma
    (1 + ((a_i - mu) / sigma)^2) / 2`` linearises the constraint; ``q_i = p_i / (1 + theta
    phi_i)`` with ``theta`` solving ``sum p_i phi_i / (1 + theta phi_i) = 0``, repeated from
    the uniform distribution until it no longer moves."""
    from scipy.optimize import brentq

    q = np.full(len(values), 1.0 / len(values))
    for _ in range(iterations):
        m = float(np.sum(q * values))
        sigma = math.sqrt(max(float(np.sum(q * (values - m) ** 2)), 1e-300))
        phi = values - reference - 0.5 * t * sigma * (1.0 + ((values - m) / sigma) ** 2)
        lo, hi = -1.0 / phi.max(), -1.0 / phi.min()
        eps = 1e-12 * (hi - lo)
        theta = brentq(lambda x: float(np.sum(p * phi / (1.0 + x * phi))), lo + eps, hi - eps,
                       xtol=1e-14, rtol=1e-12)
        new = p / (1.0 + theta * phi)
        done = float(np.max(np.abs(new - q))) < tolerance
        q = new
        if done:
            break
    return q


MODELS = ("logistic", "normalized")


@dataclass(frozen=True)
class SPRT:
    """An SPRT of H0: elo <= elo0 against H1: elo >= elo1 with error rates alpha and beta;
    ``model`` ``logistic`` (Elo) or ``normalized`` (elo0 and elo1 in nElo, see the module);
    ``single``: each score is one game (no seat-rotated repeats), not a group."""

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "logistic"
    single: bool = False

    @classmethod
    def of(cls, options: dict, rotations: int | None = None) -> "SPRT":
        """The test of a tournament's ``format_options`` (``model`` absent: logistic);
        ``rotations`` 1 (one game a deal, ``swap: false``) makes it a test of single games."""
        return cls(options["elo0"], options["elo1"], options["alpha"], options["beta"],
                   options.get("model", "logistic"), rotations == 1)

    @property
    def t_scale(self) -> float:
        """``t_H / neloH``: a pair's score spreads ``sqrt(2)`` times less than a game's."""
        return (1.0 if self.single else math.sqrt(2.0)) / NELO_SCALE

    @property
    def bounds(self) -> tuple[float, float]:
        """(lower, upper): accept H0 at or below lower, H1 at or above upper."""
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)

    def llr(self, scores) -> float:
        """The generalized log-likelihood ratio of the group scores so far (0 with no groups)."""
        x = np.asarray(scores, dtype=float)
        if len(x) == 0:
            return 0.0
        values, counts = score_counts(x, GAME_GRIDS if self.single else GROUP_GRIDS)
        n = counts.sum()
        p = counts / n
        if self.model == "normalized":
            p0 = mle_with_t(values, p, self.t_scale * self.elo0)
            p1 = mle_with_t(values, p, self.t_scale * self.elo1)
        else:
            p0 = mle_with_mean(values, p, mu(self.elo0))
            p1 = mle_with_mean(values, p, mu(self.elo1))
        return float(n * np.sum(p * (np.log(p1) - np.log(p0))))

    def status(self, scores) -> dict:
        """LLR, bounds, decision (``H0``, ``H1`` or None) and the score and Elo estimates."""
        x = np.asarray(scores, dtype=float)
        llr = self.llr(x)
        lower, upper = self.bounds
        decision = "H1" if llr >= upper else "H0" if llr <= lower else None
        mean = float(x.mean()) if len(x) else 0.5
        out = {"groups": int(len(x)), "llr": llr, "lower": lower, "upper": upper, "decision": decision,
               "score": mean, "elo": elo_of(mean), "elo0": self.elo0, "elo1": self.elo1,
               "alpha": self.alpha, "beta": self.beta, "model": self.model, "single": self.single}
        if len(x) >= 2:
            se = float(x.std(ddof=1)) / math.sqrt(len(x))
            out["elo_ci"] = [elo_of(mean - 1.96 * se), elo_of(mean + 1.96 * se)]
        return out


def pentanomial(scores) -> list[int]:
    """Counts of the pair scores 0, 1/4, 1/2, 3/4, 1 (two seats: one pair per group)."""
    counts = [0] * 5
    for x in scores:
        counts[min(4, max(0, int(round(float(x) * 4))))] += 1
    return counts


#: normalized Elo's scale (fastchess's): 800 / ln 10 per sqrt(2) pair-score standard deviations
NELO_SCALE = 800.0 / math.log(10.0)
Z95 = 1.959963984540054


def nelo(scores, single: bool = False) -> dict | None:
    """Normalized Elo of pair scores, as fastchess prints it for pentanomial results, or of
    single games' scores (``single``) as it prints it for W/D/L results.

    With ``m`` the mean pair score and ``v`` their variance (over the ``n`` pairs, not
    ``n - 1``): ``nElo = (m - 1/2) / sqrt(2 v) * 800 / ln 10``, and its 95% half-width maps
    ``m +/- 1.96 sqrt(v / n)`` the same way (``1.96 / sqrt(2 n) * 800 / ln 10``). It measures
    the difference in standard deviations of a game's score (a pair's spreads ``sqrt(2)``
    times less), so it says how many games a test needs whatever the draw rate. Single
    games: ``(m - 1/2) / sqrt(v) * 800 / ln 10``, half-width ``1.96 / sqrt(n) * 800 / ln 10``.
    None with fewer than two scores or when every one scored alike."""
    x = np.asarray([float(s) for s in scores])
    n = len(x)
    if n < 2:
        return None
    m = float(x.mean())
    v = float(((x - m) ** 2).mean())
    if v <= 0:
        return None
    spread = math.sqrt(v if single else 2 * v)
    value = (m - 0.5) / spread * NELO_SCALE
    half = Z95 * math.sqrt(v / n) / spread * NELO_SCALE
    return {"nelo": value, "nelo_error": half, "games" if single else "pairs": n}


def describe(status: dict) -> str:
    """One line: LLR, bounds, groups and the decision."""
    verdict = {"H1": "accepted H1", "H0": "accepted H0", None: "running"}[status["decision"]]
    return (f"LLR {status['llr']:+.2f} [{status['lower']:.2f}, {status['upper']:.2f}] after "
            f"{status['groups']} groups, elo {status['elo']:+.1f} ({verdict})")

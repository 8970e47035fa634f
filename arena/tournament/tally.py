"""The live results of ``arena match``: a line per finished game and, every few games, a
block per pair of bots (W/D/L, Elo and nElo with their 95% intervals, the pentanomial, the
LLR of an sprt and why it is slow on lopsided pairs) at two seats, or each bot's mean rank
and pairwise wins at three and four."""

from __future__ import annotations

import math


def pace(test, scores: list[float]) -> str | None:
    """Why a logistic SPRT is slow on lopsided pairs, with the pace of the normalized model,
    or None. When nearly every pair scored 0 (or 1), the distributions nearest the data
    with the hypotheses' mean scores put their mass on the pair scores 0 and 1 -- the
    largest pentanomial variance there is, however small the observed one -- so a pair
    moves the LLR by only about log((1 - mu1) / (1 - mu0)), -0.029 between 0 and 10 Elo:
    about a hundred pairs whatever the margin. The normalized model measures the
    hypotheses in standard deviations of the pair score and moves faster there."""
    from dataclasses import replace

    from .sprt import pentanomial

    n = len(scores)
    counts = pentanomial(scores)
    if test.model != "logistic" or n < 10 or max(counts[0], counts[4]) < 0.9 * n:
        return None
    status = test.status(scores)
    if status["decision"]:
        return None
    step = status["llr"] / n
    bound = status["lower"] if step < 0 else status["upper"]
    fast = replace(test, model="normalized").llr(scores) / n
    extreme = "0" if counts[0] >= counts[4] else "1"
    unit, law = ("game", "trinomial") if test.single else ("pair", "pentanomial")
    text = (f"  lopsided {unit}s ({max(counts[0], counts[4])} of {n} scored {extreme}): the fits of both "
            f"hypotheses put their {unit}s at 0 and 1 (the largest {law} variance), so a {unit} moves the "
            f"LLR by {step:+.3f}, about {math.ceil(bound / step)} {unit}s to decide")
    if fast * step > 0:
        text += f"; model=normalized (nElo bounds) moves {fast:+.3f} a {unit}, about {math.ceil(bound / fast)}"
    return text


class Tally:
    """Live results of a match: per pair at two seats, per bot (mean rank, pairwise wins) at more."""

    def __init__(self, cfg, games: list[dict]):
        self.cfg = cfg
        self.games: list[dict] = []
        for g in sorted(games, key=lambda g: (g["group"], g["rotation"])):
            self.games.append(g)

    def add(self, task, outcome: dict) -> dict:
        """Count one stored game; returns it in the store's form."""
        from .gamelines import end_of

        res = outcome["result"]
        game = {"group": task.group, "rotation": task.rotation,
                "seats": [{"bot": b, "rank": r, "score": s}
                          for b, r, s in zip(task.bots, res["ranking"], res["scores"])],
                **end_of(task.bots, outcome)}
        self.games.append(game)
        return game

    def game_line(self, game: dict) -> str:
        """``Finished game 12 of 200 (greedy vs random): 1-0 {random: timeout at move 12}, scores 23 : 11``."""
        bots = [x["bot"] for x in game["seats"]]
        ranks = [x["rank"] for x in game["seats"]]
        scores = " : ".join(str(x["score"]) for x in game["seats"])
        if len(bots) == 2:
            result = "1/2-1/2" if ranks[0] == ranks[1] else "1-0" if ranks[0] < ranks[1] else "0-1"
        else:
            result = "places " + " ".join(map(str, ranks))
        from .schedule import total_games
        reason = f" {{{game['reason']}}}" if game.get("reason") else ""
        return (f"Finished game {len(self.games)} of {total_games(self.cfg)} ({' vs '.join(bots)}): "
                f"{result}{reason}, scores {scores}")

    def pairs(self) -> list[dict]:
        """At two seats: one entry per pair of bots, from the first-listed bot's side."""
        from .sprt import SPRT, elo_of, nelo, pentanomial

        order = [b.name for b in self.cfg.bots]
        out: dict[tuple, dict] = {}
        groups: dict[tuple, dict[int, list[float]]] = {}
        for g in self.games:
            if len(g["seats"]) != 2 or g["seats"][0]["bot"] == g["seats"][1]["bot"]:
                continue
            x, y = g["seats"]
            if order.index(x["bot"]) > order.index(y["bot"]):
                x, y = y, x
            key = (x["bot"], y["bot"])
            p = out.setdefault(key, {"bot": key[0], "opponent": key[1], "games": 0, "wins": 0, "draws": 0,
                                     "losses": 0})
            p["games"] += 1
            p["wins" if x["rank"] < y["rank"] else "losses" if x["rank"] > y["rank"] else "draws"] += 1
            s = 1.0 if x["rank"] < y["rank"] else 0.0 if x["rank"] > y["rank"] else 0.5
            groups.setdefault(key, {}).setdefault(g["group"], []).append(s)
        fmt = self.cfg.format_options
        for key, p in out.items():
            p["points"] = p["wins"] + 0.5 * p["draws"]
            per = self.cfg.rotations
            scores = [sum(v) / per for v in groups[key].values() if len(v) == per]
            p["pairs"] = len(scores)
            p["pentanomial"] = pentanomial(scores)
            n = len(scores)
            if n >= 2:
                m = sum(scores) / n
                sd = math.sqrt(sum((s - m) ** 2 for s in scores) / (n - 1))
                se = sd / math.sqrt(n)
                p["elo"] = elo_of(m)
                p["elo_error"] = (elo_of(m + 1.96 * se) - elo_of(m - 1.96 * se)) / 2
                normalized = nelo(scores, single=per == 1)
                if normalized is not None:
                    p["nelo"], p["nelo_error"] = normalized["nelo"], normalized["nelo_error"]
            if self.cfg.format == "sprt":
                test = SPRT.of(fmt, per)
                side = scores if key[0] == fmt["candidate"] else [1 - s for s in scores]
                p["sprt"] = test.status(side)
                p["sprt"]["pace"] = pace(test, side)
        return list(out.values())

    def ranks(self) -> dict:
        """At three or four seats: each bot's mean rank and how often it placed above each other bot."""
        per: dict[str, list[int]] = {}
        above: dict[str, dict[str, int]] = {}
        for g in self.games:
            for x in g["seats"]:
                per.setdefault(x["bot"], []).append(x["rank"])
                for y in g["seats"]:
                    if x["bot"] != y["bot"] and x["rank"] < y["rank"]:
                        row = above.setdefault(x["bot"], {})
                        row[y["bot"]] = row.get(y["bot"], 0) + 1
        bots = sorted(per, key=lambda b: (sum(per[b]) / len(per[b]), b))
        return {"bots": [{"bot": b, "games": len(per[b]), "mean_rank": sum(per[b]) / len(per[b])} for b in bots],
                "above": above}

    def report_lines(self) -> list[str]:
        """The block printed every few games and at the end."""
        if self.cfg.seats == 2:
            lines = []
            unit = "pairs" if self.cfg.rotations == 2 else "games"  # --noswap: one game a deal
            for p in self.pairs():
                pts = 100.0 * p["points"] / p["games"]
                lines.append(f"Results of {p['bot']} vs {p['opponent']}: games {p['games']}, "
                             f"W {p['wins']} D {p['draws']} L {p['losses']}, points {p['points']:g} ({pts:.1f} %)")
                # a pair's score is one of five, a single game's one of three (L, D, W)
                c = p["pentanomial"]
                law = f"pentanomial {c}" if unit == "pairs" else f"trinomial {[c[0], c[2], c[4]]}"
                if "elo" in p and 0 < p["elo_error"] < math.inf:
                    normalized = (f", nElo {p['nelo']:+.1f} +/- {p['nelo_error']:.1f}" if "nelo" in p else "")
                    lines.append(f"  Elo {p['elo']:+.1f} +/- {p['elo_error']:.1f}{normalized} over {p['pairs']} {unit}, "
                                 f"{law}")
                elif p["pairs"]:
                    lines.append(f"  every {unit[:-1]} scored alike so far ({p['pairs']} {unit}), {law}")
                if "sprt" in p:
                    s = p["sprt"]
                    verdict = {"H1": "H1 accepted", "H0": "H0 accepted", None: "running"}[s["decision"]]
                    scale = " nElo" if s["model"] == "normalized" else ""
                    lines.append(f"  LLR {s['llr']:+.2f} ({s['lower']:.2f}, {s['upper']:.2f}) "
                                 f"[{s['elo0']:g}, {s['elo1']:g}]{scale} {verdict}")
                    if s.get("pace"):
                        lines.append(s["pace"])
            return lines
        r = self.ranks()
        lines = [f"Results after {len(self.games)} games (mean rank; placed above):"]
        for row in r["bots"]:
            wins = ", ".join(f"{o} {n}" for o, n in sorted(r["above"].get(row["bot"], {}).items()))
            lines.append(f"  {row['bot']:16} rank {row['mean_rank']:.2f} over {row['games']} games; above {wins or '-'}")
        if self.cfg.format == "sprt":
            from .sprt import SPRT, describe, group_scores

            o = self.cfg.format_options
            s = SPRT.of(o, self.cfg.rotations).status(
                group_scores(self.games, o["candidate"], self.cfg.seats, self.cfg.rotations))
            lines.append(f"  {describe(s)}")
        return lines

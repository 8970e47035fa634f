"""How strong the experiment's bots are: a conclusion about rules is only as good as the play.

Each built-in bot of the experiment is measured quickly against ``greedy``: a few
seat-rotated groups at two seats under the reference rule set, played in this process
(:func:`arena.execution.inprocess.play_inprocess`), giving its **points share** (its
points over its and greedy's points, all games together) and its win share with a Wilson
interval. ``greedy`` is the yardstick (50% by definition); a bot with a command line is
not measured here. The figures are kept in the experiment's results file, so a continued
run does not measure again. A bot at or below ``WEAK_SHARE`` of greedy's points, or the
random bot, is *weak*: the report warns that its conclusions say how those bots play the
rules, which may not be how people do.
"""

from __future__ import annotations

from engine import compile_rules
from engine.stats import wilson

from ..tournament.schedule import group_seed
from .markdown import table as _table

YARDSTICK = "greedy"
#: a points share against greedy at or below this is a weak bot
WEAK_SHARE = 0.35
WEAK_BOTS = ("random",)


def measure(bot: str, spec, groups: int = 4, seed: int = 0) -> dict:
    """``bot`` (a built-in bot's name) against greedy: ``{"points_share", "wins", "games", "source"}``."""
    from ..execution.inprocess import play_inprocess

    if bot == YARDSTICK:
        return {"points_share": 0.5, "wins": None, "games": 0, "source": "the yardstick (50% by definition)"}
    points = [0.0, 0.0]  # the bot's, greedy's
    wins = 0.0
    games = 0
    for g in range(groups):
        s = group_seed(seed + 7919, g)
        for rot in range(2):
            seats = [{"name": bot, "bot": bot}, {"name": YARDSTICK, "bot": YARDSTICK}]
            if rot:
                seats.reverse()
            result = play_inprocess({"seats": seats, "rules": spec.to_json(), "seed": s, "players": 2})["result"]
            me = seats.index(next(x for x in seats if x["name"] == bot))
            points[0] += result["scores"][me]
            points[1] += result["scores"][1 - me]
            ranks = list(result["ranking"])
            if ranks[me] == 1:
                wins += 1.0 / ranks.count(1)
            games += 1
    total = abs(points[0]) + abs(points[1])
    share = points[0] / total if total else 0.5
    return {"points_share": max(0.0, share), "wins": wilson(wins, games), "games": games,
            "source": f"measured now: {games} games against greedy, seat-rotated, 2 seats"}


def strengths(cfg, groups: int = 4, stored: dict | None = None) -> dict:
    """Every bot of ``cfg`` by its name in the file: its measured figures (or why none).

    ``stored``: figures measured by an earlier run of the same experiment (kept as they are).
    """
    stored = dict(stored or {})
    spec = cfg.rule_sets[0].spec
    try:
        compile_rules(spec, 2)
    except Exception:  # the reference cannot be played at two seats (solo): the base rules
        from engine import RuleSpec

        spec = RuleSpec()
    out = {}
    for b in cfg.base.bots:
        key = b.bot or b.name
        if key in stored:
            out[b.name] = stored[key]
            continue
        from ..plugins import policy_names

        if b.bot is None or b.bot not in policy_names():
            fig = {"points_share": None, "wins": None, "games": 0,
                   "source": "not measured: not a built-in bot (a gauntlet against greedy measures it)"}
        elif groups <= 0:
            fig = {"points_share": None, "wins": None, "games": 0, "source": "not measured (--strength-games 0)"}
        else:
            fig = measure(b.bot, spec, groups, cfg.base.seed)
        fig = {**fig, "bot": key, "rules": spec.to_json()}
        stored[key] = fig
        out[b.name] = fig
    return out


def weak(name: str, fig: dict) -> bool:
    """Whether a bot is too weak for its games to say much about how the rules play."""
    share = fig.get("points_share")
    return fig.get("bot") in WEAK_BOTS or (share is not None and share <= WEAK_SHARE)


def report_lines(figs: dict) -> list[str]:
    """The report's section on the bots' strength."""
    lines = ["", "## The bots' strength", "",
             "Points share: a bot's points over its and greedy's points in games against `greedy` "
             "(50% is greedy's strength).", ""]
    rows = []
    for name, f in figs.items():
        share = "-" if f.get("points_share") is None else f"{f['points_share']:.0%}"
        w = f.get("wins")
        wins = "-" if not w or w.get("rate") is None else f"{w['rate']:.0%} [{w['low']:.0%}, {w['high']:.0%}]"
        rows.append([f"`{name}` ({f.get('bot')})", share, wins, f.get("source", "")])
    lines += _table(["bot", "points share vs greedy", "wins vs greedy", "source"], rows)
    weak_ones = [n for n, f in figs.items() if weak(n, f)]
    if weak_ones:
        lines += ["", f"**Warning: weak bots.** {', '.join(f'`{n}`' for n in weak_ones)} "
                  f"{'plays' if len(weak_ones) == 1 else 'play'} far below greedy: the conclusions below say how "
                  "such bots fare under each rule set, not how the rules play between good players; "
                  "check them with `planner-fast`."]
    return lines


def kept_strengths(cfg, groups: int = 4) -> dict:
    """:func:`strengths`, kept in the experiment's results file: measured once per output folder."""
    from .play import fingerprint
    from .store import ExperimentStore

    store = ExperimentStore.open(cfg.base.output, fingerprint(cfg))
    try:
        stored = {f["bot"]: f for f in (store.get_meta("strength") or {}).values()
                  if f.get("games") or f.get("points_share") is not None}
        figs = strengths(cfg, groups, stored)
        store.set_meta("strength", figs)
    finally:
        store.close()
    return figs

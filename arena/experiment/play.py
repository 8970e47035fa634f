"""Playing an experiment: every rule set's schedule on one pool of workers, as per-game rows.

The schedule is the tournament runner's (:func:`arena.tournament.schedule.schedule`):
seat-rotated groups whose deal seed depends only on the experiment's seed and the group, so
group ``g`` is dealt from the same seed under every rule set. Games run on the
executors -- :class:`~arena.execution.local.LocalExecutor`, or the cluster's
:class:`~arena.cluster.executor.DaskExecutor` for ``executor: {type: dask,
address: ...}`` or ``--dask ADDRESS``, with the same crash safety and resume; the game function is the in-process one
(:func:`arena.execution.inprocess.play_inprocess`) for built-in bots, or the referee's for
bot processes, wrapped by :func:`experiment_game` to add what the report needs and the
results do not hold (puzzles completed by colour). Each game's row is stored as it finishes
(:mod:`.store`), so an interrupted experiment continues where it stopped.
"""

from __future__ import annotations

import functools
import os
import tempfile
import time
from pathlib import Path

from engine.replay import load_replay, resimulate

from ..cluster.named import make_executor
from ..execution.work import Interrupted, play_one
from ..tournament.requests import build_request
from ..tournament.schedule import group_count, schedule
from .actions import action_columns, action_counts
from .config import ExperimentConfig
from .plan import Plan
from ..progress import Ticker
from .store import ExperimentStore


def fingerprint(cfg: ExperimentConfig) -> dict:
    """What decides an experiment's games: a stored run continues only under the same."""
    base = dict(cfg.base.fingerprint())
    base.pop("rules", None)
    base["rule_sets"] = [[rs.name, rs.spec.to_json()] for rs in cfg.rule_sets]
    if cfg.stop is not None:  # a cap only bounds the rounds: a run may go on with a higher one
        base.pop("games", None)
        base.pop("rounds", None)
    return base


def experiment_game(request: dict, pool=None, play: str = "inprocess", keep_replay: bool = False) -> dict:
    """Worker side: play one game and add ``colours``: each seat's completed puzzles by colour.

    The game is re-simulated from its replay (written to a temporary file unless the
    experiment keeps replays), which also checks that it reproduces.
    """
    tmp = None
    if not keep_replay or not request.get("replay_path"):
        fd, tmp = tempfile.mkstemp(prefix="arena-exp-", suffix=".json")
        os.close(fd)
        request = {**request, "replay_path": tmp}
    try:
        # bot processes come from the worker's pool and go back to it, as a tournament's do
        outcome = play_one(request, pool, play)
        game = resimulate(load_replay(request["replay_path"]))
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    puzzles = game.rules.puzzles
    outcome["colours"] = [{"white": sum(1 for c in p.completed if puzzles[c].color == "white"),
                           "black": sum(1 for c in p.completed if puzzles[c].color == "black")}
                          for p in game.players]
    outcome["action_counts"] = action_counts(game)
    if tmp is not None:
        outcome["replay_path"] = None
    return outcome


experiment_game.uses_pool = True  # the worker passes its pool of live bot processes


def game_row(rule_set: str, task, outcome: dict) -> dict:
    """One game as a flat row: the rule set, the deal, the length and every seat's figures."""
    result = outcome["result"]
    seats = outcome.get("seats") or []
    ranking = list(result["ranking"])
    if len(task.bots) == 1 and "won" in result:
        ranking = [1 if result["won"] else 2]
    row = {"rule_set": rule_set, "group": task.group, "rotation": task.rotation, "seed": task.seed,
           "rounds": result.get("rounds"), "adjudicated": bool(result.get("adjudicated")),
           "duration_s": round(float(outcome.get("duration_s") or 0.0), 4), "replay": outcome.get("replay_path") or ""}
    for s, bot in enumerate(task.bots):
        info = seats[s] if s < len(seats) else {}
        colours = (outcome.get("colours") or [{}] * len(task.bots))[s]
        row.update({f"seat{s}_bot": bot, f"seat{s}_score": result["scores"][s], f"seat{s}_rank": ranking[s],
                    f"seat{s}_white": colours.get("white", 0), f"seat{s}_black": colours.get("black", 0),
                    f"seat{s}_faults": len(info.get("faults") or []),
                    f"seat{s}_forfeited": bool((result.get("forfeited") or [False] * len(task.bots))[s])})
    row.update(action_columns(outcome))
    return row


def run_experiment(cfg: ExperimentConfig, progress: bool = True, echo=None, game_fn=None,
                   tick_s: float = 10.0) -> dict:
    """Play (or continue) every rule set's games; returns ``{"rows", "failed", "elapsed_s", "games_per_s", ...}``.

    Each finished game's row is stored at once in ``OUTPUT/experiment.sqlite``; games stored
    by an earlier run are not played again. Rows come back in schedule order (rule set,
    group, rotation) whatever order the workers finished in, so a report does not depend on
    timing. Without a progress bar a line is printed every ``tick_s`` seconds.
    """
    from tqdm import tqdm

    echo = echo or print
    output = Path(cfg.base.output)
    play = cfg.base.play
    keep = bool(cfg.base.replays)
    game_fn = game_fn or functools.partial(experiment_game, play=play, keep_replay=keep)
    tcfgs = [cfg.tournament(i) for i in range(len(cfg.rule_sets))]
    sequential = cfg.stop is not None
    jobs = [] if sequential else [(i, tcfg, task) for i, tcfg in enumerate(tcfgs) for task in schedule(tcfg)]
    index = {task.key: (i, tcfg) for i, tcfg, task in jobs}
    total = group_count(cfg.base) * cfg.base.seats * len(tcfgs) if sequential else len(jobs)
    if keep or play != "inprocess":
        for rs in cfg.rule_sets:
            (output / rs.name / ("replays" if keep else "")).mkdir(parents=True, exist_ok=True)
    store = ExperimentStore.open(output, fingerprint(cfg))
    stored = store.rows()
    plan = Plan(cfg, cfg.stop, stored) if sequential else None
    rows: dict[str, dict] = {k: r for k, r in stored.items() if sequential or k in index}
    before = len(rows)
    if before:
        of = f"at most {total}" if sequential else f"{total}"
        echo(f"arena: continuing {cfg.name}: {before} of {of} games already stored in {output}")
    failed: list[str] = []
    executor = make_executor(cfg.base.executor, cfg.base.address, cfg.base.concurrency, run=str(output.resolve()))

    def payload(task) -> dict:
        tcfg = tcfgs[plan.waiting[task.key]] if sequential else index[task.key][1]
        request = build_request(tcfg, task, Path(tcfg.output).resolve())
        if play == "inprocess":
            request["log_dir"] = None
        return {"request": request, "play": play, "game_fn": game_fn}

    def on_death(keys, detail) -> None:
        echo(f"arena: {detail} (games {', '.join(keys)})")

    bar = tqdm(total=total, initial=before, unit="game", disable=not progress, dynamic_ncols=True)
    ticker = Ticker(total, before, echo, every_s=tick_s)
    t0 = time.perf_counter()
    pending = plan.tasks() if sequential else (t for _, _, t in jobs if t.key not in rows)
    try:
        for task, reply in executor.run(pending, payload, lambda: False, on_death):
            i = plan.waiting.get(task.key) if sequential else index[task.key][0]
            if i is None:
                continue  # a game that came back twice (its worker was lost): counted once
            if isinstance(reply, Exception):
                failed.append(f"{task.key}: {reply}")
                echo(f"arena: game {task.key} was not played ({reply}); run again to retry it")
                if sequential:
                    plan.record(task.key, None)
            else:
                row = game_row(cfg.rule_sets[i].name, task, reply["outcome"])
                if not store.add(task.key, cfg.rule_sets[i].name, row):
                    continue  # played twice (a lost worker's game that came back): stored once
                rows[task.key] = row
                if sequential:
                    plan.record(task.key, row)
            bar.update(1)
            if not progress:
                ticker.update(1)
    except KeyboardInterrupt:
        raise Interrupted(f"interrupted: {len(rows)} of {total} games are stored in {output}; "
                         f"run the same command again to continue") from None
    finally:
        bar.close()
        store.close()
    elapsed = time.perf_counter() - t0
    if not progress and ticker.played:
        echo(ticker.line())
    played = len(rows) - before
    if sequential:
        order = {rs.name: k for k, rs in enumerate(cfg.rule_sets)}
        ordered = sorted((r for rs_rows in plan.rows for r in rs_rows),
                         key=lambda r: (order[r["rule_set"]], r["group"], r["rotation"]))
    else:
        ordered = [rows[task.key] for _, _, task in jobs if task.key in rows]
    out = {"rows": ordered, "failed": failed, "elapsed_s": elapsed, "scheduled": total,
           "stored_before": before, "played": played,
           "games_per_s": played / elapsed if elapsed > 0 else 0.0, "concurrency": cfg.base.concurrency}
    if sequential:
        out["sequential"] = plan.outcome()
    return out

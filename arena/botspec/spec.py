"""A bot's spec: its name, what it runs, its folder, options and time control.

The same spec is written on the command line, cutechess-style, and in a YAML file::

    arena match --engine "name=v2 cmd='python v2/bot.py' st=500ms option.depth=3" \\
                --engine "name=v1 cmd='python v1/bot.py'" --sprt elo0=0 elo1=10

    bots:
      - {name: v2, cmd: python v2/bot.py, time_control: {move_ms: 500}, options: {depth: 3}}

Keys of an ``--engine`` spec: ``name``, ``cmd`` (a command line) or ``bot`` (a registered
bot), ``dir`` (the folder the bot starts in, shown to it read-only; its command is read
from there: ``workdir`` in YAML), ``program_dir`` (a folder shown read-only),
``ro`` (one more read-only folder, repeatable: ``read_only``), ``tc`` (a chess clock in seconds as
cutechess writes it: ``tc=60+0.5`` is 60 s plus 0.5 s a move; ``ms`` only as a suffix), ``st``
(the time a move: ``st=0.5``, ``st=500ms``),
``move-ms``, ``game-ms``, ``increment-ms``, ``startup-ms``, and ``option.NAME=VALUE`` (the
bot's options, sent in ``hello``). Relative paths are the folder's the command was typed in.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from decimal import Decimal

from ..errors import UsageError
from .command import CommandError, anchor, split
from .wrappers import script_of

#: the longest bot name: names make file names (logs, replays) with a game key around them
MAX_NAME = 100
TIME_KEYS = ("move_ms", "game_ms", "increment_ms", "startup_ms", "grace_ms", "mode")

#: the longest time any time-control field may name: a day, in milliseconds. A wait is
#: handed to ``poll()``, which takes at most 2**31 - 1 ms; a day is far below that and far
#: above any game worth playing.
MAX_MS = 86_400_000


def too_long(field: str, ms: int) -> str | None:
    """The sentence for a time-control value over :data:`MAX_MS`, or None when it is within."""
    if ms > MAX_MS:
        return f"{field} must be at most {MAX_MS} ms (a day), got {ms if ms < 10**18 else 'more'}"
    return None


class NameError_(UsageError):
    """A bot name that cannot be used (too long, empty, control characters)."""


def check_name(name) -> str:
    """``name`` if it can name a bot, else :class:`NameError_` with a sentence."""
    if not isinstance(name, str) or not name.strip():
        raise NameError_(f"a bot's name must be non-empty text, got {name!r}")
    if len(name) > MAX_NAME or len(name.encode("utf-8")) > MAX_NAME:
        raise NameError_(f"the bot name {name[:40]!r}... is {len(name)} characters long; a name has at most "
                         f"{MAX_NAME} (it becomes part of file names)")
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise NameError_(f"the bot name {name!r} holds a control character")
    if name != name.strip():
        raise NameError_(f"the bot name {name!r} starts or ends with a space")
    return name


@dataclass(frozen=True)
class BotSpec:
    """One bot: its display name, and a registered name or a command line (anchored: its
    relative paths made absolute against ``base``, the folder it was typed in).

    ``program_dir`` and ``read_only``: folders shown to the bot read-only, besides its
    program's own; ``time_control``: keys that replace the tournament's for this bot."""

    name: str
    bot: str | None = None
    cmd: tuple[str, ...] | None = None
    options: dict = field(default_factory=dict, hash=False, compare=False)
    program_dir: str | None = None
    read_only: tuple[str, ...] = ()
    time_control: dict | None = field(default=None, hash=False, compare=False)
    base: str | None = field(default=None, hash=False, compare=False)

    def seat_request(self, name: str | None = None) -> dict:
        """The ``seats`` entry of a game request for this bot."""
        out = {"name": name or self.name, "bot": self.bot, "cmd": list(self.cmd) if self.cmd else None,
               "options": dict(self.options)}
        if self.program_dir:
            out["program_dir"] = self.program_dir
        if self.read_only:
            out["read_only"] = list(self.read_only)
        if self.time_control:
            out["time_control"] = dict(self.time_control)
        if self.base and self.cmd:
            out["base"] = self.base
        return out

    @classmethod
    def command(cls, cmd, base: str | None = None, name: str | None = None, workdir: str | None = None,
                **kw) -> "BotSpec":
        """A command-line bot typed in ``base`` (its name: ``name`` or the program's). With
        ``workdir`` (a folder, relative to ``base``) the bot starts in that folder, shown to it
        read-only, and its command is read from there (``env -C DIR`` in front of it: the
        command means the same on every machine and in every tier)."""
        base = os.path.abspath(base or os.getcwd())
        folder = kw.pop("program_dir", None)
        ro = tuple(_folder(p, base, "read_only") for p in kw.pop("read_only", ()) or ())
        program_dir = _folder(folder, base, "dir") if folder else None
        if workdir:
            base = _folder(workdir, base, "workdir")
            ro += (base,) if base not in ro else ()
        words = tuple(anchor(cmd, base))
        # a file the author's command names in the folder it was typed in is the bot's
        # (``python -m policy_bot weights.npz``): that file, read-only, never its folder; a
        # name that leads elsewhere through a link (into another bot's folder) names nothing
        script = script_of(words)
        ro += tuple(w for w in words[1:] if os.path.isabs(w) and os.path.isfile(w) and w != script
                    and _really_in(w, base) and w not in ro)
        if workdir:
            words = ("env", "-C", base, *words)
        return cls(name or default_name(words), None, words, program_dir=program_dir, read_only=ro, base=base, **kw)


def _really_in(path: str, folder: str) -> bool:
    """Whether ``path``, its links followed, lies in ``folder`` (its links followed too)."""
    real, home = os.path.realpath(path), os.path.realpath(folder)
    return os.path.commonpath([home, real]) == home


def _folder(path: str, base: str, key: str) -> str:
    full = os.path.normpath(os.path.join(base, os.path.expanduser(path)))
    if not os.path.isdir(full):
        if os.path.lexists(full):
            raise CommandError(f"{key}={path}: {full} is not a folder (give the folder to show the bot)")
        raise CommandError(f"{key}={path}: no such folder ({full})")
    if not os.access(full, os.R_OK | os.X_OK):
        raise CommandError(f"{key}={path}: you cannot read the folder {full} yourself, so no bot you run can "
                           "be shown it (bots see at most what the arena's user may read)")
    return full


def _program_path(words) -> str:
    """The path that names a command-line bot: its script's, else its program's."""
    from .wrappers import _commands, _walk, script_of
    words = list(words)
    w = _walk(words)
    script = script_of(words)
    if script:
        return script
    rest = words[w.program:]
    if "-m" in rest[:-1]:  # python -m pkg.bot: the module names it
        return rest[rest.index("-m") + 1].replace(".", "/")
    if w.inner:
        first = next(iter(_commands(w.inner)), None)
        if first:
            return _program_path(first)
    return words[w.program]


def _stem(path: str) -> str:
    base = os.path.basename(path.rstrip("/")) or path
    return os.path.splitext(base)[0] if "." in base[1:] else base


def default_name(words) -> str:
    """A command-line bot's name before names are made distinct: its script's or program's stem."""
    return _stem(_program_path(words))


def distinct_names(commands: list, taken=()) -> list[str]:
    """Names for command-line bots (each a list of anchored words): the file name's stem
    where that is unique, else the shortest trailing path that tells them apart
    (``v2/bot``, ``v1/bot``), else the word in which their commands differ (``bot-fast``,
    ``bot-slow`` for ``bot.py --fast`` and ``bot.py --slow``), else a number (``bot-2``).
    ``taken``: names already used (registered bots typed on the same line)."""
    paths = [os.path.normpath(_program_path(c)) for c in commands]
    parts = [[p for p in path.split(os.sep) if p] for path in paths]
    for p in parts:
        if p:
            p[-1] = _stem(p[-1])
    depth = [1] * len(paths)
    taken = set(taken)

    def name(i: int) -> str:
        return "/".join(parts[i][-depth[i]:]) if parts[i] else "bot"

    for _ in range(64):
        names = [name(i) for i in range(len(paths))]
        clash = [i for i, n in enumerate(names) if names.count(n) > 1 or n in taken]
        grow = []
        for i in clash:
            same = [j for j in clash if names[j] == names[i] and j != i]
            if depth[i] < len(parts[i]) and (not same or not all(parts[j] == parts[i] for j in same)):
                grow.append(i)
        if not grow:
            break
        for i in grow:
            depth[i] += 1
    names = [name(i) for i in range(len(paths))]
    # the same program typed with other arguments (``bot.py --fast``, ``bot.py --slow``):
    # named by the first word in which its command differs from the others of its name
    words = [list(c) for c in commands]
    for n in set(names):
        same = [i for i, m in enumerate(names) if m == n]
        if len(same) < 2:
            continue
        for i in same:
            others = [words[j] for j in same if j != i and words[j] != words[i]]
            if not others:
                continue
            diff = next((w for k, w in enumerate(words[i]) if all(k >= len(o) or o[k] != w for o in others)), None)
            tag = re.sub(r"[^A-Za-z0-9_.+]+", "-", os.path.basename(diff or "")).strip("-") if diff else ""
            if tag:
                names[i] = f"{n}-{tag}"
    out: list[str] = []
    for n in names:
        candidate, k = n, 2
        while candidate in out or candidate in taken:
            candidate, k = f"{n}-{k}", k + 1
        out.append(candidate)
    return out


TC_GRAMMAR = ("tc= is a chess clock as cutechess-cli writes it, in seconds: tc=60 (60 s a game), tc=60+0.5 "
              "(and 0.5 s more each move), tc=1:30+1 (minutes:seconds); milliseconds only with ms (tc=500ms+10ms); "
              "a time a move is st= (st=0.5, st=200ms)")


def _duration_ms(text: str, minutes: bool = False) -> int | None:
    """``2``, ``0.5``, ``2s`` (seconds), ``200ms``, and with ``minutes`` ``1:30`` -> ms; None if not one."""
    m = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)(ms|s)?", text)
    if m:
        return round(Decimal(m.group(1)) * (1 if m.group(2) == "ms" else 1000))  # exact: no overflow
    m = re.fullmatch(r"(\d+):(\d+(?:\.\d*)?)", text) if minutes else None
    if m:
        return round(int(m.group(1)) * 60000 + Decimal(m.group(2)) * 1000)
    return None


def _tc(value: str) -> dict:
    """cutechess-cli's ``tc=``: ``60`` -> a chess clock of 60 s; ``60+0.5`` -> and 0.5 s more
    each move; ``1:30`` minutes:seconds; ``ms`` only as a suffix (``500ms+10ms``). A moves/
    period, an hourglass, ``inf`` and a bare number of 100 or more (seconds, or the
    milliseconds a move that ``tc=`` once meant?) get a sentence."""
    if value in ("inf", "infinite"):
        raise UsageError(f"tc={value}: a game here always has a time limit; {TC_GRAMMAR}")
    if "/" in value:
        raise UsageError(f"tc={value}: a clock refilled every N moves (moves/time) is not a time control of the "
                         f"arena; give the game's whole time: {TC_GRAMMAR}")
    if "hg" in value:
        raise UsageError(f"tc={value}: the hourglass is not a time control of the arena; {TC_GRAMMAR}")
    parts = value.split("+")
    game = _duration_ms(parts[0], minutes=True)
    inc = _duration_ms(parts[1]) if len(parts) == 2 else 0 if len(parts) == 1 else None
    if game is None or inc is None:
        raise UsageError(f"tc={value}: not a time control; {TC_GRAMMAR}")
    for field, ms in (("the game's time", game), ("the increment", inc)):
        if too_long(field, ms):
            raise UsageError(f"tc={value}: {too_long(field, ms)}")
    if len(parts) == 1 and re.fullmatch(r"\d+", value) and int(value) >= 100:
        raise UsageError(f"tc={value}: {value} seconds a game, or {value} ms a move as tc= once meant? Write "
                         f"tc={value}s for the clock or st={value}ms for a time a move")
    if game <= 0:
        raise UsageError(f"tc={value}: the game's time must be more than 0; {TC_GRAMMAR}")
    return {"game_ms": game, "increment_ms": inc, "mode": "clock"}


def _st(value: str) -> dict:
    """cutechess-cli's ``st=``: seconds a move (``st=0.5``), or ``ms`` (``st=500ms``)."""
    ms = _duration_ms(value)
    if not ms:
        raise UsageError(f"st={value}: give the time a move in seconds (st=0.5) or milliseconds (st=500ms)")
    if too_long("the time a move", ms):
        raise UsageError(f"st={value}: {too_long('the time a move', ms)}")
    return {"move_ms": ms}


def parse_spec(text: str, base: str | None = None) -> dict:
    """A cutechess-style spec (``name=v2 cmd='python v2/bot.py' tc=500 option.depth=3``)
    as the mapping a YAML file's ``bots:`` entry holds. :class:`UsageError` names the word."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"--engine {text!r}: cannot split it ({exc})") from None
    out: dict = {}
    for word in words:
        key, eq, value = word.partition("=")
        if not eq:
            raise UsageError(f"--engine {text!r}: {word!r} is not KEY=VALUE (keys: name, cmd, bot, dir, program_dir, ro, "
                             "tc, st, move-ms, game-ms, increment-ms, startup-ms, option.NAME)")
        k = key.replace("-", "_")
        if k == "name":
            out["name"] = value
        elif k in ("cmd", "bot"):
            if k in out:
                raise UsageError(f"--engine {text!r}: {key} is given twice")
            out[k] = value
        elif k in ("dir", "workdir"):
            out["workdir"] = value
        elif k == "program_dir":
            out["program_dir"] = value
        elif k in ("ro", "read_only"):
            out.setdefault("read_only", []).append(value)
        elif k in ("tc", "st"):
            out.setdefault("time_control", {}).update(_tc(value) if k == "tc" else _st(value))
        elif k in ("move_ms", "game_ms", "increment_ms", "startup_ms", "grace_ms"):
            if not value.isdigit():
                raise UsageError(f"--engine {text!r}: {key} takes whole milliseconds, got {value!r}")
            if too_long(key, int(value)):
                raise UsageError(f"--engine {text!r}: {too_long(key, int(value))}")
            out.setdefault("time_control", {})[k] = int(value)
        elif key.startswith("option.") and len(key) > len("option."):
            out.setdefault("options", {})[key[len("option."):]] = _value(value)
        else:
            raise UsageError(f"--engine {text!r}: unknown key {key!r} (keys: name, cmd, bot, dir, program_dir, ro, tc, st, "
                             "move-ms, game-ms, increment-ms, startup-ms, option.NAME)")
    if ("cmd" in out) == ("bot" in out):
        raise UsageError(f"--engine {text!r}: give exactly one of cmd=COMMAND or bot=NAME")
    if "cmd" in out:
        split(out["cmd"])  # a sentence now rather than later
    if base is not None:
        out["base"] = base
    return out


def _value(text: str):
    """An option's value: a number or true/false where it reads as one, else the text."""
    if text in ("true", "false"):
        return text == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def from_mapping(item: dict, base: str | None = None) -> BotSpec:
    """A bot from the mapping a YAML ``bots:`` entry (or :func:`parse_spec`) holds, its
    command checked to start here (:class:`CommandError` otherwise)."""
    from .command import locate

    base = item.get("base") or base or os.getcwd()
    tc = dict(item["time_control"]) if item.get("time_control") else None
    if item.get("bot"):
        if item.get("workdir"):  # refused as for a command, although a registered bot runs installed code
            _folder(item["workdir"], base, "dir")
        return BotSpec(check_name(item.get("name") or item["bot"]), item["bot"], None, dict(item.get("options") or {}),
                       time_control=tc)
    spec = BotSpec.command(item["cmd"], base, item.get("name"), options=dict(item.get("options") or {}),
                           program_dir=item.get("program_dir"), read_only=item.get("read_only") or (),
                           time_control=tc, workdir=item.get("workdir"))
    locate(item["cmd"], spec.base)
    return spec


def command_line(bots=(), cmds=(), engines=(), base: str | None = None) -> list[BotSpec]:
    """The bots of a command line, in this order: registered names, ``--cmd`` commands,
    ``--engine`` specs; command-line bots without a name get distinct ones
    (:func:`distinct_names`), every name is checked."""
    base = os.path.abspath(base or os.getcwd())
    items: list[dict] = [{"bot": b} for b in bots] + [{"cmd": c} for c in cmds] + \
        [parse_spec(e, base) for e in engines]
    out = [from_mapping(item, base) for item in items]
    unnamed = [i for i, item in enumerate(items) if item.get("cmd") and not item.get("name")]
    if unnamed:
        fixed = {out[i].name for i in range(len(out)) if i not in unnamed}
        for i, name in zip(unnamed, distinct_names([out[i].cmd for i in unnamed], taken=fixed)):
            out[i] = BotSpec(name, None, out[i].cmd, out[i].options, out[i].program_dir, out[i].read_only,
                             out[i].time_control, out[i].base)
    for spec in out:
        check_name(spec.name)
    return out

"""Every ``arena`` command of the README and the docs, run as a user types it.

``tests/doc_commands.py`` collects the commands (which ones, and why, is its docstring).
Each page's commands run in page order, each through ``sh -c`` exactly as shown, from a
fresh working folder of that page holding only what the page says the reader has there
(:data:`FOLDERS`): a checkout's ``tournaments/`` and ``bots/examples/`` when the page runs
``arena run tournaments/demo.yaml`` from the project's folder, the bot a page names
(``lucky.py`` written from the Python bot of ``docs/writing-a-bot.md``), the files an
earlier step of the page made. The user's ``PATH`` starts with the ``bin`` folder of this
test run's virtual environment (``arena`` and ``python``, as after ``activate``), and no
``--sandbox`` option is added: bots get the default tier, as they do for the reader.

Each page runs twice: as root, and as an ordinary user (when the suite runs as root, a
test user of its own, as ``tests/as_user.py`` makes one). Every command runs in a mount
namespace of its own whose ``/tmp`` and ``/srv`` are the folder's private ones, so a
page's ``/tmp/cbot`` or ``/srv/arena/ladder.db`` is the page's own and the two users'
runs, and other suites on the machine, never meet.

A command passes when it exits 0 (or with the code :data:`EXPECTED_EXIT` gives a
command the docs show failing) and prints no Python traceback. A command that cannot run
here (a server that never stops, a cluster's address, hours of training) is in
:data:`CANNOT_RUN` with the reason; the tables are checked against the docs, so a new
page must say what its reader has (:data:`FOLDERS`) and a stale entry fails.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from doc_commands import PROJECT, code_block, doc_commands

#: Kinds of commands the test does not run, and why (a pattern of the command, the reason).
CANNOT_RUN_KINDS = [
    (r"^arena serve ", "a server that runs until it is stopped (tests/test_web_*.py serve leagues)"),
    (r"^arena play .*--human\b", "waits for a person to play at the page it serves (tests/test_human_table.py "
        "and tests/test_human_browser.py play such games through the page's API and in Chromium)"),
    (r"--dask\b|^arena cluster ", "needs a Dask cluster at the address shown, or starts one "
        "(tests/test_tournament_dask.py and tests/test_cluster_*.py play on Dask clusters)"),
]

#: Commands the test does not run, and why.
CANNOT_RUN = {
    "arena match a b c --seats 3 --games 60": "a, b and c stand for the names of three bots",
    "arena submit bots/examples/packages/python --server https://league.example.org --token TOKEN":
        "a league website of the reader's and a token of it (tests/test_web_submissions.py submits packages)",
    "arena play greedy greedy --rules slow-black": "slow-black is the house rule the page has the reader write "
        "and install as a package of their own",
    'arena match greedy --cmd "python -m arena.rl.policy_bot arena.rl.examples.maskable_ppo:load_policy '
    'ppo-run/final.zip" -n 20 --startup-ms 60000 --sandbox basic': "needs a model from hours of MaskablePPO "
        "training, and torch and sb3-contrib (the learn extra), which the tests do not install",
    "arena bench env [--games 40] [--rules revised,ghost] [--json]": "a synopsis: the brackets mark optional "
        "parts",
    "arena bench tournament --play bots --concurrency 1,2,4,8 --repeat 3": "a benchmark of five minutes on 2 "
                                                                           "cores",
    "arena bench tournament": "a benchmark of half a minute on 2 idle cores, minutes on a busy machine",
    "arena bench serve": "a benchmark of a served league, a minute and more on 2 cores",
    "arena bench experiment": "a benchmark of a minute and more on 2 cores",
    "arena bench experiment --bots planner-fast,planner-fast --games 20 --no-runner": "a benchmark of the "
        "planner's games, a minute and more on 2 cores",
    "arena experiment tournaments/seat-advantage.yaml --no-progress": "340 games of the planner, 80 s on 2 cores",
    "arena experiment tournaments/seat-advantage.yaml --seats 3 -o results/seat-advantage-3 --no-progress":
        "450 games of the planner, 90 s on 2 cores",
    "arena experiment tournaments/seat-advantage.yaml --seats 4 -o results/seat-advantage-4 --no-progress":
        "520 games of the planner, 160 s on 2 cores",
    "arena experiment tournaments/seat-advantage-sweep.yaml --no-progress": "640 games of the planner under 16 "
        "rule sets, minutes on 2 cores",
    "arena experiment tournaments/seat-advantage-search.yaml --no-progress": "960 games of the planner, ten "
        "minutes on 2 cores",
    "arena cluster status tcp://SCHEDULER:8786": "SCHEDULER is the reader's Dask scheduler",
    "arena experiment tournaments/house-rules.yaml": "1600 games, over a minute on 2 cores; the page's "
        "--games 40 runs the same file",
    "arena experiment tournaments/house-rules.yaml --json": "1600 games from a fresh folder (see above)",
    "arena experiment tournaments/house-rules.yaml --csv": "1600 games from a fresh folder (see above)",
    "arena experiment tournaments/house-rules.yaml --no-progress": "1600 games from a fresh folder (see above)",
    "arena match --engine \"name=new cmd='python v2/bot.py' st=500ms option.depth=3\" --engine \"name=old "
    "cmd='python v1/bot.py'\" --sprt elo0=0 elo1=10": "an SPRT of the reader's two versions plays until they "
        "differ by 10 Elo, thousands of games for two copies of one bot (the same specs without --sprt run "
        "from docs/writing-a-bot.md)",
}

#: Commands the docs show failing, and the exit code they give.
EXPECTED_EXIT = {"arena check-bot -- ./nope.sh": 2}

#: Commands run otherwise than shown, and why: the command run instead.
RUN_AS = {
    "pip install . && arena run tournaments/demo.yaml": (
        "arena run tournaments/demo.yaml", "the project is installed already: the tests run in its environment"),
}

LUCKY = code_block("docs/writing-a-bot.md", "## Python: the SDK in ten lines")
CHECKOUT = ("tournaments", "bots/examples")
TWO_VERSIONS = {"v1/bot.py": LUCKY, "v2/bot.py": LUCKY}

#: What the reader has in the working folder of each page that shows commands: folders
#: of a checkout of the project, and files (name: text).
FOLDERS = {
    "README.md": (CHECKOUT, {"my_bot.py": LUCKY, **TWO_VERSIONS}),  # the reader's bots: the docs' own
    "docs/architecture.md": (CHECKOUT, {}),
    "docs/bots.md": ((), {}),
    "docs/cluster.md": (CHECKOUT, {}),
    "docs/experiments.md": (CHECKOUT, {}),
    "docs/leagues.md": ((), {"mybot.py": LUCKY}),
    "docs/learning.md": ((), {}),
    "docs/playing.md": ((), {}),
    "docs/protocol.md": ((), {}),
    "docs/replays.md": ((), {}),
    "docs/tournaments.md": (CHECKOUT, {"my_bot.py": LUCKY, "raw.py": LUCKY, **TWO_VERSIONS}),
    "docs/writing-a-bot.md": (CHECKOUT, {"lucky.py": LUCKY, **TWO_VERSIONS}),
    "docs/writing-a-variant.md": ((), {}),
}

#: Steps a page has the reader take before a command of it (page: [(the command, or None
#: for the page's first, the step, why)]); each step is a command of the docs.
STEPS = {
    "docs/writing-a-bot.md": [("arena play greedy --cmd /tmp/cbot --sandbox strict",
                               "gcc -O2 -o /tmp/cbot bots/examples/c/bot.c", "the block's own first step")],
    "docs/learning.md": [('arena play random --cmd "python -m arena.rl.policy_bot '
                          'arena.rl.examples.reinforce:load_policy policy.npz" --seed 1',
                          "python -m arena.rl.examples.reinforce --episodes 2000 --out policy.npz",
                          "section 7 trains the policy section 9 plays")],
    "docs/replays.md": [(None, "arena play greedy random --seed 7 --replay game.json",
                         "the replay the page's first line saves (README.md's first example)")],
}

#: Commands that neither read nor write the working folder: run on the first page that
#: shows them, not again on the next.
RUN_ONCE = {"arena bench engine", "arena bench protocol", "arena bench schedule", "arena bots", "arena variants",
            "arena plugins", "arena cards", "arena --help"}

#: Pages whose run takes long (marked slow).
SLOW_PAGES = {"README.md", "docs/tournaments.md", "docs/experiments.md", "docs/leagues.md", "docs/bots.md",
              "docs/learning.md", "docs/writing-a-bot.md"}

USERS = ("root", "user")
TIMEOUT = 240  # a command that takes longer belongs in CANNOT_RUN, with the reason


def why_not_run(text: str) -> str | None:
    """The reason a command of the docs is not run, or None."""
    return CANNOT_RUN.get(text) or next((why for pattern, why in CANNOT_RUN_KINDS if re.search(pattern, text)),
                                        None)


@functools.lru_cache(maxsize=None)
def page_commands() -> dict[str, list]:
    """The commands to run, page by page, in order: (line, shown text, text to run), each
    once (prose naming a command the page runs already is not run again)."""
    out: dict[str, list] = {}
    once = set()
    for c in doc_commands():
        if why_not_run(c.text) or c.text in once:
            continue
        todo = out.setdefault(c.page, [])
        if any(shown == c.text for _, _, shown, _ in todo) and not c.block:
            continue
        if c.text in RUN_ONCE:
            once.add(c.text)
        todo.append((c.line, c.line, c.text, RUN_AS.get(c.text, (c.text,))[0]))
    for page, steps in STEPS.items():
        todo = out.setdefault(page, [])
        for before, step, _ in steps:
            line = next((t[0] for t in todo if t[2] == before), 1)
            todo.append((line - 0.5, line, f"(before it) {step}", step))
        todo.sort(key=lambda t: t[0])
    return {page: [t[1:] for t in todo] for page, todo in out.items()}


# ------------------------------------------------------------------ the tables and the docs
def test_every_command_of_the_docs_is_run_or_says_why_not():
    commands = doc_commands()
    shown = {c.text for c in commands}
    assert len(commands) > 50, "the docs' commands were found"
    for table in (CANNOT_RUN, EXPECTED_EXIT, RUN_AS, RUN_ONCE):
        assert set(table) <= shown, f"not in the docs any more: {sorted(set(table) - shown)}"
    assert not set(CANNOT_RUN) & (set(EXPECTED_EXIT) | set(RUN_AS))
    for pattern, _ in CANNOT_RUN_KINDS:
        assert any(re.search(pattern, text) for text in shown), f"no command of the docs is {pattern!r}"
    pages = {c.page for c in commands if not why_not_run(c.text)}
    assert pages <= set(FOLDERS), f"say what the reader has in the folder of {sorted(pages - set(FOLDERS))}"
    texts = {str(p.relative_to(PROJECT)): p.read_text() for p in (PROJECT / "docs").glob("*.md")}
    texts["README.md"] = (PROJECT / "README.md").read_text()
    for page, steps in STEPS.items():
        for before, step, _ in steps:
            assert any(step in t for t in texts.values()), f"{page}: the step {step!r} is not in the docs"
            assert before is None or before in {c.text for c in commands if c.page == page}, before


def test_the_prose_rule_tells_commands_from_names_of_commands():
    from doc_commands import is_whole_command

    assert is_whole_command('arena play greedy --cmd "python lucky.py"')
    assert is_whole_command("arena bots") and is_whole_command("arena --help")
    for mention in ("arena run", "arena play --pause-idle", "arena league play --games N",
                    "arena replay FILE", "arena league token new|list", "arena match ... -n 404",
                    "arena play --seed s", "arena run tournaments/FILE.yaml"):
        assert not is_whole_command(mention), mention


# ------------------------------------------------------------------ running a page
class Reader:
    """A fresh folder for one page and one user: ``work`` (the working folder), ``home``,
    and a private ``tmp`` and ``srv`` mounted at ``/tmp`` and ``/srv`` for its commands."""

    def __init__(self, page: str, who: str):
        from as_user import pick_uid

        self.root = os.geteuid() == 0
        self.uid, self.gid = (0, 0) if who == "root" or not self.root else (pick_uid(),) * 2
        if who == "user" and not self.root:
            self.uid, self.gid = os.geteuid(), os.getegid()
        # not below /tmp: a private /tmp is mounted over it
        self.base = Path(tempfile.mkdtemp(prefix="arena-docs-", dir="/var/tmp"))
        os.chmod(self.base, 0o755)
        self.work, self.home, self.tmp, self.srv = (self.base / n for n in ("work", "home", "tmp", "srv"))
        for d in (self.work, self.home, self.srv / "arena"):
            d.mkdir(parents=True)
        self.tmp.mkdir(mode=0o1777)
        os.chmod(self.tmp, 0o1777)
        folders, files = FOLDERS.get(page, ((), {}))
        for folder in folders:
            shutil.copytree(PROJECT / folder, self.work / folder,
                            ignore=shutil.ignore_patterns("__pycache__", "node_modules", "*.pyc"))
        for name, text in files.items():
            (self.work / name).parent.mkdir(parents=True, exist_ok=True)
            (self.work / name).write_text(text)
        if self.root and self.uid:
            for d in (self.work, self.home, self.srv / "arena"):
                for path in [d, *d.rglob("*")]:
                    os.lchown(path, self.uid, self.gid)
        self.bridge = None
        self.preexec = self._preexec()

    def _preexec(self):
        from arena.process.sandbox import CLONE_NEWNS, _make_bridges, _make_preexec, bridge_plan

        mounts = []
        if self.uid and self.root:
            venv_bin = os.path.dirname(sys.executable)
            needed = {os.path.realpath(sys.executable), sys.executable, venv_bin, str(PROJECT)}
            needed |= {p for p in sys.path if p and os.path.exists(p)}
            plan = bridge_plan(sorted(needed))
            if plan is None:
                raise RuntimeError(f"cannot bridge {sorted(needed)} for an ordinary user")
            if plan:
                self.bridge, mounts = _make_bridges(plan)
        # what the reader has installed stays where it is when it lies under /tmp (a checkout
        # and its venv cloned there, as CI may do): bound into the private /tmp before it is
        # mounted over the host's
        under = sorted({p for p in (str(PROJECT), sys.prefix, os.path.realpath(sys.prefix),
                                    os.path.realpath(str(PROJECT))) if p.startswith("/tmp/")})
        for path in [p for p in under if not any(p != q and p.startswith(q + "/") for q in under)]:
            inside = self.tmp / os.path.relpath(path, "/tmp")
            inside.mkdir(parents=True, exist_ok=True)
            mounts.append((os.fsencode(path), os.fsencode(str(inside))))
        mounts = [*mounts, (os.fsencode(self.tmp), b"/tmp"), (os.fsencode(self.srv), b"/srv")]
        if not self.root:
            return None  # an ordinary user already: no namespace of its own (paths are the host's)
        return _make_preexec([], [], CLONE_NEWNS, mounts, (self.uid, self.gid) if self.uid else None)

    def env(self) -> dict:
        venv_bin = os.path.dirname(sys.executable)
        return {"PATH": f"{venv_bin}:/usr/local/bin:/usr/bin:/bin", "HOME": str(self.home),
                "VIRTUAL_ENV": os.path.dirname(venv_bin), "LANG": "C.UTF-8",
                "ARENA_INSTANCE": os.environ.get("ARENA_INSTANCE", "")}

    def run(self, command: str) -> dict:
        """Run ``command`` with ``sh -c`` in the working folder: exit code, output, seconds."""
        t0 = time.monotonic()
        proc = subprocess.Popen(["sh", "-c", command], cwd=self.work, env=self.env(), preexec_fn=self.preexec,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            out, err = proc.communicate()
            err += f"\narena-docs-test: killed after {TIMEOUT} s; too long for a test: say so in CANNOT_RUN"
        return {"rc": proc.returncode, "out": out, "err": err, "s": time.monotonic() - t0}

    def close(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)
        if self.bridge:
            shutil.rmtree(self.bridge, ignore_errors=True)


def run_page(page: str, who: str) -> list[dict]:
    """Run every command of ``page`` as ``who``, in page order, in one fresh folder."""
    reader = Reader(page, who)
    results = []
    try:
        for line, shown, command in page_commands()[page]:
            if not reader.root and "/srv/" in command:
                continue  # /srv is the host's: a private one needs root's mount namespace
            res = reader.run(command)
            res.update(line=int(line), shown=shown, command=command, page=page, who=who)
            results.append(res)
    finally:
        reader.close()
    return results


def verdict(res: dict) -> str | None:
    """Why a command's run failed, in one line; None when it passed."""
    want = EXPECTED_EXIT.get(res["shown"], 0)
    text = res["out"] + res["err"]
    if "Traceback (most recent call last)" in text:
        return "a Python traceback: " + text[text.index("Traceback"):][-300:].replace("\n", " | ")
    if res["rc"] != want:
        last = [ln for ln in (res["err"] or res["out"]).strip().splitlines() if ln.strip()][-3:]
        return f"exit {res['rc']} (want {want}): " + " | ".join(last)[-400:]
    return None


_LOCK = threading.Lock()
_POOL: dict = {}


def _started(session_items) -> dict:
    """The runs of every selected page and user, started together on first use, two at a
    time (the slow pages first)."""
    with _LOCK:
        if not _POOL:
            pool = ThreadPoolExecutor(max_workers=2)
            wanted = [item.callspec.params["page_user"] for item in session_items
                      if getattr(item, "callspec", None) and "page_user" in item.callspec.params
                      and item.module.__name__ == __name__]
            slow_first = sorted(dict.fromkeys(wanted), key=lambda pu: pu[0] not in SLOW_PAGES)
            _POOL.update({pu: pool.submit(run_page, *pu) for pu in slow_first})
            _POOL["pool"] = pool
        return _POOL


PAGES = sorted(page_commands())


@pytest.mark.parametrize("page_user", [
    pytest.param((page, who), id=f"{page}-{who}", marks=[pytest.mark.slow] if page in SLOW_PAGES else [])
    for page in PAGES for who in USERS])
def test_the_commands_of_a_page_run_from_a_fresh_folder(page_user, request):
    if page_user[1] == "user" and os.geteuid() == 0:
        from strict_check import require_strict

        require_strict()
    started = _started(request.session.items)
    t0 = time.monotonic()
    results = started[page_user].result(timeout=3000)
    lines = []
    failed = []
    for res in results:
        why = verdict(res)
        lines.append(f"{'FAIL' if why else 'pass'} {res['s']:6.1f}s {res['page']}:{res['line']} "
                     f"{res['shown']}" + (f"\n      {why}" if why else ""))
        if why:
            failed.append(lines[-1])
    print(f"{page_user[0]} as {page_user[1]} (waited {time.monotonic() - t0:.1f} s):\n" + "\n".join(lines))
    assert not failed, f"{len(failed)} of {len(results)} commands of {page_user[0]} failed as " \
                       f"{page_user[1]}:\n" + "\n".join(failed)

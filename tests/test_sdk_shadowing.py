"""A bot author's ``engine.py`` beside an SDK bot must not break the SDK ("'engine' is not a
package"): the SDK imports the project's engine first and says so on stderr, and when the
bot imported its own file first, the error names the file that shadows the package."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def run_script(folder, body: str) -> subprocess.CompletedProcess:
    (folder / "engine.py").write_text("HELPER = 42\n")
    script = folder / "bot.py"
    script.write_text(textwrap.dedent(body))
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=folder)


def test_the_sdk_works_beside_an_engine_py(tmp_path):
    r = run_script(tmp_path, """
        from arena.sdk import Bot
        from engine import Game, RuleSpec, observation
        game = Bot().game(observation(Game.new(RuleSpec(), 2, 0), 0))
        print("rebuilt", type(game).__name__)
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "rebuilt Game"
    assert f"{tmp_path / 'engine.py'} has the name of the project's package 'engine'" in r.stderr


def test_an_engine_py_imported_before_the_sdk_is_named(tmp_path):
    r = run_script(tmp_path, """
        import engine
        from arena.sdk import Bot
        try:
            Bot().game({})
        except ImportError as exc:
            print(exc)
    """)
    assert r.returncode == 0, r.stderr
    assert f"{tmp_path / 'engine.py'} shadows the project's package 'engine'" in r.stdout

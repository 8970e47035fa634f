"""The packaged card files' JSON twins hold what the YAML holds, and a twin that was not
made from the YAML as it is now is never read."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys

import yaml

from engine import cards
from engine.cards import CARD_DIR, load_card_file


def test_every_packaged_card_file_has_a_current_twin():
    for path in sorted(CARD_DIR.glob("*.yaml")):
        twin = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        assert twin["source_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest(), \
            f"{path.name} changed since its twin was written: run python tools/card_twins.py"
        # the same data in the same order (the order of the shapes is their index)
        assert json.dumps(twin["data"]) == json.dumps(yaml.safe_load(path.read_text(encoding="utf-8")))


def test_a_stale_twin_is_ignored_and_the_yaml_read(tmp_path):
    shutil.copy(CARD_DIR / "base.yaml", tmp_path / "base.yaml")
    twin = json.loads((CARD_DIR / "base.json").read_text(encoding="utf-8"))
    twin["data"]["puzzles"] = twin["data"]["puzzles"][:3]  # a twin that says something else ...
    (tmp_path / "base.json").write_text(json.dumps(twin), encoding="utf-8")
    assert len(load_card_file(tmp_path / "base.yaml").puzzles) == 3  # ... is read while current
    (tmp_path / "base.yaml").write_text((CARD_DIR / "base.yaml").read_text() + "\n# edited\n")
    assert len(load_card_file(tmp_path / "base.yaml").puzzles) == 52  # the YAML changed: read it


def test_playing_needs_no_yaml_import():
    code = ("import sys; from engine import Game, RuleSpec; g = Game.new(RuleSpec.make(['revised']), 2, 1); "
            "g.apply(g.legal_actions()[0]); print('yaml' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_tool_writes_twins_that_load(tmp_path, monkeypatch):
    shutil.copy(CARD_DIR / "ghost.yaml", tmp_path / "ghost.yaml")
    monkeypatch.setattr(cards, "CARD_DIR", tmp_path)
    [twin] = cards.write_json_twins()
    assert twin == tmp_path / "ghost.json"
    assert load_card_file(tmp_path / "ghost.yaml") == load_card_file(CARD_DIR / "ghost.yaml")

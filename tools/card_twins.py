"""Write the JSON twins of the packaged card files (``engine/cards/*.json``).

Each twin holds a card file's data and the SHA-256 of the YAML text it was made from; the
engine reads a twin only while that hash is the YAML's (see :mod:`engine.cards`), and
``tests/test_card_twins.py`` fails while a twin is stale. After editing a card file::

    python tools/card_twins.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.cards import write_json_twins  # noqa: E402

if __name__ == "__main__":
    for twin in write_json_twins():
        print(twin)

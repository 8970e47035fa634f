"""Replays shown to people: in the terminal and as self-contained HTML viewers.

Owns :mod:`.render` (pieces, puzzles and colours as text), :mod:`.view` (``arena replay``:
re-simulate and print a game turn by turn), :mod:`.html` and :mod:`.html_assets`
(``arena replay --html``: one HTML file with the game's every state and the viewer's CSS
and JavaScript). Replays themselves (their format and re-simulation) are the engine's
(:mod:`engine.replay`).

May import: ``engine`` and :mod:`arena.errors`.
"""

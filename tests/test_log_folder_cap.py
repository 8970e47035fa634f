"""The log folder's cap counts what the logs hold, not what fast games might have written:
between two counts of the folder each game's logs are reserved at their full cap, and when
those reservations reach the folder's cap the folder is counted again before any log is cut.
(Counted every 5 s only, 2 MB reserved a game reached the 256 MB cap in seconds at 60
games/s, and every later log of the run was cut to its marker line.)"""

from __future__ import annotations

import time
from pathlib import Path

from arena import referee
from arena.process.sandbox import Limits


class Seat:
    def __init__(self, name):
        self.name = name


def test_fast_games_with_quiet_bots_keep_their_logs(tmp_path):
    limits = Limits(log_kb=1024, log_total_mb=8)  # four games' worth of reservations
    seats = [Seat("a"), Seat("b")]
    caps = []
    for _ in range(40):  # far more games than 8 MB of reservations allow, within one count's interval
        caps += [cap for _, cap in referee._log_paths(tmp_path, seats, None, limits)]
        time.sleep(0.002)  # a fast game
    assert caps == [1024 << 10] * 80
    assert not any("reached their cap" in p.read_text() for p in tmp_path.iterdir())


def test_logs_that_fill_the_folder_are_still_cut(tmp_path):
    limits = Limits(log_kb=1024, log_total_mb=4)
    seats = [Seat("a"), Seat("b")]
    for _ in range(2):
        for path, cap in referee._log_paths(tmp_path, seats, None, limits):
            Path(path).write_bytes(b"x" * cap)  # the bots wrote all they may
    time.sleep(0.01)  # past twenty times the last count's duration: the folder is counted again
    paths = referee._log_paths(tmp_path, seats, None, limits)
    assert [cap for _, cap in paths] == [0, 0]
    assert "reached their cap of 4 MB" in Path(paths[0][0]).read_text()

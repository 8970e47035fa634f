"""Coordinator side: the replay and bot logs a game's record carries, written to the output folder.

A game played with ``return_files`` (every game of the cluster executor) comes back with its
replay's text (``outcome["replay_text"]``) and each seat's stderr log (``seat["stderr_text"]``,
already capped at ``log_kb`` per bot and game by the referee on the worker).
:class:`Landing` writes them where a local worker would have: the replay to the request's
``replay_path``, each log to the request's ``log_dir`` under the name the referee gave it
(mode 0600), and keeps the folder's cap (``log_total_mb``, 256 MB by default) here, where
the folder is. The texts leave the record; ``replay_path`` and ``stderr_log`` name the
written files, as they do for a local game. What a bot wrote to a game's log after the
record left its worker (its last words after ``game_over``) comes later and is appended to
that log (:meth:`Landing.append`), as a local log file keeps it. As a local game, a bot
that wrote nothing on stderr leaves no file, unless it writes after the record came.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from pathlib import Path

from ..process.sandbox import Limits
from ..referee import log_bytes

DEFAULT_LOG_TOTAL_MB = Limits.log_total_mb
#: the newest logs landed empty (so not written) that a late line may still make
SILENT_KEPT = 4096


class Landing:
    """Writes records' files into the coordinator's output folders, keeping the log caps."""

    def __init__(self):
        self.used: dict[str, int] = {}
        self.early: dict[str, bytes] = {}  # late lines whose game's log is not written yet
        self.silent: OrderedDict[str, None] = OrderedDict()  # landed empty: not written (yet)

    def _usage(self, log_dir: Path) -> int:
        key = str(log_dir)
        if key not in self.used:
            self.used[key] = log_bytes(log_dir)
        return self.used[key]

    def land(self, request: dict, outcome: dict) -> dict:
        """Write ``outcome``'s files as ``request`` asked; returns ``outcome`` without the texts."""
        text = outcome.pop("replay_text", None)
        path = request.get("replay_path")
        if text is not None and path:
            try:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                Path(path).write_text(text, encoding="utf-8")
                outcome["replay_path"] = path
            except OSError as exc:
                outcome["replay_path"] = None
                outcome["replay_error"] = f"cannot write the replay to {path}: {exc.strerror}"
        log_dir = request.get("log_dir")
        limit = (request.get("sandbox_options") or {}).get("log_total_mb", DEFAULT_LOG_TOTAL_MB) << 20
        for seat in outcome.get("seats") or []:
            if not isinstance(seat, dict) or "stderr_text" not in seat:
                continue
            data = seat.pop("stderr_text").encode("utf-8")
            name = seat.get("stderr_log")
            if not log_dir or not name:
                seat["stderr_log"] = None
                continue
            folder = Path(log_dir)
            folder.mkdir(parents=True, exist_ok=True)
            room = max(0, limit - self._usage(folder))
            if len(data) > room:
                data = data[:room] + (b"\n[arena: the logs in this folder reached their cap of %d MB]\n"
                                      % (limit >> 20))
            target = folder / os.path.basename(name)
            seat["stderr_log"] = str(target)
            more = self.early.pop(str(target), None)
            if not data and not more:
                # nothing on stderr: no file, as a local game leaves none (nor one an earlier
                # attempt at the same game left); a late line makes it
                try:
                    os.unlink(target)
                except OSError:
                    pass
                self.silent[str(target)] = None
                if len(self.silent) > SILENT_KEPT:
                    self.silent.popitem(last=False)
                continue
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
            self.used[str(folder)] += len(data)
            if more:
                self._append(target, more, limit)
        return outcome

    def append(self, late, limit_mb: int = DEFAULT_LOG_TOTAL_MB) -> None:
        """Append ``late`` -- ``(folder, name, bytes)``: what bots wrote to their games' logs
        after the records left the worker -- to those logs (kept until the log is written,
        when its record has not come yet), within the folder's cap of ``limit_mb``."""
        for folder, name, data in late or ():
            if not folder or not name or not data:
                continue
            target = Path(folder) / os.path.basename(name)
            if str(target) in self.silent:
                del self.silent[str(target)]
                self._append(target, data, limit_mb << 20, create=True)
            elif target.exists():
                self._append(target, data, limit_mb << 20)
            else:
                self.early[str(target)] = self.early.get(str(target), b"") + data

    def _append(self, target: Path, data: bytes, limit: int, create: bool = False) -> None:
        room = max(0, limit - self._usage(target.parent))
        if room <= 0:
            return  # the folder's cap was reached: the log already ends with the marker
        if len(data) > room:
            data = data[:room] + (b"\n[arena: the logs in this folder reached their cap of %d MB]\n" % (limit >> 20))
        try:
            fd = os.open(target, os.O_WRONLY | os.O_APPEND | (os.O_CREAT if create else 0), 0o600)
        except OSError:
            return
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        self.used[str(target.parent)] += len(data)

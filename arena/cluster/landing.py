"""Coordinator side: the replay and bot logs a game's record carries, written to the output folder.

A game played with ``return_files`` (every game of the cluster executor) comes back with its
replay's text (``outcome["replay_text"]``) and each seat's stderr log (``seat["stderr_text"]``,
already capped at ``log_kb`` per bot and game by the referee on the worker).
:class:`Landing` writes them where a local worker would have: the replay to the request's
``replay_path``, each log to the request's ``log_dir`` under the name the referee gave it
(mode 0600), and keeps the folder's cap (``log_total_mb``, 256 MB by default) here, where
the folder is. The texts leave the record; ``replay_path`` and ``stderr_log`` name the
written files, as they do for a local game.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..process.sandbox import Limits
from ..referee import log_bytes

DEFAULT_LOG_TOTAL_MB = Limits.log_total_mb


class Landing:
    """Writes records' files into the coordinator's output folders, keeping the log caps."""

    def __init__(self):
        self.used: dict[str, int] = {}

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
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
            self.used[str(folder)] += len(data)
            seat["stderr_log"] = str(target)
        return outcome

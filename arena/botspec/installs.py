"""Where a program is installed: the system's folders, an installation's prefix (the folder
above its ``bin``), and the symbolic links on the way from a program to its real file. What
the sandbox shows of an interpreter (:mod:`arena.botspec.view`, :mod:`arena.botspec.bot_path`)
is read from these."""

from __future__ import annotations

import os

#: where a system's programs live: never shown as the bot's own, never bundled
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")


def _under(path: str, dirs) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in dirs)


def _prefix_of(exe: str) -> str:
    folder = os.path.dirname(exe)
    return os.path.dirname(folder) if os.path.basename(folder) in ("bin", "Scripts") else folder


def _link_chain(path: str) -> list[str]:
    """``path`` and every path its symbolic links go through to the real file (a link to a
    venv's ``python``, itself a link to the base installation's): each must be seen."""
    out = [path]
    for _ in range(40):
        try:
            target = os.readlink(out[-1])
        except OSError:
            break
        nxt = os.path.normpath(os.path.join(os.path.dirname(out[-1]), target))
        if nxt in out:
            break
        out.append(nxt)
    real = os.path.realpath(path)
    if real not in out:
        out.append(real)
    return out

"""Bot bundles: a command-line bot's program folder, packed once, named by its content hash.

A seat whose ``cmd`` runs a program of its own -- the script of an interpreter
(``python3 /bots/mine/bot.py``: the folder ``/bots/mine``), or an executable named by its
path (``/bots/c/bot``: ``/bots/c``) -- needs that folder on the worker that plays it. The
coordinator packs the folder into a deterministic tar archive (members sorted, times,
owners and modes normalised: the same files give the same bytes, hence the same hash),
and the game's payload names the bundle's hash and the folder it stands for. The worker
unpacks each hash once into its private cache and rewrites the command's paths under the
folder to the unpacked copy (:mod:`arena.cluster.worker`).

A program found on the ``PATH`` (``node``, ``python3 -m pkg``) is not bundled: workers
need it installed, as they need the project itself for the built-in bots. A script lying
loose in a home folder or ``/tmp`` brings itself only, not the folder's other files.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError

#: the largest program folder that is shipped to workers
MAX_BUNDLE_MB = 64
#: folders never packed (version control, caches)
SKIP = {".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".pytest_cache", "node_modules/.cache"}


class BundleError(UsageError):
    """A bot's program folder cannot be bundled (too large, unreadable)."""


@dataclass(frozen=True)
class Bundle:
    """One packed program folder: its hash, the folder it stands for, and its bytes."""

    digest: str
    folder: str
    data: bytes
    single: str | None = None  # a loose script: the one file packed


def program_folder(argv: list[str]) -> tuple[str, str | None] | None:
    """``(folder, single file or None)`` a seat's command needs from the coordinator's disk,
    or None when it runs only installed programs (found on the ``PATH``). Wrappers are seen
    through (``nice -n 5 python3 bot.py`` needs ``bot.py``'s folder)."""
    from ..botspec.view import _is_system, loose_folders
    from ..botspec.wrappers import _walk, script_of

    words = list(argv)
    w = _walk(words)
    if w.inner:
        first = next((p for p in w.inner if p and not set(p[0]) <= set(";&|")), None)
        if first:
            return program_folder(first)
    script = script_of(words)
    program = words[w.program]
    if script is not None:
        path = os.path.realpath(script)
        if not os.path.isfile(path):
            return None
    elif "/" in program and not _is_system(program):
        path = os.path.realpath(program)
    else:
        return None
    folder = os.path.dirname(path)
    if folder in loose_folders():  # as the sandbox shows it: a loose script brings only itself
        return folder, os.path.basename(path)
    return folder, None


def folder_bundle(folder: str) -> tuple[str, str | None] | None:
    """``(folder, None)`` for a folder a seat declares (``program_dir``, ``read_only``), or
    ``(its folder, name)`` for a file it declares (a file its command names)."""
    real = os.path.realpath(folder)
    if os.path.isfile(real):
        return os.path.dirname(real), os.path.basename(real)
    return (real, None) if os.path.isdir(real) else None


def pack(folder: str, single: str | None = None) -> Bundle:
    """The deterministic archive of ``folder`` (or of its one file ``single``)."""
    buf = io.BytesIO()
    total = 0
    cap = MAX_BUNDLE_MB << 20
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for rel in _members(folder, single):
            full = os.path.join(folder, rel)
            info = tf.gettarinfo(full, arcname=rel)
            if info.issym():
                info = tf.gettarinfo(os.path.realpath(full), arcname=rel)
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = 0
            if info.isdir():
                info.mode = 0o755
                tf.addfile(info)
                continue
            if not info.isfile():
                continue
            info.mode = 0o755 if info.mode & 0o111 else 0o644
            total += info.size
            if total > cap:
                raise BundleError(f"the bot folder {folder} holds more than {MAX_BUNDLE_MB} MB; "
                                  "give the bot a folder of its own")
            try:
                with open(full, "rb") as f:
                    tf.addfile(info, f)
            except OSError as exc:
                raise BundleError(f"cannot read {full} to send it to the workers ({exc.strerror})") from None
    data = buf.getvalue()
    return Bundle(hashlib.sha256(data).hexdigest(), folder, data, single)


def _members(folder: str, single: str | None) -> list[str]:
    if single is not None:
        return [single]
    out = []
    for root, dirs, files in os.walk(folder, followlinks=True):
        dirs[:] = sorted(d for d in dirs if d not in SKIP)
        rel_root = os.path.relpath(root, folder)
        for d in dirs:
            out.append(os.path.normpath(os.path.join(rel_root, d)))
        for name in sorted(files):
            if name.endswith((".pyc", ".pyo")):
                continue
            out.append(os.path.normpath(os.path.join(rel_root, name)))
    return out


class Bundler:
    """The coordinator's bundles of one run, packed once per folder."""

    def __init__(self):
        self.by_folder: dict[tuple[str, str | None], Bundle] = {}
        self.by_digest: dict[str, Bundle] = {}

    def for_argv(self, argv: list[str]) -> Bundle | None:
        """The bundle a command needs (packed on first use), or None."""
        return self.for_folder(program_folder(argv))

    def for_folder(self, where: tuple[str, str | None] | None) -> Bundle | None:
        """The bundle of ``(folder, single file or None)`` (packed on first use), or None."""
        if where is None:
            return None
        bundle = self.by_folder.get(where)
        if bundle is None:
            bundle = self.by_folder[where] = pack(*where)
            self.by_digest[bundle.digest] = bundle
        return bundle


def rewrite(argv: list[str], folder: str, target: str) -> list[str]:
    """``argv`` with every path under ``folder`` moved under ``target``."""
    out = []
    real = os.path.realpath(folder)
    for arg in argv:
        moved = arg
        for base in {folder, real}:
            probe = os.path.realpath(arg) if arg.startswith("/") else None
            for candidate in (arg, probe):
                if candidate and (candidate == base or candidate.startswith(base.rstrip("/") + "/")):
                    moved = target + candidate[len(base.rstrip("/")):]
                    break
            if moved is not arg:
                break
        if moved is arg and any(c.isspace() for c in arg):  # a shell's -c string: its words move too
            for base in sorted({folder.rstrip("/"), real.rstrip("/")}, key=len, reverse=True):
                moved = re.sub(r"(^|(?<=[\s;&|=]))" + re.escape(base) + r"(?=/|$|[\s;&|])", target.rstrip("/"), moved)
        out.append(moved)
    return out


def unpack(data: bytes, dest: Path) -> None:
    """Unpack a bundle into ``dest`` (created), trusting nothing in it (tarfile's ``data``
    filter; on a Python without extraction filters, :func:`_data_members` checks the same)."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tf:
        if hasattr(tarfile, "data_filter"):
            tf.extractall(dest, filter="data")
        else:  # Python 3.10.11-, 3.11.3- (Debian 12's 3.11.2 among them)
            tf.extractall(dest, members=_data_members(tf, dest))


def _data_members(tf: tarfile.TarFile, dest: Path) -> list:
    """The members of ``tf`` as the ``data`` filter would let them through: regular files,
    folders and links that stay inside ``dest``, no device or fifo, no set-id or
    group/other-write bits; anything else refuses the whole bundle."""
    root = os.path.realpath(dest)

    def inside(path: str) -> bool:
        return os.path.commonpath([root, os.path.realpath(path)]) == root

    members = []
    for m in tf.getmembers():
        target = os.path.join(root, m.name)
        if os.path.isabs(m.name) or not inside(target):
            raise tarfile.OutsideDestinationError(m, target) if hasattr(tarfile, "OutsideDestinationError") \
                else tarfile.TarError(f"{m.name!r} would land outside the bundle's folder")
        if m.issym() and not inside(os.path.join(os.path.dirname(target), m.linkname)):
            raise tarfile.TarError(f"{m.name!r} links outside the bundle's folder")
        if m.islnk() and not inside(os.path.join(root, m.linkname)):
            raise tarfile.TarError(f"{m.name!r} links outside the bundle's folder")
        if not (m.isfile() or m.isdir() or m.issym() or m.islnk()):
            raise tarfile.TarError(f"{m.name!r} is a device or a fifo, which a bundle may not hold")
        m.mode &= 0o755 if m.isdir() else 0o755 if m.mode & 0o100 else 0o644
        m.uid = m.gid = 0
        m.uname = m.gname = ""
        members.append(m)
    return members

"""Bot packages: a folder or an archive (``.zip``, ``.tar.gz``) with a ``bot.toml`` manifest.

The manifest (TOML)::

    name = "my-bot"            # letters, digits, '.', '_', '+', '-'
    version = "1.2"            # a new version is a new league entry, my-bot@1.2
    author = "alice"           # must be the author of the token that submits it
    toolchain = ["python3"]    # programs the bot needs on the server (python3, node, cc, ...)
    build = "make"             # optional: run once in the package folder, in the sandbox
    run = "python3 bot.py"     # the command line that starts the bot
    description = "..."        # optional: shown on the bot's page (at most 2000 characters)

Unpacking an uploaded archive trusts nothing in it: a member with an absolute path, a
``..`` part or a backslash, a link pointing outside the package, a hard link to anything
but an earlier member, a device, FIFO or other special file is refused; so are archives
over the caps on file count, size of one file and total size, and archives that expand
more than :attr:`Caps.ratio` times (zip bombs). Decompression itself is capped, so a bomb
is stopped while it expands, not after.
"""

from __future__ import annotations

import io
import os
import re
import shlex
import shutil
import stat
import tarfile
import tomllib
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..errors import UsageError

MANIFEST = "bot.toml"
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}")
#: Toolchain names and the programs that provide them (the first found wins).
TOOLCHAINS = {
    "python3": ("python3",), "python": ("python3",), "node": ("node",), "nodejs": ("node",),
    "cc": ("cc", "gcc", "clang"), "c": ("cc", "gcc", "clang"), "gcc": ("gcc",), "clang": ("clang",),
    "c++": ("c++", "g++", "clang++"), "make": ("make",), "go": ("go",), "java": ("java",),
    "rust": ("cargo", "rustc"), "cargo": ("cargo",),
}
SKIP = {".git", "__pycache__", ".hg", ".svn", ".mypy_cache", ".pytest_cache", "node_modules"}


class PackageError(UsageError):
    """A package that cannot be accepted: the sentence says what is wrong and where."""


@dataclass(frozen=True)
class Caps:
    """Limits on an uploaded package."""

    archive_bytes: int = 5 << 20
    files: int = 500
    file_bytes: int = 16 << 20
    total_bytes: int = 64 << 20
    ratio: int = 200


@dataclass(frozen=True)
class Manifest:
    """A parsed ``bot.toml``."""

    name: str
    version: str
    author: str
    run: str
    build: str | None = None
    toolchain: tuple[str, ...] = ()
    description: str | None = None

    @property
    def entry(self) -> str:
        """The league entry's name, ``name@version``."""
        return f"{self.name}@{self.version}"

    def to_json(self) -> dict:
        """Plain data."""
        return {"name": self.name, "version": self.version, "author": self.author, "run": self.run,
                "build": self.build, "toolchain": list(self.toolchain), "description": self.description}


# ---------------------------------------------------------------- manifest
def parse_manifest(text: str, where: str = MANIFEST) -> Manifest:
    """Parse and check ``bot.toml``; :class:`PackageError` names the field."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PackageError(f"{where}: not valid TOML ({exc})") from None

    def text_field(key: str, required: bool = True) -> str | None:
        value = data.get(key)
        if value is None:
            if required:
                raise PackageError(f"{where}: the field {key!r} is missing")
            return None
        if not isinstance(value, str) or not value.strip():
            raise PackageError(f"{where}: {key!r} must be a non-empty string")
        return value.strip()

    unknown = sorted(set(data) - {"name", "version", "author", "run", "build", "toolchain", "description"})
    if unknown:
        raise PackageError(f"{where}: unknown field {unknown[0]!r} (fields: name, version, author, toolchain, "
                           f"build, run, description)")
    name, version, author = text_field("name"), text_field("version"), text_field("author")
    for key, value in (("name", name), ("version", version), ("author", author)):
        if not NAME_RE.fullmatch(value):
            raise PackageError(f"{where}: {key} {value!r} may use only letters, digits, '.', '_', '+', '-' "
                               f"(at most 40, starting with a letter or digit)")
    run = text_field("run")
    try:
        if not shlex.split(run):
            raise ValueError("empty")
    except ValueError as exc:
        raise PackageError(f"{where}: cannot split the run command {run!r} ({exc})") from None
    toolchain = data.get("toolchain", [])
    if isinstance(toolchain, str):
        toolchain = [toolchain]
    if not isinstance(toolchain, list) or not all(isinstance(t, str) and t for t in toolchain):
        raise PackageError(f"{where}: 'toolchain' must be a list of names, e.g. [\"python3\"]")
    description = text_field("description", required=False)
    if description is not None and len(description) > 2000:
        raise PackageError(f"{where}: 'description' is longer than 2000 characters")
    return Manifest(name, version, author, run, text_field("build", required=False), tuple(toolchain), description)


def toolchain_program(name: str) -> str | None:
    """The program on this machine's PATH that provides the toolchain ``name``, or None
    (an interpreter's shim counts as the interpreter it runs, as in the sandbox)."""
    from ..botspec.view import sandbox_path

    path = sandbox_path(os.environ.get("PATH"))[0]
    for program in TOOLCHAINS.get(name, (name,)):
        found = shutil.which(program, path=path)
        if found:
            return found
    return None


def available_toolchains() -> dict[str, str]:
    """The known toolchains this machine has, with the program providing each (those a
    sandboxed build can really run: :func:`arena.packages.build.runnable_toolchains`)."""
    out = {}
    for name in ("python3", "node", "cc", "c++", "make", "go", "java", "rust"):
        found = toolchain_program(name)
        if found:
            out[name] = found
    return out


def run_argv(manifest: Manifest, folder: Path) -> list[str]:
    """The run command with the package's files made absolute, so it starts from any directory
    (:func:`arena.botspec.anchor`, the package's folder as the one it was typed in).

    ``./bot`` and any argument naming a file of the package become absolute paths; a bare
    program name (``python3``, ``node``), also behind a wrapper (``nice -n 5 ./bot``), is
    looked up on the PATH of the machine that plays it; a path outside the package is refused."""
    from ..botspec import anchor
    from ..botspec.wrappers import _walk

    folder = Path(folder).resolve()
    typed = shlex.split(manifest.run)
    words = anchor(typed, str(folder))
    w = _walk(typed)
    for i in [*w.wrappers, w.program]:
        if "/" not in typed[i]:
            if shutil.which(typed[i]) is None:
                raise PackageError(f"bot.toml: the run command's program {typed[i]!r} is not on this server's PATH "
                                   f"(for a file of the package write ./{typed[i]})")
            continue
        path = Path(words[i]).resolve()
        if os.path.isabs(typed[i]) or not path.is_relative_to(folder) or not path.is_file():
            raise PackageError(f"bot.toml: the run command's program {typed[i]!r} is not a file of the package "
                               f"(after the build)")
    out = []
    for typed_word, word in zip(typed, words):
        inside = os.path.isabs(word) and Path(word).resolve().is_relative_to(folder)
        out.append(word if inside or word == typed_word else typed_word)
    return out


# ---------------------------------------------------------------- unpacking
def _member_path(name: str) -> PurePosixPath:
    """The safe relative path of an archive member, or :class:`PackageError`."""
    if "\\" in name or "\x00" in name:
        raise PackageError(f"the archive member {name!r} has a backslash or NUL in its name")
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise PackageError(f"the archive member {name!r} has an absolute path")
    parts = [p for p in PurePosixPath(name).parts if p not in ("", ".")]
    if ".." in parts:
        raise PackageError(f"the archive member {name!r} has a '..' in its path")
    shown = name if len(name) <= 80 else name[:60] + "..."
    longest = max((len(p.encode("utf-8", "surrogateescape")) for p in parts), default=0)
    if longest > MAX_NAME_BYTES:
        raise PackageError(f"the archive member {shown!r} has a name of {longest} bytes; a file or folder name "
                           f"may have at most {MAX_NAME_BYTES}")
    if len(parts) > MAX_DEPTH:
        raise PackageError(f"the archive member {shown!r} lies {len(parts)} folders deep; a package may nest "
                           f"at most {MAX_DEPTH}")
    if len(name.encode("utf-8", "surrogateescape")) > MAX_PATH_BYTES:
        raise PackageError(f"the archive member {shown!r} has a path longer than {MAX_PATH_BYTES} bytes")
    return PurePosixPath(*parts) if parts else PurePosixPath(".")


#: The longest name of a file or folder in a package (the file system's own limit).
MAX_NAME_BYTES = 255
#: How deep a package's folders may nest.
MAX_DEPTH = 64
#: The longest path of a member, from the package's top.
MAX_PATH_BYTES = 1024


def _clash(rel: PurePosixPath, exc: OSError) -> PackageError:
    """The sentence for an archive whose members do not fit together on disk (a file and a
    folder of the same name, a member below a file)."""
    import errno

    if exc.errno in (errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
        return PackageError(f"the archive member {str(rel)[:80]!r} clashes with an earlier member: the same name "
                            f"is both a file and a folder")
    return PackageError(f"the archive member {str(rel)[:80]!r} cannot be unpacked ({exc.strerror})")


def _inside(root: Path, link_dir: PurePosixPath, target: str) -> bool:
    """Whether a symbolic link in ``link_dir`` (relative to the package) pointing at ``target`` stays inside."""
    if target.startswith("/") or "\\" in target:
        return False
    depth = len(link_dir.parts)
    for part in PurePosixPath(target).parts:
        if part == "..":
            depth -= 1
            if depth < 0:
                return False
        elif part != ".":
            depth += 1
    return True


class _Budget:
    def __init__(self, caps: Caps, archive_size: int):
        self.caps = caps
        self.archive_size = max(1, archive_size)
        self.files = 0
        self.total = 0

    def file(self, name: str) -> None:
        self.files += 1
        if self.files > self.caps.files:
            raise PackageError(f"the archive has more than {self.caps.files} files")

    def add(self, name: str, n: int, so_far: int) -> None:
        self.total += n
        if so_far > self.caps.file_bytes:
            raise PackageError(f"{name} is larger than {self.caps.file_bytes >> 20} MiB unpacked")
        if self.total > self.caps.total_bytes:
            raise PackageError(f"the archive unpacks to more than {self.caps.total_bytes >> 20} MiB")
        if self.total > (1 << 20) and self.total > self.caps.ratio * self.archive_size:
            raise PackageError(f"the archive expands more than {self.caps.ratio} times (a zip bomb?)")


def _mkdir(root: Path, rel: PurePosixPath) -> None:
    """The folder ``rel`` of the package (and its parents), or :class:`PackageError`."""
    try:
        (root / rel).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _clash(rel, exc) from None


def _write(root: Path, rel: PurePosixPath, stream, budget: _Budget, executable: bool) -> None:
    dest = root / rel
    _mkdir(root, rel.parent)
    if not os.path.realpath(dest.parent).startswith(os.path.realpath(root)):
        raise PackageError(f"the archive member {rel} would be written through a link outside the package")
    if dest.is_symlink() or dest.exists():
        raise PackageError(f"the archive has {rel} twice")
    size = 0
    try:
        out = open(dest, "wb")
    except OSError as exc:
        raise _clash(rel, exc) from None
    with out:
        while True:
            chunk = stream.read(1 << 16)
            if not chunk:
                break
            size += len(chunk)
            budget.add(str(rel), len(chunk), size)
            out.write(chunk)
    os.chmod(dest, 0o755 if executable else 0o644)


def _gunzip(data: bytes, limit: int) -> bytes:
    """Decompress gzip ``data``, refusing to produce more than ``limit`` bytes."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = bytearray()
    buf = data
    try:
        while buf and not d.eof:
            out += d.decompress(buf, limit + 1 - len(out))
            if len(out) > limit:
                raise PackageError(f"the archive unpacks to more than {limit >> 20} MiB")
            buf = d.unconsumed_tail
        out += d.flush()
    except zlib.error as exc:
        raise PackageError(f"the archive is not valid gzip ({exc})") from None
    return bytes(out)


def unpack(data: bytes, dest, caps: Caps = Caps()) -> Path:
    """Unpack the archive ``data`` (zip or tar.gz) safely into the new folder ``dest``.

    A single top-level folder holding ``bot.toml`` is looked through (``my-bot/bot.toml``).
    Returns the package folder (the one with ``bot.toml``); on any error ``dest`` is removed."""
    if len(data) > caps.archive_bytes:
        raise PackageError(f"the archive is {len(data) >> 10} KiB, more than the {caps.archive_bytes >> 10} KiB allowed")
    dest = Path(dest)
    dest.mkdir(parents=True)
    try:
        budget = _Budget(caps, len(data))
        if data[:4] == b"PK\x03\x04" or data[:4] == b"PK\x05\x06":
            _unzip(data, dest, budget)
        elif data[:2] == b"\x1f\x8b":
            _untar(_gunzip(data, caps.total_bytes + 1024 * (2 * caps.files + 20)), dest, budget)
        else:
            raise PackageError("the upload is neither a .zip nor a .tar.gz archive")
        return package_root(dest)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise


def package_root(folder: Path) -> Path:
    """The folder holding ``bot.toml``: ``folder`` itself or its single subfolder."""
    if (folder / MANIFEST).is_file():
        return folder
    subs = [p for p in folder.iterdir()]
    if len(subs) == 1 and subs[0].is_dir() and not subs[0].is_symlink() and (subs[0] / MANIFEST).is_file():
        return subs[0]
    raise PackageError(f"the package has no {MANIFEST} at its top (see docs/writing-a-bot.md)")


def _unzip(data: bytes, dest: Path, budget: _Budget) -> None:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, ValueError) as exc:
        raise PackageError(f"the archive is not a valid zip file ({exc})") from None
    links = []
    with zf:
        for info in infos:
            rel = _member_path(info.filename)
            mode = info.external_attr >> 16 if info.create_system == 3 else 0
            kind = stat.S_IFMT(mode)
            budget.file(info.filename)
            if info.is_dir() or kind == stat.S_IFDIR:
                _mkdir(dest, rel)
            elif kind == stat.S_IFLNK:
                target = zf.read(info)[:4096].decode("utf-8", "replace")
                links.append((rel, target))
            elif kind in (0, stat.S_IFREG):
                try:
                    with zf.open(info) as stream:
                        _write(dest, rel, stream, budget, bool(mode & 0o111))
                except (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError) as exc:
                    raise PackageError(f"cannot unpack {info.filename} ({exc})") from None
            else:
                raise PackageError(f"the archive member {info.filename!r} is a special file (device, FIFO, socket)")
    _links(dest, links)


def _links(dest: Path, links: list) -> None:
    """Make the links, then check where each really leads: a chain of links inside the
    package (``x -> .``, ``y -> x/x/../..``) must not lead out of it."""
    for rel, target in links:
        _link(dest, rel, target)
    top = os.path.realpath(dest)
    for rel, target in links:
        real = os.path.realpath(dest / rel)
        if real != top and not real.startswith(top + os.sep):
            raise PackageError(f"the archive member {rel} is a link leading outside the package (to {target!r})")


def _link(dest: Path, rel: PurePosixPath, target: str) -> None:
    if not _inside(dest, rel.parent, target):
        raise PackageError(f"the archive member {rel} is a link pointing outside the package (to {target!r})")
    path = dest / rel
    _mkdir(dest, rel.parent)
    if path.exists() or path.is_symlink():
        raise PackageError(f"the archive has {rel} twice")
    try:
        os.symlink(target, path)
    except OSError as exc:
        raise _clash(rel, exc) from None


def _untar(data: bytes, dest: Path, budget: _Budget) -> None:
    try:
        tf = tarfile.open(fileobj=io.BytesIO(data), mode="r:")
        members = tf.getmembers()
    except (tarfile.TarError, EOFError) as exc:
        raise PackageError(f"the archive is not a valid tar file ({exc})") from None
    links = []
    with tf:
        for m in members:
            rel = _member_path(m.name)
            budget.file(m.name)
            if m.isdir():
                _mkdir(dest, rel)
            elif m.isreg():
                if m.size > budget.caps.file_bytes:
                    raise PackageError(f"{m.name} is larger than {budget.caps.file_bytes >> 20} MiB unpacked")
                _write(dest, rel, tf.extractfile(m), budget, bool(m.mode & 0o111))
            elif m.issym():
                links.append((rel, m.linkname))
            elif m.islnk():
                source = _member_path(m.linkname)
                if not (dest / source).is_file() or (dest / source).is_symlink():
                    raise PackageError(f"the archive member {m.name} is a hard link to {m.linkname!r}, "
                                       f"which is not an earlier file of the package")
                with open(dest / source, "rb") as stream:
                    _write(dest, rel, stream, budget, os.access(dest / source, os.X_OK))
            else:
                raise PackageError(f"the archive member {m.name!r} is a special file (device, FIFO, socket)")
    _links(dest, links)


# ---------------------------------------------------------------- packing (arena submit)
def pack(path) -> tuple[bytes, str]:
    """The bytes to upload for ``path`` (a package folder, or an archive taken as is) and a file name.

    A folder is packed as ``.tar.gz`` without version-control and cache folders; links are
    followed, so a package may link to shared sources in its repository."""
    path = Path(path)
    if path.is_dir():
        if not (path / MANIFEST).is_file():
            raise PackageError(f"{path}: no {MANIFEST} in this folder (see docs/writing-a-bot.md)")
        parse_manifest((path / MANIFEST).read_text(encoding="utf-8"), str(path / MANIFEST))
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tf:
            for root, dirs, files in os.walk(path, followlinks=True):
                dirs[:] = sorted(d for d in dirs if d not in SKIP)
                for name in sorted(files):
                    if name.endswith((".pyc", ".pyo")):
                        continue
                    full = Path(root) / name
                    if not full.is_file():
                        continue
                    info = tf.gettarinfo(str(full), arcname=str(full.relative_to(path)))
                    if info.issym() or info.islnk():
                        info = tf.gettarinfo(os.path.realpath(full), arcname=str(full.relative_to(path)))
                    info.uid = info.gid = 0
                    info.uname = info.gname = ""
                    with open(full, "rb") as f:
                        tf.addfile(info, f)
        return buf.getvalue(), f"{path.resolve().name}.tar.gz"
    if path.is_file():
        if not path.name.endswith((".zip", ".tar.gz", ".tgz")):
            raise PackageError(f"{path}: give a package folder, a .zip or a .tar.gz")
        return path.read_bytes(), path.name
    raise PackageError(f"{path}: no such folder or archive")

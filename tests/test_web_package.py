"""Bot packages: the manifest, safe unpacking of hostile archives, packing a folder."""

from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from arena.packages.package import Caps, PackageError, pack, parse_manifest, run_argv, unpack

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "bots" / "examples" / "packages"
MANIFEST = b'name = "b"\nversion = "1"\nauthor = "a"\nrun = "python3 bot.py"\n'


def tar_gz(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def member(name: str, kind=tarfile.REGTYPE, link: str = "", mode: int = 0o644) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, mode
    return info


def a_zip(files: dict[str, bytes], modes: dict[str, int] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            info = zipfile.ZipInfo(name)
            info.create_system = 3
            info.external_attr = (modes or {}).get(name, stat.S_IFREG | 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return buf.getvalue()


def test_a_good_tar_gz_unpacks_with_its_executable_bits(tmp_path):
    data = tar_gz([(member("bot.toml"), MANIFEST), (member("src/run.sh", mode=0o755), b"#!/bin/sh\n")])
    folder = unpack(data, tmp_path / "p")
    assert (folder / "bot.toml").read_bytes() == MANIFEST
    assert os.access(folder / "src" / "run.sh", os.X_OK)


def test_a_single_top_folder_is_looked_through(tmp_path):
    folder = unpack(a_zip({"my-bot/bot.toml": MANIFEST, "my-bot/bot.py": b"print()"}), tmp_path / "p")
    assert folder == tmp_path / "p" / "my-bot"


@pytest.mark.parametrize("name, words", [
    ("../evil.txt", "'..'"), ("a/../../evil.txt", "'..'"), ("/etc/evil", "absolute"), ("a\\..\\evil", "backslash"),
])
def test_paths_out_of_the_package_are_refused_in_tar_and_zip(tmp_path, name, words):
    for i, data in enumerate((tar_gz([(member("bot.toml"), MANIFEST), (member(name), b"x")]),
                              a_zip({"bot.toml": MANIFEST, name: b"x"}))):
        with pytest.raises(PackageError, match=words):
            unpack(data, tmp_path / f"p{i}")
        assert not (tmp_path / f"p{i}").exists()  # nothing is left behind
    assert not (tmp_path.parent / "evil.txt").exists()


@pytest.mark.parametrize("target", ["/etc/passwd", "../../outside", "sub/../../../outside"])
def test_links_pointing_out_are_refused(tmp_path, target):
    data = tar_gz([(member("bot.toml"), MANIFEST), (member("sub/link", tarfile.SYMTYPE, target), None)])
    with pytest.raises(PackageError, match="link pointing outside"):
        unpack(data, tmp_path / "t")
    zdata = a_zip({"bot.toml": MANIFEST, "sub/link": target.encode()}, {"sub/link": stat.S_IFLNK | 0o777})
    with pytest.raises(PackageError, match="link pointing outside"):
        unpack(zdata, tmp_path / "z")


def test_a_chain_of_inside_links_leading_out_is_refused(tmp_path):
    data = tar_gz([(member("bot.toml"), MANIFEST), (member("x", tarfile.SYMTYPE, "."), None),
                   (member("y", tarfile.SYMTYPE, "x/x/x/../.."), None)])
    with pytest.raises(PackageError, match="leading outside"):
        unpack(data, tmp_path / "p")


def test_a_link_inside_the_package_is_kept(tmp_path):
    data = tar_gz([(member("bot.toml"), MANIFEST), (member("lib/real.py"), b"x = 1\n"),
                   (member("bot.py", tarfile.SYMTYPE, "lib/real.py"), None)])
    folder = unpack(data, tmp_path / "p")
    assert (folder / "bot.py").read_text() == "x = 1\n"


def test_hard_links_only_to_earlier_files(tmp_path):
    bad = tar_gz([(member("bot.toml"), MANIFEST), (member("h", tarfile.LNKTYPE, "/etc/passwd"), None)])
    with pytest.raises(PackageError):
        unpack(bad, tmp_path / "a")
    good = tar_gz([(member("bot.toml"), MANIFEST), (member("copy.toml", tarfile.LNKTYPE, "bot.toml"), None)])
    assert (unpack(good, tmp_path / "b") / "copy.toml").read_bytes() == MANIFEST


@pytest.mark.parametrize("kind", [tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE])
def test_special_files_are_refused(tmp_path, kind):
    data = tar_gz([(member("bot.toml"), MANIFEST), (member("dev", kind), None)])
    with pytest.raises(PackageError, match="special file"):
        unpack(data, tmp_path / "p")


def test_caps_on_archive_size_file_count_file_size_and_total(tmp_path):
    caps = Caps(archive_bytes=50_000, files=5, file_bytes=1000, total_bytes=3000)
    with pytest.raises(PackageError, match="more than the 48 KiB"):
        unpack(os.urandom(60_000), tmp_path / "a", caps)
    many = tar_gz([(member("bot.toml"), MANIFEST)] + [(member(f"f{i}"), b"x") for i in range(6)])
    with pytest.raises(PackageError, match="more than 5 files"):
        unpack(many, tmp_path / "b", caps)
    with pytest.raises(PackageError, match="larger than"):
        unpack(a_zip({"bot.toml": MANIFEST, "big": os.urandom(1500)}), tmp_path / "c", caps)
    with pytest.raises(PackageError, match="unpacks to more than"):
        unpack(a_zip({"bot.toml": MANIFEST, **{f"f{i}": os.urandom(900) for i in range(4)}}), tmp_path / "d", caps)


def test_a_zip_bomb_is_stopped_by_its_ratio(tmp_path):
    bomb = a_zip({"bot.toml": MANIFEST, "zeros": bytes(8 << 20)})
    assert len(bomb) < 20_000
    with pytest.raises(PackageError, match="expands more than"):
        unpack(bomb, tmp_path / "p")


def test_a_gzip_bomb_is_stopped_while_it_expands(tmp_path):
    bomb = gzip.compress(bytes(32 << 20), 9)
    with pytest.raises(PackageError, match="unpacks to more than"):
        unpack(bomb, tmp_path / "p", Caps(total_bytes=1 << 20))


def test_not_an_archive(tmp_path):
    with pytest.raises(PackageError, match="neither a .zip nor a .tar.gz"):
        unpack(b"hello world", tmp_path / "p")


def test_manifest_fields_are_checked():
    m = parse_manifest('name = "x"\nversion = "2.1"\nauthor = "al"\ntoolchain = "node"\nrun = "node bot.js"\n')
    assert (m.entry, m.toolchain, m.build) == ("x@2.1", ("node",), None)
    with pytest.raises(PackageError, match="'run' is missing"):
        parse_manifest('name = "x"\nversion = "1"\nauthor = "a"\n')
    with pytest.raises(PackageError, match="name 'a b'"):
        parse_manifest('name = "a b"\nversion = "1"\nauthor = "a"\nrun = "x"\n')
    with pytest.raises(PackageError, match="unknown field 'bulid'"):
        parse_manifest('name = "x"\nversion = "1"\nauthor = "a"\nrun = "x"\nbulid = "make"\n')
    with pytest.raises(PackageError, match="not valid TOML"):
        parse_manifest('name = "x\n')


def test_run_command_files_become_absolute(tmp_path):
    (tmp_path / "bot.py").write_text("")
    (tmp_path / "bot").write_text("")
    m = parse_manifest('name = "x"\nversion = "1"\nauthor = "a"\nrun = "python3 bot.py --fast"\n')
    assert run_argv(m, tmp_path) == ["python3", str(tmp_path / "bot.py"), "--fast"]
    m = parse_manifest('name = "x"\nversion = "1"\nauthor = "a"\nrun = "./bot"\n')
    assert run_argv(m, tmp_path) == [str(tmp_path / "bot")]
    with pytest.raises(PackageError, match="not a file of the package"):
        run_argv(parse_manifest('name = "x"\nversion = "1"\nauthor = "a"\nrun = "./missing"\n'), tmp_path)


def test_the_example_packages_pack_and_unpack(tmp_path):
    for lang, source in (("python", "bot.py"), ("js", "bot.js"), ("c", "bot.c")):
        data, name = pack(EXAMPLES / lang)
        assert name == f"{lang}.tar.gz"
        folder = unpack(data, tmp_path / lang)
        # links to the shared example sources are packed as the files themselves
        assert not (folder / source).is_symlink()
        assert (folder / source).read_bytes() == (EXAMPLES / lang / source).read_bytes()
        parse_manifest((folder / "bot.toml").read_text())

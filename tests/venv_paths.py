"""Virtual environments that tests make and that import what the suite's own environment
does: its site-packages and, for an editable install, the project's folder, written as path
lines into the new environment's site-packages (the suite may itself run in a virtual
environment, whose packages the base interpreter lacks)."""

from __future__ import annotations

import sysconfig
from pathlib import Path


def import_what_the_suite_imports(venv: Path, name: str = "test-packages.pth") -> None:
    """Write the path file into ``venv``'s site-packages."""
    site = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
    lines = [sysconfig.get_paths()["purelib"]]
    import arena

    source = Path(arena.__file__).resolve().parents[1]
    if not str(source).startswith(sysconfig.get_paths()["purelib"]):
        lines.append(str(source))  # an editable install of the suite's: the project's folder
    (site / name).write_text("\n".join(lines) + "\n")

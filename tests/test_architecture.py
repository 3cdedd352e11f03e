"""The layout in docs/architecture.md is the layout on disk, and every package has a layer.

A module added outside the documented packages (a new loose module at the
root, a new package) fails here until the document says where it belongs and
``.importlinter`` gives it a layer, so the map a newcomer reads stays true.
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "searchapp"
DOC = REPO / "docs" / "architecture.md"
BULLET = re.compile(r"^- `([A-Za-z_][\w]*)(/|\.py)`", re.MULTILINE)


def documented() -> tuple[set[str], set[str]]:
    """(root modules, packages) named first on a bullet of docs/architecture.md."""
    modules, packages = set(), set()
    for name, kind in BULLET.findall(DOC.read_text(encoding="utf-8")):
        (packages if kind == "/" else modules).add(name)
    return modules, packages


def on_disk(package: Path = PACKAGE) -> tuple[set[str], set[str]]:
    """(root modules, packages) of searchapp/ as they are."""
    modules = {p.stem for p in package.glob("*.py")}
    packages = {p.name for p in package.iterdir()
                if p.is_dir() and p.name != "__pycache__" and any(p.rglob("*.py"))}
    return modules, packages


def test_every_module_on_disk_is_in_a_documented_place():
    doc_modules, doc_packages = documented()
    disk_modules, disk_packages = on_disk()
    assert disk_modules - {"__init__", "__main__"} - doc_modules == set(), \
        "root modules missing from docs/architecture.md"
    assert disk_packages - doc_packages == set(), "packages missing from docs/architecture.md"


def test_every_documented_place_exists():
    doc_modules, doc_packages = documented()
    disk_modules, disk_packages = on_disk()
    assert doc_modules - disk_modules == set()
    assert doc_packages - disk_packages == set()


def test_every_package_and_root_module_has_a_layer():
    config = configparser.ConfigParser()
    config.read(REPO / ".importlinter")
    layered = set(re.findall(r"searchapp\.(\w+)", config["importlinter:contract:layers"]["layers"]))
    disk_modules, disk_packages = on_disk()
    assert (disk_packages | disk_modules) - {"__init__", "__main__"} - layered == set()


def test_a_new_loose_module_is_caught(tmp_path):
    """The check itself: a module that the document does not name is reported."""
    for name in ("__init__", "config", "helpers"):
        (tmp_path / f"{name}.py").write_text('"""x"""\n')
    disk_modules, _ = on_disk(tmp_path)
    doc_modules, _ = documented()
    assert disk_modules - {"__init__", "__main__"} - doc_modules == {"helpers"}


def test_the_root_holds_at_most_eight_modules():
    """The root is for the entry points, settings, errors, reporting and the App; a helper
    every layer needs goes to ``base/``, anything else to the package of its layer."""
    disk_modules, _ = on_disk()
    assert len(disk_modules) <= 8, sorted(disk_modules)

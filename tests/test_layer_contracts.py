"""``make lint``'s import contracts catch what they exist for: an import up the layers, a
cycle between two services, a circle inside a package. Each case plants one import in a
copy of the package and runs ``lint-imports`` on it; the real tree must pass as it is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")


def lint(root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` on the ``searchapp`` under ``root`` with the repo's contracts."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT), "--no-logo", "--no-cache", "--config",
                           str(REPO / ".importlinter")], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A copy of the package (sources only) to plant imports in."""
    if not LINT.exists():
        pytest.skip("lint-imports is not installed (make .venv/.installed-dev)")
    root = tmp_path_factory.mktemp("tree")
    shutil.copytree(REPO / "searchapp", root / "searchapp",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "static"))
    return root


def planted(tree: Path, plants: dict[str, str]):
    """Write ``plants`` (path under searchapp/ → source) for the ``with`` block."""
    class _Planted:
        def __enter__(self):
            for rel, text in plants.items():
                (tree / "searchapp" / rel).write_text(f'"""Planted by a test."""\n{text}\n')

        def __exit__(self, *exc):
            for rel in plants:
                (tree / "searchapp" / rel).unlink()
    return _Planted()


def test_the_tree_as_it_is_keeps_every_contract(tree):
    result = lint(tree)
    assert result.returncode == 0, result.stdout + result.stderr


def test_an_import_up_the_layers_fails(tree):
    with planted(tree, {"store/planted.py": "import searchapp.search.service"}):
        result = lint(tree)
    assert result.returncode != 0
    assert "searchapp.store.planted -> searchapp.search.service" in result.stdout


def test_a_cycle_between_two_services_fails(tree):
    """search and clusters are independent siblings; training sits above search."""
    with planted(tree, {"search/planted.py": "import searchapp.clusters.service",
                        "clusters/planted.py": "import searchapp.search.service"}):
        result = lint(tree)
    assert result.returncode != 0
    assert "searchapp.search.planted -> searchapp.clusters.service" in result.stdout
    with planted(tree, {"search/planted.py": "import searchapp.training.reranker"}):
        result = lint(tree)
    assert result.returncode != 0, "search must not import training (it sits above search)"


def test_a_circle_inside_one_package_fails(tree):
    with planted(tree, {"corpora/planted_a.py": "import searchapp.corpora.planted_b",
                        "corpora/planted_b.py": "import searchapp.corpora.planted_a"}):
        result = lint(tree)
    assert result.returncode != 0
    assert "No cycles are allowed in searchapp.corpora" in result.stdout

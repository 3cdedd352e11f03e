"""Every runnable example in a docstring runs and prints what it says.

Page scripts (``searchapp.ui.pages``) run a page on import and are left out;
examples that need a corpus or a browser are marked ``# doctest: +SKIP``.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import searchapp

MODULES = sorted(m.name for m in pkgutil.walk_packages(searchapp.__path__, "searchapp.")
                 if not m.name.startswith("searchapp.ui.pages") and m.name != "searchapp.__main__")


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, data_dir):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"

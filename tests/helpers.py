"""Helpers for tests that drive the CLI and the worker as separate processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def run_cli(*args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``python -m searchapp ARGS`` with the test's environment (its data folder)."""
    proc = subprocess.run([sys.executable, "-m", "searchapp", *args], capture_output=True,
                          text=True, timeout=timeout, env=os.environ.copy())
    if check and proc.returncode != 0:
        raise AssertionError(f"searchapp {' '.join(args)} failed:\n{proc.stderr}")
    return proc


def cli_json(*args: str) -> dict:
    return json.loads(run_cli(*args, "--json").stdout)

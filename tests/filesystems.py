"""Real failing file systems for tests: a read-only folder and a small disk.

- ``read_only(folder)``: as a normal user, ``chmod a-w`` on the folder and its
  files (restored afterwards). As root, chmod stops nothing, so the folder is
  bind-mounted read-only onto itself (``mount --bind`` + ``remount,ro``) and
  unmounted afterwards; where root cannot mount, the test skips with the reason.
- ``small_disk(folder, size)``: a tmpfs of ``size`` bytes mounted on ``folder``
  (root only; skips otherwise): writes past its size fail with ENOSPC, which
  SQLite reports as "database or disk is full".
- ``ran_where_permissions_apply(request, tmp_path)``: for a test of a file without
  read permission. As a normal user it returns False and the test goes on. As root
  (where chmod 000 stops no read) it runs the same test again in a pytest process
  without the capabilities that bypass file modes (``setpriv``: CAP_DAC_OVERRIDE and
  CAP_DAC_READ_SEARCH dropped; still uid 0, so it owns its temporary folder) and
  returns True once that passed (it fails with that run's output otherwise, and
  skips where setpriv cannot drop them).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest


def _mount(*args: str) -> str | None:
    """Run ``mount ARGS``; the error text, or None when it worked."""
    try:
        proc = subprocess.run(["mount", *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    return None if proc.returncode == 0 else (proc.stderr.strip() or f"exit {proc.returncode}")


def _umount(folder: Path) -> None:
    subprocess.run(["umount", "-l", str(folder)], capture_output=True, timeout=30)


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    """``folder`` made read-only for this process for the time of the block."""
    folder = Path(folder)
    if os.geteuid() != 0:
        paths = [folder, *folder.rglob("*")]
        modes = {p: p.stat().st_mode for p in paths}
        for p in paths:
            p.chmod(modes[p] & ~0o222)
        try:
            yield folder
        finally:
            for p in paths:
                p.chmod(modes[p])
        return
    error = _mount("--bind", str(folder), str(folder))
    if error:
        pytest.skip(f"running as root, where chmod does not stop writes, and mount fails: {error}")
    try:
        error = _mount("-o", "remount,bind,ro", str(folder))
        if error:
            pytest.skip(f"cannot remount {folder} read-only: {error}")
        assert not os.access(folder, os.W_OK)
        yield folder
    finally:
        _umount(folder)


@contextlib.contextmanager
def small_disk(folder: Path, size: int) -> Iterator[Path]:
    """A tmpfs of ``size`` bytes on ``folder`` (created) for the time of the block."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (the RLIMIT_FSIZE test runs instead)")
    error = _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder))
    if error:
        pytest.skip(f"cannot mount a tmpfs here: {error}")
    try:
        yield folder
    finally:
        _umount(folder)


def fill(folder: Path, leave: int) -> Path:
    """Fill the file system of ``folder`` until about ``leave`` bytes are free; the filler."""
    stat = os.statvfs(folder)
    free = stat.f_bavail * stat.f_frsize
    filler = folder / "filler"
    with open(filler, "wb") as f:
        f.write(b"\0" * max(0, free - leave))
    return filler


_WITHOUT_OVERRIDE = "SEARCHAPP_TEST_WITHOUT_FILE_OVERRIDE"
_DROP = "-dac_override,-dac_read_search"


def ran_where_permissions_apply(request: pytest.FixtureRequest, tmp_path: Path) -> bool:
    """False when file modes bind this process (the test goes on); else True once this test
    passed in a process where they do (the caller returns), failing with its output if it
    did not (see the module's docstring)."""
    if os.geteuid() != 0 or os.environ.get(_WITHOUT_OVERRIDE):
        return False
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root, where file modes stop no read, and setpriv (util-linux) "
                    "is missing to drop that power")
    probe = tmp_path / "mode-probe"
    probe.write_text("x")
    probe.chmod(0)
    check = subprocess.run([setpriv, f"--bounding-set={_DROP}", f"--inh-caps={_DROP}", "cat",
                            str(probe)], capture_output=True, text=True, timeout=60)
    if check.returncode == 0 or "Permission denied" not in check.stderr:
        pytest.skip("running as root, and setpriv cannot drop the power to read any file here: "
                    f"{check.stderr.strip() or 'the probe was read'}")
    root = Path(request.config.rootpath)
    proc = subprocess.run(
        [setpriv, f"--bounding-set={_DROP}", f"--inh-caps={_DROP}", sys.executable, "-m",
         "pytest", "-q", "-p", "no:cacheprovider", "--basetemp", str(tmp_path / "inner"),
         "-m", "", request.node.nodeid],
        cwd=root, env={**os.environ, _WITHOUT_OVERRIDE: "1"}, capture_output=True, text=True,
        timeout=600)
    tail = (proc.stdout + proc.stderr)[-4000:]
    if proc.returncode != 0:
        pytest.fail(f"the test, run without the power to read any file, failed:\n{tail}")
    if " passed" not in proc.stdout:
        pytest.fail(f"the test, run without the power to read any file, did not pass:\n{tail}")
    return True

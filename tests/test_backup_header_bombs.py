"""A backup archive whose tar headers would cost more than a header can hold is refused by
``restore --check`` and by restore, quickly, in bounded memory, and nothing is written.

Python's ``tarfile`` reads a long-name header's data whole into memory and follows PAX
header after PAX header recursively: a few thousand of them raised a RecursionError that
restore did not catch, and a long name of 64 MiB was read into memory before anything
looked at it. Both archives are real backups of the ``good`` fixture with the hostile
headers put before the database.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
import time
import tracemalloc
from pathlib import Path

import pytest

from searchapp.backups import service as backups
from searchapp.cli.main import main
from searchapp.store.tarsafe import MAX_CHAIN
from tests.test_lying_archives import good, refused_alike  # noqa: F401 (good: a fixture)

HEADER_BYTES = 64 << 20  # a long name declaring 64 MiB (of zeros, a hole on disk)


def with_headers(source: Path, dest: Path, hostile: bytes, hole: int = 0) -> Path:
    """``source``'s members, ``hostile`` header bytes (then ``hole`` bytes of zeros, left
    as a hole in the file) before the first, in a plain tar like a backup."""
    with tarfile.open(source) as tar, dest.open("wb") as out:
        members = [(m, tar.extractfile(m).read()) for m in tar.getmembers()]
        out.write(hostile)
        if hole:
            out.seek(hole + (-hole % tarfile.BLOCKSIZE), os.SEEK_CUR)
        for member, data in members:
            out.write(member.tobuf(tarfile.PAX_FORMAT))
            out.write(data + bytes(-len(data) % tarfile.BLOCKSIZE))
        out.write(bytes(2 * tarfile.BLOCKSIZE))
    return dest


def pax_chain(count: int) -> bytes:
    return tarfile.TarInfo._create_pax_generic_header({"comment": "x"}, tarfile.XHDTYPE,
                                                      "utf-8") * count


def long_name(size: int) -> bytes:
    info = tarfile.TarInfo("././@LongLink")
    info.type, info.size = tarfile.GNUTYPE_LONGNAME, size
    return info.tobuf(tarfile.GNU_FORMAT)


def refused_quickly(path: Path, target: Path, match: str) -> str:
    tracemalloc.start()
    started = time.perf_counter()
    try:
        message = refused_alike(path, target, match)
        seconds, peak = time.perf_counter() - started, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert seconds < 5 and peak < 20 << 20, (seconds, peak)
    return message


def test_a_chain_of_pax_headers_is_refused_not_a_recursion_error(good, tmp_path):  # noqa: F811
    path = with_headers(good[0], tmp_path / "chain.tar", pax_chain(3000))
    message = refused_quickly(path, tmp_path / "into", "extension headers")
    assert message == (f"chain.tar has more than {MAX_CHAIN} extension headers (long name, "
                       "PAX) before one file, which no tar program writes: refused from its "
                       "header, nothing was restored.")


def test_a_64_mib_long_name_is_refused_from_its_header(good, tmp_path):  # noqa: F811
    path = with_headers(good[0], tmp_path / "long.tar", long_name(HEADER_BYTES), HEADER_BYTES)
    assert path.stat().st_size > HEADER_BYTES
    message = refused_quickly(path, tmp_path / "into", "GNU long name header")
    assert message == ("long.tar has a GNU long name header of 64 MiB, more than the 64 KiB "
                       "a header may hold: refused from its header, nothing was restored.")


def fingerprint(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("hostile, hole", [(pax_chain(3000), 0),
                                           (long_name(HEADER_BYTES), HEADER_BYTES)],
                         ids=["pax-chain", "long-name"])
def test_the_cli_refuses_it_and_the_data_folder_is_unchanged(good, tmp_path, capsys,  # noqa: F811
                                                             hostile, hole):
    path = with_headers(good[0], tmp_path / "bomb.tar", hostile, hole)
    folder = tmp_path / "restored"
    assert main(["restore", str(good[0]), "--data-dir", str(folder)]) == 0
    before = fingerprint(folder)
    capsys.readouterr()
    assert main(["restore", str(path), "--check"]) == 1
    assert "refused from its header, nothing was restored" in capsys.readouterr().err
    assert main(["restore", str(path), "--data-dir", str(folder), "--force"]) == 1
    assert "refused from its header, nothing was restored" in capsys.readouterr().err
    assert fingerprint(folder) == before
    assert backups.check(good[0])  # the genuine backup still checks

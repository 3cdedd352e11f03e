"""Archives whose headers or compression cost far more than their size are refused where
they are read (the worker's ``iter_inputs``), cheaply, and fail alone.

Every archive is built here with tarfile/gzip/zipfile: tar headers (GNU long name and
long link, PAX extended and global headers, chains of them, sparse members) declaring
more than ``tarsafe.MAX_HEADER_BYTES``, and zip members compressed with bzip2 or LZMA
whose declared size lies. Memory is traced (``tracemalloc``) while each is read.
"""

from __future__ import annotations

import gzip
import json
import struct
import tarfile
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchapp.cli.main import main
from searchapp.intake.inputs import InputFile, InputLimits, Skipped, iter_inputs
from searchapp.store.tarsafe import MAX_CHAIN, MAX_HEADER_BYTES

GOOD = b"# Notes\nThe office is closed over the winter holidays.\n"


def read_all(tmp_path: Path, *paths: Path) -> tuple[list, int]:
    """(what ``iter_inputs`` yields for ``paths``, the peak of traced memory while it ran)."""
    tracemalloc.start()
    try:
        items = list(iter_inputs(list(paths), tmp_path / "work", InputLimits(),
                                 accept=lambda path: True))
        return items, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def header(info: tarfile.TarInfo) -> bytes:
    return info.tobuf(tarfile.GNU_FORMAT)


def padded(data: bytes) -> bytes:
    return data + bytes(-len(data) % tarfile.BLOCKSIZE)


def regular(name: str, data: bytes = GOOD) -> bytes:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return header(info) + padded(data)


def extension(kind: bytes, size: int, fill: bytes = b"a") -> tuple[bytes, int]:
    """An extension header of ``kind`` declaring ``size`` bytes, and how many bytes of
    ``fill`` (then padding) follow it: the caller streams them."""
    info = tarfile.TarInfo("././@LongLink")
    info.type, info.size = kind, size
    return header(info), size


def stream_tar_gz(path: Path, parts: list[bytes | tuple[bytes, int]]) -> Path:
    """A .tar.gz of ``parts``: bytes as they are, (header, n) as the header then n bytes of
    "a" and its padding, streamed so a 64 MiB header costs the test no memory."""
    with path.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1) as gz:
        for part in parts:
            if isinstance(part, bytes):
                gz.write(part)
                continue
            head, size = part
            gz.write(head)
            block = b"a" * (1 << 20)
            for start in range(0, size, len(block)):
                gz.write(block[:min(len(block), size - start)])
            gz.write(bytes(-size % tarfile.BLOCKSIZE))
        gz.write(bytes(2 * tarfile.BLOCKSIZE))
    return path


def files(items) -> dict[str, bytes]:
    return {i.path: i.local.read_bytes() for i in items if isinstance(i, InputFile)}


def lines(items) -> dict[str, str]:
    return {i.path: i.reason for i in items if isinstance(i, Skipped)}


# ---- tar: one header far over the cap ------------------------------------------------------------
@pytest.mark.parametrize("kind, words", [(tarfile.GNUTYPE_LONGNAME, "GNU long name"),
                                         (tarfile.GNUTYPE_LONGLINK, "GNU long link"),
                                         (tarfile.XHDTYPE, "PAX"),
                                         (tarfile.XGLTYPE, "PAX global")])
def test_a_64_mib_header_is_refused_from_its_block_and_the_ingest_goes_on(tmp_path, kind,
                                                                           words):
    bomb = stream_tar_gz(tmp_path / "bomb.tar.gz", [
        regular("first.md"), extension(kind, 64 << 20), regular("after.md")])
    other = tmp_path / "other.md"
    other.write_bytes(GOOD)
    items, peak = read_all(tmp_path, bomb, other)
    assert files(items) == {"first.md": GOOD, "other.md": GOOD}
    reason = lines(items)["bomb.tar.gz"]
    assert f"has a {words} header of 64 MiB, more than the 64 KiB a header may hold " \
           "(entry 2)" in reason
    assert peak < 8 << 20, f"{peak:,} bytes traced"  # the header was 64 MiB


def test_a_chain_of_headers_before_one_member_is_refused(tmp_path):
    """Thousands of small PAX headers in a row made tarfile recurse until RecursionError,
    which no handler caught: the whole ingest failed."""
    pax = tarfile.TarInfo._create_pax_generic_header({"comment": "x"}, tarfile.XHDTYPE,
                                                     "utf-8")
    bomb = stream_tar_gz(tmp_path / "chain.tar.gz", [regular("first.md"), pax * 3000,
                                                       regular("after.md")])
    items, _ = read_all(tmp_path, bomb)
    assert files(items) == {"first.md": GOOD}
    assert f"more than {MAX_CHAIN} extension headers" in lines(items)["chain.tar.gz"]


def test_global_headers_are_capped_for_the_whole_archive(tmp_path):
    """Each under the cap, together over it: tarfile keeps every global header's keys."""
    parts = [regular("first.md")]
    for n in range(20):
        records = {f"k{n}-{i}": "v" * 100 for i in range(40)}  # about 5 KiB each
        parts.append(tarfile.TarInfo._create_pax_generic_header(records, tarfile.XGLTYPE,
                                                                "utf-8"))
        parts.append(regular(f"f{n}.md"))
    items, _ = read_all(tmp_path, stream_tar_gz(tmp_path / "globals.tar.gz", parts))
    reason = lines(items)["globals.tar.gz"]
    assert "PAX global headers of" in reason and "in all" in reason
    assert "first.md" in files(items) and len(files(items)) < 21


def test_a_sparse_member_is_refused(tmp_path):
    info = tarfile.TarInfo("holes.md")
    info.type, info.size = tarfile.GNUTYPE_SPARSE, 0
    items, _ = read_all(tmp_path, stream_tar_gz(tmp_path / "sparse.tar.gz", [
        regular("first.md"), header(info), regular("after.md")]))
    assert files(items) == {"first.md": GOOD}
    assert "sparse file" in lines(items)["sparse.tar.gz"]


def test_a_long_name_under_the_cap_is_kept_under_a_short_id(tmp_path):
    """A 60 KiB name under the cap is read under an id of at most 200 bytes (the names rule),
    so 100,000 of them cannot make ids or a report of gigabytes."""
    items, _ = read_all(tmp_path, stream_tar_gz(tmp_path / "names.tar.gz", [
        extension(tarfile.GNUTYPE_LONGNAME, 60_000), regular("ignored"), regular("b.md")]))
    found = files(items)
    assert found["b.md"] == GOOD and len(found) == 2 and not lines(items)
    assert all(len(path.encode()) <= 200 for path in found)


# ---- tar: headers that vary ----------------------------------------------------------------------
KINDS = [tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE, tarfile.XGLTYPE]


def pax_header(kind: bytes, size: int) -> bytes:
    """A real PAX header of about ``size`` bytes (a comment record)."""
    return tarfile.TarInfo._create_pax_generic_header({"comment": "c" * size}, kind, "utf-8")


headers_of_one = st.lists(st.tuples(st.sampled_from(KINDS),
                                   st.one_of(st.integers(1, 4 << 10),  # well under the cap
                                             st.integers(MAX_HEADER_BYTES + 1024, 1 << 20))),
                         max_size=3)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(members=st.lists(headers_of_one, min_size=1, max_size=5), gz=st.booleans())
def test_any_mix_of_headers_reads_up_to_the_first_one_over_the_cap(tmp_path, members, gz):
    """Members each after 0-3 extension headers (long names, long links, PAX x and g) of
    sizes under or over the cap, plain or gzipped: every member before the first header
    over the cap is read whole, none after it; that header is named; memory stays small."""
    body, expected, refused = b"", {}, False
    for n, headers in enumerate(members):
        name = f"m{n}.md"
        for kind, size in headers:
            if kind in (tarfile.XHDTYPE, tarfile.XGLTYPE):
                body += pax_header(kind, size)
            else:  # the member's own name (or a link target), then NULs up to the size
                head, _ = extension(kind, size)
                body += head + padded(name.encode().ljust(size, b"\0"))
            refused = refused or size > MAX_HEADER_BYTES
        body += regular(name, GOOD + name.encode())
        if not refused:
            expected[name] = GOOD + name.encode()
    body += bytes(2 * tarfile.BLOCKSIZE)
    path = tmp_path / ("mix.tar.gz" if gz else "mix.tar")
    path.write_bytes(gzip.compress(body, 1) if gz else body)
    items, peak = read_all(tmp_path, path)
    assert files(items) == expected
    assert ("a header may hold" in lines(items).get(path.name, "")) == refused
    assert peak < 6 << 20, f"{peak:,} bytes traced"


# ---- zip: bzip2 and LZMA members whose declared size lies ----------------------------------------
def lying_zip(path: Path, method: int, unpacked: int) -> Path:
    """A zip of a small file and a member of ``unpacked`` zeros compressed with ``method``,
    its declared unpacked size set to its packed size (so no declared ratio gives it away)."""
    with zipfile.ZipFile(path, "w", method) as z:
        z.writestr("small.md", GOOD)
        with z.open("zeros.md", "w") as out:
            block = bytes(1 << 20)
            for _ in range(unpacked >> 20):
                out.write(block)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("zeros.md")
    struct.pack_into("<I", data, info.header_offset + 22, info.compress_size)
    struct.pack_into("<I", data, data.rfind(b"PK\x01\x02") + 24, info.compress_size)
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_a_bzip2_or_lzma_member_is_unpacked_a_bounded_step_at_a_time(tmp_path, method):
    """zipfile decompresses a whole compressed read of these at once: this zip (a few
    hundred bytes to 40 KB) held 256 MiB in the worker at once."""
    bomb = lying_zip(tmp_path / "bomb.zip", method, 256 << 20)
    items, peak = read_all(tmp_path, bomb)
    assert files(items) == {"small.md": GOOD}
    assert "expands more than 200 times its packed size" in lines(items)["zeros.md"]
    assert peak < 16 << 20, f"{peak:,} bytes traced"


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=3000).map(lambda b: b * 7),
       method=st.sampled_from([zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA, zipfile.ZIP_DEFLATED,
                               zipfile.ZIP_STORED]))
def test_every_compression_unpacks_exactly(tmp_path, data, method):
    path = tmp_path / "ok.zip"
    with zipfile.ZipFile(path, "w", method) as z:
        z.writestr("a.md", data)
    items, _ = read_all(tmp_path, path)
    assert files(items) == {"a.md": data}


def test_a_damaged_bzip2_member_is_named(tmp_path):
    path = tmp_path / "bad.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_BZIP2) as z:
        z.writestr("a.md", GOOD * 50)
    with zipfile.ZipFile(path) as z:
        at = z.getinfo("a.md").header_offset + 30 + len("a.md") + 20
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))
    items, _ = read_all(tmp_path, path)
    assert files(items) == {} and "is damaged in the archive" in lines(items)["a.md"]


# ---- the real ingest -----------------------------------------------------------------------------
def test_the_ingest_job_reports_the_bomb_and_stores_the_rest(app, tmp_path, capsys):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.md").write_bytes(GOOD)
    stream_tar_gz(folder / "bomb.tar.gz", [regular("inside.md"),
                                           extension(tarfile.GNUTYPE_LONGNAME, 64 << 20),
                                           regular("after.md")])
    capsys.readouterr()
    assert main(["ingest", str(folder), "--corpus", "docs", "--wait", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["added"] == 2 and report["skipped"] == 1
    [problem] = report["problems"]
    assert problem["path"] == "bomb.tar.gz" and "64 KiB a header may hold" in problem["reason"]
    assert len(json.dumps(report)) < 10_000

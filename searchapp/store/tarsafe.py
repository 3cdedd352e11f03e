"""Tar headers read with a cap: no header may make ``tarfile`` hold more than 64 KiB.

Python's ``tarfile`` reads the data of a GNU long name or long link (type ``L``,
``K``) and of a PAX header (``x``, ``g``, Solaris ``X``) whole into memory,
whatever size its header declares, before anything can look at it; it follows
header after header recursively (a chain of thousands ends in a RecursionError),
keeps growing the archive's global PAX headers, and reads the sparse maps of GNU
sparse members (``S``, PAX sparse 1.0) entry by entry without a bound. A 4.5 MB
``.tar.gz`` whose long-name header declares 1 GiB of zeros took the process that
read it to 3.3 GB. ``SafeTarInfo`` checks each such header from its 512-byte block
before a byte of its data is read:

- a long name, long link or PAX header over ``MAX_HEADER_BYTES`` (64 KiB: a path
  has at most 1 KiB, and PAX records beyond names are a few dozen bytes),
- more than ``MAX_CHAIN`` headers before one member (PAX + long name + long
  link is three),
- global PAX headers over ``MAX_HEADER_BYTES`` in all, for the whole archive,
- any sparse member (documents are not sparse files; restoring one is not our job)

each raise ``TarHeaderRefused`` with the reason, which ``tarfile`` lets through
unchanged. The caller stops reading the archive there (the headers after a
refused one cannot be found without reading its data): an ingest keeps the
members before it and leaves the rest out with that line; a backup restore
(``store.archive``) refuses the whole archive. The module lives in the store
so that both can use it (the corpora may import the store, not the reverse).

Example:
    >>> import io, tarfile
    >>> buf = io.BytesIO()
    >>> with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as t:
    ...     t.addfile(tarfile.TarInfo("a" * 70_000))
    >>> _ = buf.seek(0)
    >>> with open_tar(buf) as t:
    ...     t.next()
    Traceback (most recent call last):
    ...
    searchapp.store.tarsafe.TarHeaderRefused: has a GNU long name header of 68.4 KiB...
"""

from __future__ import annotations

import tarfile
from typing import BinaryIO

from searchapp.config import size_words

MAX_HEADER_BYTES = 64 << 10  # one long name, long link or PAX header; all global ones
MAX_CHAIN = 8  # extension headers before one member
HEADER_KINDS = {tarfile.GNUTYPE_LONGNAME: "GNU long name", tarfile.GNUTYPE_LONGLINK:
                "GNU long link", tarfile.XHDTYPE: "PAX", tarfile.SOLARIS_XHDTYPE: "PAX",
                tarfile.XGLTYPE: "PAX global"}


class TarHeaderRefused(Exception):
    """A tar header that would cost more than its cap; the archive is not read past it."""


class SafeTarInfo(tarfile.TarInfo):
    """A ``TarInfo`` whose extension headers are checked before their data is read."""

    def _proc_member(self, tar: tarfile.TarFile) -> tarfile.TarInfo:
        kind = HEADER_KINDS.get(self.type)
        if kind is None:
            tar._searchapp_chain = 0  # a member: the chain before it is complete
            if self.type == tarfile.GNUTYPE_SPARSE:
                raise TarHeaderRefused(_SPARSE)
            return super()._proc_member(tar)
        chain = getattr(tar, "_searchapp_chain", 0) + 1
        tar._searchapp_chain = chain
        if chain > MAX_CHAIN:
            raise TarHeaderRefused(f"has more than {MAX_CHAIN} extension headers (long name, "
                                   "PAX) before one file, which no tar program writes")
        if self.size > MAX_HEADER_BYTES:
            raise TarHeaderRefused(f"has a {kind} header of {size_words(self.size)}, more "
                                   f"than the {size_words(MAX_HEADER_BYTES)} a header may hold")
        if self.type == tarfile.XGLTYPE:
            total = getattr(tar, "_searchapp_global", 0) + self.size
            tar._searchapp_global = total
            if total > MAX_HEADER_BYTES:
                raise TarHeaderRefused(f"has PAX global headers of {size_words(total)} in all, "
                                       f"more than {size_words(MAX_HEADER_BYTES)}")
        return super()._proc_member(tar)

    def _proc_gnusparse_10(self, next, pax_headers, tar):
        raise TarHeaderRefused(_SPARSE)

    def _proc_gnusparse_01(self, next, pax_headers):
        raise TarHeaderRefused(_SPARSE)

    def _proc_gnusparse_00(self, next, pax_headers, buf):
        raise TarHeaderRefused(_SPARSE)


_SPARSE = ("has a sparse file (GNU sparse), which is not read; make the archive without "
           "--sparse")




def open_tar(raw: BinaryIO) -> tarfile.TarFile:
    """A tar (plain, gzip, bzip2 or xz) opened for reading with ``SafeTarInfo`` headers;
    ``TarHeaderRefused`` from the first header already, or from ``next()``."""
    return tarfile.open(fileobj=raw, mode="r:*", tarinfo=SafeTarInfo)


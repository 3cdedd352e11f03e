"""What a backup's database really holds, read from the database itself (never the manifest).

``database_member`` says which member is the database and refuses an archive
with none (or two); ``check_corpora_list`` refuses a manifest whose ``corpora``
is not a list of objects; ``inspect_sqlite`` opens a SQLite copy read-only and
refuses a damaged file, a database that is not searchapp's, one of a schema
newer than this searchapp reads or other than the manifest says, then counts
its corpora and their documents. ``--check`` runs it on a temporary copy of the
database member, restore on the copy it is about to put in place, so both say
the same thing and the summary after a restore is what was restored.

Example:
    >>> import tempfile, sqlite3
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = sqlite3.connect(folder / "x.db").execute("create table t (x)")
    >>> inspect_sqlite(folder / "x.db", "b.tar", newest_schema=6)
    Traceback (most recent call last):
    ...
    searchapp.errors.BackupError: The database in b.tar is not a searchapp database ...
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from searchapp.errors import BackupError
from searchapp.store import snapshot

DATABASE_SQLITE = "database/searchapp.db"
DATABASE_POSTGRES = "database/searchapp.pgdump"


@dataclass(frozen=True)
class CorpusCount:
    """A corpus as counted in the database: its name and its documents' rows."""

    name: str
    documents: int


@dataclass(frozen=True)
class Contents:
    """What a database holds: its schema version and its corpora, counted."""

    schema_version: int
    corpora: tuple[CorpusCount, ...]

    def describe(self) -> str:
        """``2 corpora (14 documents), schema 6``.

        Example:
            >>> Contents(6, (CorpusCount("a", 3), CorpusCount("b", 11))).describe()
            '2 corpora (14 documents), schema 6'
        """
        n, docs = len(self.corpora), sum(c.documents for c in self.corpora)
        return (f"{n:,} {'corpus' if n == 1 else 'corpora'} ({docs:,} "
                f"document{'' if docs == 1 else 's'}), schema {self.schema_version}")

    def as_dict(self) -> dict:
        return {"schema_version": self.schema_version,
                "corpora": [{"name": c.name, "documents": c.documents} for c in self.corpora]}


def database_member(archive_name: str, members: dict) -> str:
    """The one database member of a backup; BackupError when it has none or two.

    Example:
        >>> database_member("b.tar", {"models/m/config.json": {}})
        Traceback (most recent call last):
        ...
        searchapp.errors.BackupError: b.tar holds no database (neither database/searchapp.db ...
    """
    found = [name for name in (DATABASE_SQLITE, DATABASE_POSTGRES) if name in members]
    if not found:
        raise BackupError(f"{archive_name} holds no database (neither {DATABASE_SQLITE} nor "
                          f"{DATABASE_POSTGRES}); nothing to restore.")
    if len(found) > 1:
        raise BackupError(f"{archive_name} holds two databases ({', '.join(found)}); refused.")
    return found[0]


def check_corpora_list(archive_name: str, manifest: dict) -> None:
    """A manifest's ``corpora``, when present, is a list of objects each with a text name.

    Example:
        >>> check_corpora_list("b.tar", {"corpora": [{"name": "faq"}, "tiny"]})
        Traceback (most recent call last):
        ...
        searchapp.errors.BackupError: b.tar: its manifest's corpora list is malformed (entry 2 ...
    """
    corpora = manifest.get("corpora", [])
    if not isinstance(corpora, list):
        raise BackupError(f"{archive_name}: its manifest's corpora list is malformed (not a "
                          "list); refused.")
    for i, entry in enumerate(corpora, 1):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise BackupError(f"{archive_name}: its manifest's corpora list is malformed (entry "
                              f"{i} is not an object with a name); refused.")


def inspect_sqlite(path: Path, archive_name: str, newest_schema: int,
                   claimed_schema: int | None = None) -> Contents:
    """Open a SQLite copy read-only: integrity, searchapp's own, schema; then count.

    Example:
        >>> inspect_sqlite(Path("restored/searchapp.db"), "b.tar", 6)      # doctest: +SKIP
        Contents(schema_version=6, corpora=(CorpusCount(name='faq', documents=13),))
    """
    state = snapshot.integrity(path)
    if state != "ok":
        raise BackupError(f"The database in {archive_name} fails its integrity check "
                          f"({state}); nothing was restored.")
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise BackupError(f"The database in {archive_name} cannot be opened ({exc}); nothing "
                          "was restored.") from None
    try:
        try:
            row = con.execute("SELECT version FROM schema_info").fetchone()
            version = int(row[0])
        except (sqlite3.Error, TypeError, ValueError):
            raise BackupError(f"The database in {archive_name} is not a searchapp database (it "
                              "has no schema_info table); nothing was restored.") from None
        if version > newest_schema:
            raise BackupError(f"The database in {archive_name} is at schema version {version}, "
                              f"newer than this searchapp ({newest_schema}); upgrade searchapp "
                              "to restore it. Nothing was restored.")
        if claimed_schema is not None and version != claimed_schema:
            raise BackupError(f"The database in {archive_name} is at schema version {version}, "
                              f"its manifest says {claimed_schema} (altered); nothing was "
                              "restored.")
        try:
            rows = con.execute(
                "SELECT c.name, (SELECT count(*) FROM documents d WHERE d.corpus_id = c.id) "
                "FROM corpora c ORDER BY c.name").fetchall()
        except sqlite3.Error as exc:
            raise BackupError(f"The database in {archive_name} is not a searchapp database "
                              f"({exc}); nothing was restored.") from None
    finally:
        con.close()
    return Contents(version, tuple(CorpusCount(str(n), int(d)) for n, d in rows))

"""Judgements as CSV: the file read into checked items, and the stored ones written out.

A file has the columns ``query,doc_id,label`` (query → document) or
``a_id,b_id,label`` (pairs), or all of them, each row filling one set (what
``judgements_frame`` writes, so an export reads back unchanged). Column names
are matched without regard to case or surrounding spaces; other columns are
ignored. Labels are whole numbers (query grades 0–3, pairs 0/1) or words:
``yes``/``no``, ``true``/``false``, ``relevant``/``not relevant``,
``duplicate``/``not duplicate``. The file is read like an upload
(``corpora.ingest.read_table``: CSV or TSV, UTF-8 or with a byte-order mark,
optionally gzipped), and every row is checked before anything is stored.

A cell the export escaped for spreadsheets (``'`` before ``=``, ``+``, ``-``,
``@``, a tab or a carriage return) gets its ``'`` removed on the way back in. So
that this is exact, the export also puts a ``'`` before a cell that starts with
``'`` followed by one of those signs or another ``'``: every text reads back as
it was, and a hand-written ``'tis`` stays as it is.

Example:
    >>> [i.label for i in read_items(b"a_id,b_id,label\\nq1,q2,yes\\nq3,q1,0\\n", "p.csv")]
    [1, 0]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

import pandas as pd
from sqlalchemy import insert, update
from sqlalchemy.orm import Session

from searchapp.corpora.csv_safe import FORMULA_STARTS, safe_csv
from searchapp.errors import InvalidParameterError, JudgementError
from searchapp.intake.ingest import read_table
from searchapp.judgements.items import check_label, item_of
from searchapp.store import judgement_rows as rows
from searchapp.store.schema import Judgement as JudgementRow
from searchapp.store.schema import utcnow

QUERY_COLUMNS = ("query", "doc_id")
PAIR_COLUMNS = ("a_id", "b_id")
ANSWER_COLUMN = "answer"  # with query,doc_id: the sentence shown as the query's answer
EXPORT_COLUMNS = ["kind", "query", "doc_id", "a_id", "b_id", "answer", "label", "source",
                  "created_at"]
BATCH = 5_000  # rows looked up and written at a time by an import
MAX_IMPORT_ROWS = 2_000_000  # rows one import reads (1,000,000 took 131 s on 2 cores)
YES = {"1", "yes", "y", "true", "relevant", "duplicate", "dup", "same", "right"}
NO = {"0", "no", "n", "false", "not relevant", "not_relevant", "irrelevant", "not duplicate",
      "not_duplicate", "different", "wrong"}


@dataclass(frozen=True)
class Item:
    """One checked row of a file: what is judged, its label, and where it was read."""

    kind: str
    query: str | None
    a: str
    b: str | None
    label: int
    where: str  # "pairs.csv: line 4", for messages


@dataclass(frozen=True)
class ImportSummary:
    """What an import did: new items, changed labels, labels already stored, by kind.

    ``repeated`` counts rows naming an item an earlier row of the file named (the last wins).
    """

    added: int
    updated: int
    unchanged: int
    query: int
    pair: int
    repeated: int = 0
    answer: int = 0


ESCAPED_STARTS = (*FORMULA_STARTS, "'")  # after a "'", these mean the "'" was added


def escape_quote(value: object) -> object:
    """A ``'`` before text that ``unescape`` would otherwise shorten (``safe_csv`` does the
    formula signs themselves).

    Example:
        >>> escape_quote("'=x"), escape_quote("'tis"), escape_quote(3)
        ("''=x", "'tis", 3)
    """
    if isinstance(value, str) and value.startswith("'") and value[1:].startswith(ESCAPED_STARTS):
        return "'" + value
    return value


def unescape(cell: str) -> str:
    """The cell without the ``'`` a spreadsheet-safe export put before it.

    Example:
        >>> unescape("'=1+1"), unescape("''=x"), unescape("'tis"), unescape("plain")
        ('=1+1', "'=x", "'tis", 'plain')
    """
    if cell.startswith("'") and cell[1:].startswith(ESCAPED_STARTS):
        return cell[1:]
    return cell


def parse_label(kind: str, cell: str) -> int:
    """A label cell as a number in its kind's range.

    Example:
        >>> parse_label("pair", "Duplicate"), parse_label("query", "2"), parse_label("query", "no")
        (1, 2, 0)
    """
    word = " ".join(cell.strip().lower().split())
    if word in YES:
        return 1
    if word in NO:
        return 0
    try:
        number = float(word)
    except ValueError:
        raise InvalidParameterError(
            f"label {cell!r} is not a label; write 1/0, yes/no, duplicate/not duplicate, "
            "relevant/not relevant, or a grade 0–3 for a query.") from None
    if not number.is_integer():
        raise InvalidParameterError(f"label {cell!r} is not a whole number.")
    return check_label(kind, int(number))


def _columns(columns: Sequence[str], filename: str) -> dict[str, str]:
    """{our name: the file's column} for the columns we read; two columns that both
    read as one of them (``label`` and ``Label``) are refused, naming both."""
    wanted = {*QUERY_COLUMNS, *PAIR_COLUMNS, ANSWER_COLUMN, "label"}
    by_name = _unique_names(columns, wanted, filename)
    found = {k: by_name[k] for k in wanted if k in by_name}
    has_query = all(c in found for c in QUERY_COLUMNS)
    has_pair = all(c in found for c in PAIR_COLUMNS)
    if "label" not in found or not (has_query or has_pair):
        raise JudgementError(
            f"{filename} has the columns {', '.join(map(str, columns))}; judgements need "
            "query,doc_id,label (a query and a document) or a_id,b_id,label (two documents).")
    return found


def _unique_names(columns, wanted: set[str], filename: str) -> dict[str, object]:
    """{name folded (case, spaces around): the column}; JudgementError when two of the
    ``wanted`` names' columns fold to the same name.

    Example:
        >>> _unique_names(["label", " Label"], {"label"}, "j.csv")
        Traceback (most recent call last):
        ...
        searchapp.errors.JudgementError: j.csv has the columns 'label' and ' Label', ...
    """
    by_name: dict[str, list] = {}
    for column in columns:
        by_name.setdefault(str(column).strip().lower(), []).append(column)
    for name in sorted(wanted & set(by_name)):
        if len(by_name[name]) > 1:
            named = " and ".join(repr(str(c)) for c in by_name[name])
            raise JudgementError(
                f"{filename} has the columns {named}, which both read as {name!r} (names "
                "are matched without regard to case); rename or remove all but one.")
    return {name: found[0] for name, found in by_name.items()}


def read_items(source: bytes | str | Path, filename: str | None = None) -> list[Item]:
    """Every row of a judgements file, checked; the first bad row raises, naming its line.

    Example:
        >>> read_items(b"query,doc_id,label\\nreset,q1,5\\n", "q.csv")
        Traceback (most recent call last):
        ...
        searchapp.errors.JudgementError: q.csv: line 2: A query judgement's label is a grade ...
    """
    return list(ItemFile(source, filename).items())


class ItemFile:
    """A judgements file opened once (its columns checked) and read row by row, as often as
    needed (``items()`` starts from the top each time), never held whole in memory.

    Example:
        >>> [i.a for i in ItemFile(b"a_id,b_id,label\\nq2,q1,1\\n", "p.csv").items()]
        ['q1']
    """

    def __init__(self, source: bytes | str | Path, filename: str | None = None) -> None:
        self.name = filename or (Path(source).name if not isinstance(source, bytes)
                                 else "judgements.csv")
        self.table = read_table(source, self.name)
        self.cols = _columns(self.table.columns, self.name)

    def items(self) -> Iterator[Item]:
        """Every row as a checked Item, in file order; a bad row raises, naming its line, and
        so does the row past ``MAX_IMPORT_ROWS`` (the file is read twice: checked, stored)."""
        rows = self.table.rows(set(self.cols.values()))
        for count, (number, cells) in enumerate(rows, 1):
            if count > MAX_IMPORT_ROWS:
                raise JudgementError(
                    f"{self.name} has more than {MAX_IMPORT_ROWS:,} rows, the most one import "
                    f"reads (it stopped at {self.table.label(number)}); nothing was imported. "
                    "Split it into smaller files and import each.")
            where = f"{self.name}: {self.table.label(number)}"
            row = {k: unescape(str(cells.get(c, "")).strip()) for k, c in self.cols.items()}
            yield _item(row, where)


def _item(row: dict[str, str], where: str) -> Item:
    query_filled = any(row.get(c) for c in QUERY_COLUMNS)
    pair_filled = any(row.get(c) for c in PAIR_COLUMNS)
    if query_filled == pair_filled:
        raise JudgementError(
            f"{where} fills {'both' if query_filled else 'neither'} query,doc_id and "
            "a_id,b_id; a row judges either a query and a document or two documents.")
    try:
        if query_filled:
            kind, q, a, b = item_of(query=row.get("query"), doc=row.get("doc_id") or None,
                                    answer=row.get(ANSWER_COLUMN) or None)
        else:
            kind, q, a, b = item_of(a=row.get("a_id") or None, b=row.get("b_id") or None)
        label = parse_label(kind, row["label"])
    except InvalidParameterError as exc:
        raise JudgementError(f"{where}: {exc}") from None
    return Item(kind, q, a, b, label, where)


def batches(items: Iterable[Item], size: int = BATCH) -> Iterator[list[Item]]:
    """``items`` a list of at most ``size`` at a time.

    Example:
        >>> [len(b) for b in batches(range(5), 2)]
        [2, 2, 1]
    """
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def store_items(s: Session, corpus_id: int, items: Iterable[Item]) -> ImportSummary:
    """Write checked items into the corpus in the caller's transaction, source 'import'.

    Streams: a batch of ``BATCH`` items at a time is looked up by item key (one
    indexed query per 900 keys), then inserted and updated in bulk, so memory
    stays bounded by the batch (and 8 bytes of hash per distinct item, to count
    rows that repeat an earlier one; the last one's label wins).
    """
    seen: set[int] = set()
    added = updated = unchanged = repeated = 0
    kinds = {"query": 0, "pair": 0, "answer": 0}
    now = utcnow()
    for batch in batches(items):
        latest: dict[str, Item] = {}
        for item in batch:
            key = rows.item_key(item.kind, item.query, item.a, item.b)
            if key in latest or int(key[:16], 16) in seen:
                repeated += 1
            latest[key] = item
        stored = rows.labels_by_key(s, corpus_id, list(latest))
        new, changed = [], []
        for key, item in latest.items():
            short = int(key[:16], 16)
            first = short not in seen
            seen.add(short)
            kinds[item.kind] += first
            found = stored.get(key)
            if found is None:
                new.append({"corpus_id": corpus_id, "kind": item.kind, "query": item.query,
                            "a_id": item.a, "b_id": item.b, "label": item.label,
                            "source": "import", "item_key": key, "created_at": now,
                            "updated_at": now})
                added += first
            elif found[1] != item.label:
                changed.append({"id": found[0], "label": item.label, "source": "import",
                                "updated_at": now})
                updated += first
            else:
                unchanged += first
        if new:
            s.execute(insert(JudgementRow), new)
        if changed:
            s.execute(update(JudgementRow), changed)
    return ImportSummary(added, updated, unchanged, kinds["query"], kinds["pair"], repeated,
                         kinds["answer"])


def judgements_frame(judgements: Sequence, out: str | Path | None = None) -> str | None:
    """Judgements as a spreadsheet-safe CSV (text when ``out`` is None, else written there).

    Example:
        >>> print(judgements_frame([]).strip())
        kind,query,doc_id,a_id,b_id,answer,label,source,created_at
    """
    records = [{"kind": j.kind, "query": escape_quote(j.query or ""),
                "doc_id": escape_quote(j.a) if j.kind != "pair" else "",
                "a_id": escape_quote(j.a) if j.kind == "pair" else "",
                "b_id": escape_quote(j.b or "") if j.kind == "pair" else "",
                "answer": escape_quote(j.b or "") if j.kind == "answer" else "",
                "label": j.label, "source": j.source,
                "created_at": j.created_at.isoformat(sep=" ", timespec="seconds")}
               for j in judgements]
    return safe_csv(pd.DataFrame(records, columns=EXPORT_COLUMNS), out)

"""Standard retrieval benchmark files: BEIR queries (JSON lines) and BEIR or TREC qrels.

- queries: ``queries.jsonl``, one ``{"_id": ..., "text": ...}`` per line (BEIR);
  a CSV/TSV with an id column and a text column works too (``qid``/``id``/
  ``query-id`` and ``text``/``query``).
- qrels: ``qrels.tsv`` with the header ``query-id corpus-id score`` (BEIR,
  tab-separated), or TREC's four columns ``qid iteration docid relevance``
  separated by spaces or tabs, without a header. Grades are whole numbers;
  0 means judged not relevant; negative grades (some TREC sets) count as 0.

The corpus ids in the qrels are the corpus' document ids: ingest a BEIR
``corpus.jsonl`` with ``--id-column _id`` (it is guessed) so they match.
Every problem names the file and the line. Both may be gzipped (``.gz``).

Example:
    >>> qrels = read_qrels(b"query-id\\tcorpus-id\\tscore\\nq1\\td7\\t2\\nq1\\td9\\t0\\n", "q.tsv")
    >>> qrels
    {'q1': {'d7': 2, 'd9': 0}}
    >>> read_qrels(b"q1 0 d7 1\\nq2 0 d3 0\\n", "qrels.txt")
    {'q1': {'d7': 1}, 'q2': {'d3': 0}}
"""

from __future__ import annotations

from pathlib import Path

from searchapp.config import max_upload_bytes
from searchapp.errors import IngestError
from searchapp.intake.ingest import read_table
from searchapp.intake.source import Source

QUERY_ID_COLUMNS = ("_id", "query-id", "query_id", "qid", "id")
QUERY_TEXT_COLUMNS = ("text", "query", "question", "title")
BEIR_HEADER = ("query-id", "corpus-id", "score")


def _name(source: bytes | str | Path, filename: str | None) -> str:
    return filename or (Path(source).name if not isinstance(source, bytes) else "qrels.tsv")


def read_queries(source: bytes | str | Path, filename: str | None = None) -> dict[str, str]:
    """{query id: text} from a BEIR ``queries.jsonl`` (or a CSV/TSV with id and text).

    Example:
        >>> read_queries(b'{"_id": "q1", "text": "how to reset a password"}\\n', "queries.jsonl")
        {'q1': 'how to reset a password'}
    """
    name = _name(source, filename)
    table = read_table(source, name)
    frame = table.frame
    lower = {str(c).lower(): c for c in frame.columns}
    id_col = next((lower[c] for c in QUERY_ID_COLUMNS if c in lower), None)
    text_col = next((lower[c] for c in QUERY_TEXT_COLUMNS if c in lower), None)
    if id_col is None or text_col is None:
        raise IngestError(f"{name}: a queries file needs an id column "
                          f"({', '.join(QUERY_ID_COLUMNS)}) and a text column "
                          f"({', '.join(QUERY_TEXT_COLUMNS)}); its columns are: "
                          f"{', '.join(map(str, frame.columns))}.")
    queries: dict[str, str] = {}
    for i, (qid, text) in enumerate(zip(frame[id_col], frame[text_col], strict=True)):
        qid, text = str(qid).strip(), str(text).strip()
        if not qid or not text:
            raise IngestError(f"{name}: {table.row_label(i)} has an empty "
                              f"{'id' if not qid else 'text'}; every query needs both.")
        if qid in queries:
            raise IngestError(f"{name}: {table.row_label(i)} repeats the query id {qid!r}.")
        queries[qid] = text
    return queries


def read_qrels(source: bytes | str | Path, filename: str | None = None
               ) -> dict[str, dict[str, int]]:
    """{query id: {document id: grade}} from BEIR (``query-id corpus-id score``) or TREC qrels."""
    name = _name(source, filename)
    qrels: dict[str, dict[str, int]] = {}
    width = None
    # streamed line by line (a BOM, UTF-16, bad UTF-8 or NUL named by its line)
    for lineno, line in Source(source, name, max_upload_bytes()).lines():
        fields = line.split("\t") if "\t" in line else line.split()
        fields = [f.strip() for f in fields]
        if not any(fields):
            continue
        if width is None and tuple(f.lower() for f in fields[:3]) == BEIR_HEADER:
            width = 3
            continue
        if width is None:
            width = len(fields)
        if len(fields) != width or width not in (3, 4):
            raise IngestError(
                f"{name}: line {lineno} has {len(fields)} fields; expected 3 (BEIR: query-id, "
                "corpus-id, score) or 4 (TREC: query id, iteration, document id, relevance) "
                "on every line.")
        qid, doc, grade = (fields[0], fields[1], fields[2]) if width == 3 else \
            (fields[0], fields[2], fields[3])
        try:
            value = int(float(grade))
        except ValueError:
            raise IngestError(f"{name}: line {lineno} has the grade {grade!r}; grades are whole "
                              "numbers (0 = not relevant).") from None
        qrels.setdefault(qid, {})[doc] = max(value, 0)
    if not qrels:
        raise IngestError(f"{name} has no judgements.")
    return qrels

"""An ingest job's report, stored as the job's result and read back by every front end.

The ``ingest`` job (``files_job``) writes its ``IngestReport`` into the job's result:
the counts and, for each file it did not read, one problem ``{"path", "reason",
"kind"}`` (why, and what to do). The Upload page, the Jobs page, ``searchapp jobs``
and ``jobs show``, the API's job and the notice of the corpus picker all read it
back here (``of_job``), so every place names the same files with the same words.

Kinds of problem: ``failed`` (could not be read), ``skipped`` (not a type we read,
a link, a bad archive member, an upload left out), ``unreadable`` (there, but not
readable now), ``stopped`` (not looked at: the file limit), and ``waiting`` (still
being written: a later ingest reads it; not a failure).

Example:
    >>> r = IngestReport("docs", failed=1, problems=[
    ...     {"path": "a.pdf", "reason": "is damaged", "kind": "failed"}])
    >>> [p["path"] for p in r.left_out()], r.describe()[:22]
    (['a.pdf'], "Corpus 'docs': 0 files")
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

from searchapp.jobs import queue

KIND = "ingest"  # the job kind whose result is an IngestReport
WAITING = "waiting"  # a problem that is not a failure: read by a later ingest


@dataclass
class IngestReport:
    """What an ingest of files did, for the page, the CLI and ``--json``: files added,
    changed, unchanged, removed (``sync``), skipped (not a type we read, links, bad
    archive members) and failed (could not be read), with one line per file left out."""

    corpus: str
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: int = 0
    failed: int = 0
    waiting: int = 0  # still being written: read by a later ingest
    documents: int = 0
    moved: int = 0  # ``sync``: files found under a new path, kept without reading them again
    moved_judgements: int = 0
    # {"path", "reason", "kind"}: kind "skipped", "failed", "unreadable", "stopped", "waiting"
    problems: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    embed_job: int | None = None

    def describe(self) -> str:
        """One sentence.

        Example:
            >>> IngestReport("docs", added=3, unchanged=2, failed=1).describe()
            "Corpus 'docs': 3 files added, 0 changed, 2 unchanged, 0 removed, 0 skipped, 1 failed."
        """
        waiting = f", {self.waiting:,} still being written" if self.waiting else ""
        moved = f", {self.moved:,} moved or renamed" if self.moved else ""
        return (f"Corpus {self.corpus!r}: {self.added:,} files added, {self.changed:,} changed, "
                f"{self.unchanged:,} unchanged{moved}, {self.removed:,} removed, "
                f"{self.skipped:,} skipped, {self.failed:,} failed{waiting}.")

    def lines(self) -> list[str]:
        """The sentence, then a line per file left out and per note."""
        return [self.describe(), *(f"  {problem_line(p)}" for p in self.problems),
                *(f"  note: {n}" for n in self.notes)]

    def left_out(self) -> list[dict]:
        """The files this ingest did not read and will not read by itself (every problem
        but ``waiting``)."""
        return [p for p in self.problems if p.get("kind") != WAITING]

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_result(cls, result: dict | None, corpus: str = "") -> IngestReport:
        """The report a job stored (keys this version does not know are left out, missing
        ones take their defaults); an empty one for a job without a result.

        Example:
            >>> IngestReport.from_result({"corpus": "c", "added": 2, "later": 1}).added
            2
        """
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in (result or {}).items() if k in known}
        values.setdefault("corpus", corpus)
        report = cls(**values)
        report.problems = [_problem(p) for p in report.problems or [] if isinstance(p, dict)]
        return report


def _problem(raw: dict) -> dict:
    """A stored problem with its three keys as strings, whatever an older job wrote."""
    return {"path": str(raw.get("path", "")), "reason": str(raw.get("reason", "")),
            "kind": str(raw.get("kind") or "failed")}


def problem_line(problem: dict) -> str:
    """``path: reason``, the path once (a reader's message may name the file itself).

    Example:
        >>> problem_line({"path": "a.pdf", "reason": "a.pdf is damaged"})
        'a.pdf is damaged'
        >>> problem_line({"path": "b.png", "reason": "is not a type we read"})
        'b.png: is not a type we read'
    """
    path, reason = problem["path"], problem["reason"]
    return reason if reason.startswith(path) else f"{path}: {reason}"


def of_job(job: queue.JobView) -> IngestReport | None:
    """The report of an ``ingest`` job that has one (it ended with a result); None for any
    other job.

    Example:
        >>> of_job(queue.get(app.db, 12)).problems              # doctest: +SKIP
        [{'path': 'scan.png', 'reason': 'is not a type we read; ...', 'kind': 'skipped'}]
    """
    if job.kind != KIND or not isinstance(job.result, dict):
        return None
    return IngestReport.from_result(job.result, str(job.payload.get("corpus", "")))


def problems_of(job: queue.JobView) -> list[dict]:
    """Every file an ingest job did not read, with why and what to do ([] for others)."""
    report = of_job(job)
    return report.problems if report else []


def last_ingest(db, corpus: str) -> queue.JobView | None:
    """The corpus' most recent ingest job that ended with a report (it succeeded).

    Example:
        >>> last_ingest(app.db, "manuals").id                     # doctest: +SKIP
        12
    """
    return queue.last_succeeded(db, KIND, "corpus", corpus)

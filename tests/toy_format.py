"""A format the app does not have, added the way a new format is: one reader and one record.

A ``.toy`` file is ``key: value`` lines; its text is the values, in order. Importing this
module registers it (as a reader module does); a reader process started fresh imports it
again (``registry.reader_modules``), so the ingest job's readers know it too.
"""

from __future__ import annotations

from pathlib import Path

from searchapp.intake.formats.document import DEFAULT_LIMITS, Extracted, Limits, Part
from searchapp.intake.formats.registry import Format, register


def read_toy(path: str | Path, name: str, limits: Limits = DEFAULT_LIMITS) -> list[Extracted]:
    """The values of a ``key: value`` file, one part each."""
    lines = Path(path).read_text("utf-8").splitlines()
    values = [line.partition(":")[2].strip() for line in lines if ":" in line]
    return [Extracted([Part(v) for v in values if v], {"title": values[0] if values else ""})]


TOY = register(Format("toy", "document", ("toy",), "Toy notes", "a toy notes file", read_toy))

"""Property-based API testing, the long run: schemathesis against ``make run``'s server.

Starts ``streamlit run serve.py`` on a free port of 127.0.0.1 with a data folder
holding an embedded corpus and an API key, then sends every operation of the
OpenAPI document ``--examples`` generated requests that fit the schema and as
many that do not (``tests/api_fuzzer.py``). Counts requests per operation and
status, server errors (5xx) and responses that violate the schema (status,
content type or body). There is no peer: the acceptance is 0 and 0 over at
least 1,000 requests. The short run of ``make test`` is ``tests/test_api_fuzz.py``.

Run:
    PYTHONPATH=. .venv/bin/python benchmarks/api_fuzz.py --examples 40
Writes benchmarks/results/api_fuzz.json (and prints it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.api_fuzzer import fuzz  # noqa: E402
from tests.browser import served_app  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def prepare(data_dir: Path) -> str:
    """An embedded corpus 'faq' (the sample's first 300 captions) and a key; returns the key."""
    from searchapp.access import keys
    from searchapp.config import Settings
    from searchapp.context import App
    from searchapp.intake.ingest import Table, read_table
    from searchapp.intake.table_upload import upload
    from searchapp.jobs.worker import work

    app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": str(data_dir), "SEARCHAPP_DEVICE": "cpu"}))
    table = read_table(ROOT / "searchapp" / "sample" / "captions.csv.gz")
    upload(app, Table(table.frame.head(300), table.format, table.row_label), "faq")
    work(app, stop_when_idle=True)
    key = keys.create(app.db, "fuzz").key
    app.db.dispose()
    return key


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=40,
                        help="generated requests per operation and mode (positive, negative)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="api-fuzz-") as tmp:
        data = Path(tmp) / "data"
        key = prepare(data)
        load = os.getloadavg()
        with served_app(data, Path(tmp) / "server.log") as (_proc, url):
            report = fuzz(url, key, examples=args.examples, seed=args.seed)
    result = {"examples_per_operation_and_mode": args.examples, "seed": args.seed,
              **report.as_dict(), "load_before": [round(x, 1) for x in load],
              "when": time.strftime("%Y-%m-%d %H:%M:%S")}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "api_fuzz.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

"""API load: 16 clients for 60 s, searches mixed with upserts while an embed job runs.

Starts ``streamlit run serve.py`` as ``make run`` does (its worker included) on a
free port of 127.0.0.1, on a data folder holding the embedded sample corpus
(``caps``, 3,025 captions) and a second corpus whose embedding is queued
(``incoming``, the same captions again): the server's worker embeds it during
the run. Then ``--clients`` threads, each with its own HTTP connection and an
API key, loop for ``--seconds``: 4 searches (hybrid, k=10, a caption as the
query) for every upsert of 5 new documents into ``caps`` (each queues an
embed job too). Reported per endpoint: requests, requests/s, p50/p99 latency,
and errors (any answer that is not 2xx, or no answer).

The peer: the same searches as in-process calls of ``search.service.search`` (the
function the API calls) in this process on the same data, one at a time,
alternating with the same search through the API on one connection, after the
load once the worker has finished its jobs (``--settle`` seconds at most: with an
embed job running, its commits move the corpus' generation under both and the
two processes get the cores unevenly): the API's overhead is the difference of
their p50 (HTTP, JSON, the door's key check, the thread hop).

Searches alone (``--scenarios idle,embed``, issue 34): ``idle`` = the clients only search
(no upserts, no job: an idle corpus); ``embed`` = the same searches while the worker embeds
a corpus eight times the sample's size (24,200 captions, queued before the load, so the job
runs throughout; its progress before and after is reported). Per scenario: the search
p50/p99 seen by the clients and the server's own time (the ``total`` of the
``Server-Timing`` header), so queueing shows apart from work.

Run once on a quiet machine (check ``uptime``):
    PYTHONPATH=. .venv/bin/python benchmarks/api_load.py
    PYTHONPATH=. .venv/bin/python benchmarks/api_load.py --scenarios idle,embed --seconds 30
Writes benchmarks/results/api_load.json (api_load_searches_SCENARIOS.json for --scenarios), and
prints it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser import served_app  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
SAMPLE = ROOT / "searchapp" / "sample" / "captions.csv.gz"


def prepare(data_dir: Path, incoming: int = 1) -> tuple[str, list[str]]:
    """'caps' embedded, 'incoming' queued (the captions ``incoming`` times over; 0: none);
    returns (key, queries)."""
    from searchapp.access import keys
    from searchapp.config import Settings
    from searchapp.context import App
    from searchapp.intake.ingest import read_table
    from searchapp.intake.table_upload import upload
    from searchapp.jobs.worker import work

    app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": str(data_dir), "SEARCHAPP_DEVICE": "cpu"}))
    table = read_table(SAMPLE)
    upload(app, table, "caps")
    work(app, stop_when_idle=True)
    if incoming == 1:
        upload(app, table, "incoming")  # its embed job waits for the server's worker
    elif incoming > 1:
        upload(app, read_table(_repeated(SAMPLE, incoming, data_dir.parent)), "incoming")
    key = keys.create(app.db, "load").key
    app.db.dispose()
    return key, [str(t) for t in table.frame["text"].tolist()]


def _repeated(sample: Path, times: int, folder: Path) -> Path:
    """The sample's captions ``times`` over (new ids, a copy number in the text), as a CSV."""
    import pandas as pd

    frame = pd.read_csv(sample)
    copies = [frame.assign(id=frame["id"].astype(str) + f"-{n}",
                           text=frame["text"] + f" (copy {n})") for n in range(times)]
    path = folder / "incoming.csv"
    pd.concat(copies).to_csv(path, index=False)
    return path


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def summary(values: list[float]) -> dict:
    return {"n": len(values), "p50_ms": round(percentile(values, 50), 1),
            "p99_ms": round(percentile(values, 99), 1),
            "mean_ms": round(statistics.fmean(values), 1)} if values else {"n": 0}


def load(url: str, key: str, queries: list[str], clients: int, seconds: float,
         searches_only: bool = False) -> dict:
    import httpx

    server_ms: list[float] = []  # the total of each search's Server-Timing header
    latencies: dict[str, list[float]] = defaultdict(list)
    errors: dict[str, list[str]] = defaultdict(list)
    lock = threading.Lock()
    start = threading.Barrier(clients + 1)
    deadline = [0.0]

    def client(number: int) -> None:
        rng = random.Random(number)
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=url, headers=headers, timeout=120) as http:
            start.wait()
            sent = 0
            while time.monotonic() < deadline[0]:
                upsert = sent % 5 == 4 and not searches_only
                if upsert:
                    name = "PUT /corpora/{name}/documents"
                    body = {"documents": [{"id": f"load-{number}-{sent}-{i}",
                                           "text": rng.choice(queries) + f" (copy {sent})",
                                           "meta": {"client": number}} for i in range(5)]}
                else:
                    name = "POST /corpora/{name}/search"
                    body = {"query": rng.choice(queries), "k": 10}
                began = time.perf_counter()
                try:
                    response = http.put("/api/v1/corpora/caps/documents", json=body) if upsert \
                        else http.post("/api/v1/corpora/caps/search", json=body)
                    problem = None if 200 <= response.status_code < 300 else \
                        f"{response.status_code} {response.text[:200]}"
                except Exception as exc:  # no answer at all counts as an error too
                    problem = f"{type(exc).__name__}: {exc}"
                took = (time.perf_counter() - began) * 1000
                timing = "" if upsert or problem else response.headers.get("server-timing", "")
                with lock:
                    latencies[name].append(took)
                    if "total;dur=" in timing:
                        server_ms.append(float(timing.rsplit("total;dur=", 1)[1]))
                    if problem:
                        errors[name].append(problem)
                sent += 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    deadline[0] = time.monotonic() + seconds
    began = time.monotonic()
    start.wait()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - began
    total = sum(len(v) for v in latencies.values())
    return {"clients": clients, "seconds": round(elapsed, 1), "requests": total,
            "requests_per_s": round(total / elapsed, 1),
            "errors": sum(len(v) for v in errors.values()),
            "first_errors": [e for v in errors.values() for e in v][:5],
            "search_server_time": summary(server_ms),
            "endpoints": {name: {**summary(v), "per_s": round(len(v) / elapsed, 1),
                                 "errors": len(errors[name])}
                          for name, v in sorted(latencies.items())}}


def settle(http, seconds: float) -> float | None:
    """Wait (polling) until no job is queued or running; the seconds it took, None if not."""
    began = time.monotonic()
    while time.monotonic() - began < seconds:
        jobs = http.get("/api/v1/jobs", params={"limit": 500}).json()["jobs"]
        if all(j["status"] not in ("queued", "running") for j in jobs):
            return round(time.monotonic() - began, 1)
        time.sleep(2.0)
    return None


def overhead(url: str, key: str, data_dir: Path, queries: list[str], rounds: int) -> dict:
    """The same searches through the API and in-process, alternating, one at a time."""
    import httpx

    from searchapp.config import Settings
    from searchapp.context import App
    from searchapp.search.service import search

    app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": str(data_dir), "SEARCHAPP_DEVICE": "cpu"}))
    rng = random.Random(0)
    picked = [rng.choice(queries) for _ in range(rounds)]
    api_ms, local_ms, same = [], [], 0
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"},
                      timeout=120) as http:
        for query in picked[:3]:  # warm both: the model and the index loaded on each side
            http.post("/api/v1/corpora/caps/search", json={"query": query, "k": 10})
            search(app, "caps", query, k=10)
        for query in picked:
            began = time.perf_counter()
            through_api = http.post("/api/v1/corpora/caps/search",
                                    json={"query": query, "k": 10}).json()
            api_ms.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            local = search(app, "caps", query, k=10)
            local_ms.append((time.perf_counter() - began) * 1000)
            same += [h["id"] for h in through_api["results"]] == [h.id for h in local]
    api, peer = summary(api_ms), summary(local_ms)
    return {"rounds": rounds, "api": api, "in_process": peer,
            "overhead_p50_ms": round(api["p50_ms"] - peer["p50_ms"], 1),
            "ratio_p50": round(api["p50_ms"] / peer["p50_ms"], 2),
            "same_hits": f"{same}/{rounds}"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rounds", type=int, default=100, help="searches for the overhead")
    parser.add_argument("--settle", type=float, default=900.0,
                        help="seconds at most to wait for the worker's jobs to end before it")
    parser.add_argument("--scenarios", default="",
                        help="idle,embed: searches only, without and with an embed job")
    args = parser.parse_args()
    if args.scenarios:
        searches(args)
        return
    with tempfile.TemporaryDirectory(prefix="api-load-") as tmp:
        data = Path(tmp) / "data"
        key, queries = prepare(data)
        load_before = [round(x, 1) for x in os.getloadavg()]
        with served_app(data, Path(tmp) / "server.log") as (_proc, url):
            import httpx

            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"},
                              timeout=300) as http:  # the server's model, loaded before timing
                http.post("/api/v1/corpora/caps/search", json={"query": "warm up", "k": 1})
                embed = http.get("/api/v1/corpora/incoming").json()
            result = load(url, key, queries, args.clients, args.seconds)
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}) as http:
                after = http.get("/api/v1/corpora/incoming").json()
                load_after = [round(x, 1) for x in os.getloadavg()]
                settled = settle(http, args.settle)
            result["embed_job_during_load"] = {
                "corpus": "incoming", "embedded_before": embed["embedded"],
                "embedded_after": after["embedded"], "documents": after["documents"]}
            result["api_overhead"] = {"jobs_finished_first_s": settled,
                                      **overhead(url, key, data, queries, args.rounds)}
    result.update({"load_before": load_before, "load_after_load_phase": load_after,
                   "cpus": os.cpu_count(), "when": time.strftime("%Y-%m-%d %H:%M:%S")})
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "api_load.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


def warm_query_path(http, deadline_s: float = 600.0) -> dict:
    """Search until the server's fast query path is built (the encode stage's ``desc`` in
    ``Server-Timing`` is no longer torch), as a server is after its warm-up; what it took."""
    began, sent, path = time.monotonic(), 0, "torch"
    while path == "torch" and time.monotonic() - began < deadline_s:
        answer = http.post("/api/v1/corpora/caps/search", json={"query": f"warm {sent}", "k": 1})
        sent += 1
        timing = answer.headers.get("server-timing", "")
        if 'encode;desc="' in timing:
            path = timing.split('encode;desc="', 1)[1].split('"', 1)[0]
        if path == "torch":
            time.sleep(0.5)  # the build runs on the server's own thread meanwhile
    return {"query_path": path, "searches": sent, "seconds": round(time.monotonic() - began, 1)}


def start_embedding(http, data: Path, deadline_s: float = 300.0) -> dict:
    """Start the worker for ``data`` (searches queue no job, so the server starts none) and
    wait until the 'incoming' embed job has stored its first batch; the corpus then."""
    from searchapp.config import Settings
    from searchapp.jobs.worker import ensure_worker

    ensure_worker(Settings.from_env({"SEARCHAPP_DATA_DIR": str(data),
                                     "SEARCHAPP_DEVICE": "cpu"}))
    began = time.monotonic()
    while time.monotonic() - began < deadline_s:
        corpus = http.get("/api/v1/corpora/incoming").json()
        if corpus["embedded"] > 0:
            return corpus
        time.sleep(1.0)
    raise SystemExit("the embed job stored nothing in time: no worker running?")


def searches(args) -> None:
    """Searches only, per scenario: ``idle`` (no job) and ``embed`` (a long embed job)."""
    import httpx

    out: dict = {"clients": args.clients, "seconds": args.seconds, "cpus": os.cpu_count(),
                 "when": time.strftime("%Y-%m-%d %H:%M:%S"), "scenarios": {}}
    for scenario in args.scenarios.split(","):
        with tempfile.TemporaryDirectory(prefix="api-load-") as tmp:
            data = Path(tmp) / "data"
            key, queries = prepare(data, incoming=8 if scenario == "embed" else 0)
            load_before = [round(x, 1) for x in os.getloadavg()]
            with served_app(data, Path(tmp) / "server.log") as (_proc, url):
                headers = {"Authorization": f"Bearer {key}"}
                with httpx.Client(base_url=url, headers=headers, timeout=300) as http:
                    result_warm = warm_query_path(http)
                    before = start_embedding(http, data) if scenario == "embed" else None
                result = load(url, key, queries, args.clients, args.seconds, searches_only=True)
                result["warm_up"] = result_warm
                if before is not None:
                    with httpx.Client(base_url=url, headers=headers, timeout=300) as http:
                        after = http.get("/api/v1/corpora/incoming").json()
                    result["embed_job_during_load"] = {
                        "documents": after["documents"], "embedded_before": before["embedded"],
                        "embedded_after": after["embedded"]}
            result["load_before"] = load_before
            result["load_after"] = [round(x, 1) for x in os.getloadavg()]
            out["scenarios"][scenario] = result
            search = result["endpoints"].get("POST /corpora/{name}/search", {})
            print(f"{scenario}: search p50 {search.get('p50_ms')} ms, p99 {search.get('p99_ms')}"
                  f" ms, {search.get('per_s')}/s, errors {result['errors']}; server time "
                  f"{result['search_server_time']}", flush=True)
    RESULTS.mkdir(exist_ok=True)
    name = f"api_load_searches_{args.scenarios.replace(',', '_')}.json"
    (RESULTS / name).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

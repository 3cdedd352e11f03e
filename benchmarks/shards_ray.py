"""The sharded index served by Ray, end to end: a PostgreSQL server, a local Ray cluster of
several nodes (each its own raylet process: ``ray.cluster_utils.Cluster``), and the app's
shard servers (``searchapp shards serve``) against the app's single-machine index on the
same vectors in the same run.

Input: ``--vectors`` synthetic 384-d unit vectors with a known neighbour structure
(``synthetic.clustered_vectors``: topics, clusters, near-duplicates), stored through the
app's store in PostgreSQL as the embed job writes them. Queries: ``--queries`` stored
vectors moved by a small noise (their true neighbours: exact search over all vectors).

For 1, 2, 4 and 8 shards (``--shards``) and each ``--compression``, it reports: build time
(``serve`` until every replica has built its shard from the database), memory per shard
(what the index holds, ``memory_bytes``; and each actor process' resident memory),
recall@10 against exact search, and the fan-out's p50/p99 per query (the client's
``nearest``: one replica of every shard asked in parallel, merged); the peer is the
single-machine path (``open_corpus``: the whole hnswlib index in this process), same
vectors, same queries. Then the faults, with 2 shards: a replica killed (kill -9) during a
stream of queries, with 2 replicas (answers must stay complete) and with 1 (answers are
partial until Ray restarts it: how many, for how long), and documents added during the
stream (how long until found).

    PYTHONPATH=. .venv/bin/python benchmarks/shards_ray.py --vectors 200000
    PYTHONPATH=. .venv/bin/python benchmarks/shards_ray.py --vectors 20000 --shards 1,2 --quick
    PYTHONPATH=. .venv/bin/python benchmarks/shards_ray.py --vectors 10000000 \
        --compression sq8,pq --quick

Above ``HOLD_MAX`` vectors (or with ``--stream``) the vectors are made, stored and
searched exactly a chunk at a time (``synthetic.clustered_chunks``), never held, and
the single-machine peer is not run (its float32 index would not fit beside the
database); each layout's latency is then also given against 1 shard.

Writes benchmarks/results/shards_ray.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import sys
import tempfile
import threading
import time
from contextlib import nullcontext
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.synthetic import clustered_vectors, store_corpus

RESULTS = Path(__file__).parent / "results" / "shards_ray.json"
HOLD_MAX = 2_000_000  # vectors held in this process; above, made and stored by chunks
NAME = "synthetic"
K = 10


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def rss_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class ExactTop:
    """The true top K ids of each query, by brute force over vectors given in chunks."""

    def __init__(self, queries: np.ndarray):
        self.queries = queries
        self.scores = np.full((len(queries), K), -np.inf, np.float32)
        self.ids = np.zeros((len(queries), K), np.int64)

    def update(self, vectors: np.ndarray, ids: np.ndarray) -> None:
        for start in range(0, len(vectors), 100_000):
            scores = self.queries @ vectors[start:start + 100_000].T
            both = np.concatenate([self.scores, scores], axis=1)
            both_ids = np.concatenate([self.ids, np.broadcast_to(
                ids[start:start + 100_000], scores.shape)], axis=1)
            top = np.argpartition(-both, K, axis=1)[:, :K]
            self.scores = np.take_along_axis(both, top, axis=1)
            self.ids = np.take_along_axis(both_ids, top, axis=1)

    def sets(self) -> list[set[int]]:
        return [set(row.tolist()) for row in self.ids]


def exact_top(vectors: np.ndarray, ids: np.ndarray, queries: np.ndarray) -> list[set[int]]:
    """The true top K ids of each query over all ``vectors``."""
    top = ExactTop(queries)
    top.update(vectors, ids)
    return top.sets()


def noisy(sources: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Queries: stored vectors moved by a small noise, unit length again."""
    queries = sources + rng.standard_normal(sources.shape, dtype=np.float32) * 0.02
    return queries / np.linalg.norm(queries, axis=1, keepdims=True)


def stream_corpus(app, n: int, count: int, log_line, stored: bool = False
                  ) -> tuple[np.ndarray, list[set[int]], dict]:
    """A corpus too large to hold (``HOLD_MAX``): made, stored and searched exactly a chunk
    at a time; (queries, their true top K, store timings). ``stored``: the database holds
    it already (``--database``): made again and searched, not stored."""
    from benchmarks.synthetic import clustered_chunks, store_chunk

    rng = np.random.default_rng(1)
    picks = np.sort(rng.choice(n, size=count, replace=False))
    sources = np.concatenate([m[picks[(picks >= a) & (picks < a + len(m))] - a]
                              for a, m in clustered_chunks(n)])
    queries = noisy(sources, rng)
    top, after, started = ExactTop(queries), 0, time.perf_counter()
    known = stored_ids(app, n) if stored else None
    for start, matrix in clustered_chunks(n):
        if known is not None:
            ids = known[start:start + len(matrix)]
        else:
            ids = store_chunk(app, NAME, start, matrix, after)
        after = int(ids.max())
        top.update(matrix, ids)
        if (start // len(matrix)) % 10 == 9 or start + len(matrix) >= n:
            log_line(f"{start + len(matrix):,} of {n:,} stored and searched exactly, "
                     f"{time.perf_counter() - started:.0f} s")
    took = round(time.perf_counter() - started, 1)
    return queries, top.sets(), ({"made_again_and_searched_exactly": took} if stored
                                 else {"documents_and_vectors": took})


def stored_ids(app, n: int) -> np.ndarray:
    """The ids (n,) of rows 0..n-1 of the corpus a streamed run stored ("synthetic-i")."""
    from sqlalchemy import text

    from searchapp.store import repo

    ids = np.full(n, -1, np.int64)
    with app.db.session() as s:
        corpus_id = repo.corpus_state(s, NAME).id
        rows = s.execute(text("SELECT id, external_id FROM documents WHERE corpus_id = :c")
                         .execution_options(yield_per=100_000), {"c": corpus_id})
        for doc, external in rows:
            ids[int(external.rsplit("-", 1)[1])] = doc
    if (ids < 0).any():
        raise SystemExit(f"the database holds {int((ids >= 0).sum()):,} of {n:,} rows")
    return ids


def measure(nearest, queries: np.ndarray, truth: list[set[int]]) -> dict:
    """Recall@10 and per-query latency of ``nearest(vector) -> ids``."""
    for q in queries[:20]:  # warm
        nearest(q)
    times, hits = [], 0
    for q, true in zip(queries, truth, strict=True):
        started = time.perf_counter()
        found = nearest(q)
        times.append((time.perf_counter() - started) * 1000)
        hits += len(set(found[:K]) & true)
    return {"recall_at_10": round(hits / (K * len(queries)), 4),
            "p50_ms": round(float(np.percentile(times, 50)), 3),
            "p99_ms": round(float(np.percentile(times, 99)), 3)}


def single_machine(app, queries, truth) -> dict:
    from searchapp.search.nearest import nearest_documents
    from searchapp.vectors.handle import open_corpus

    started = time.perf_counter()
    handle = open_corpus(app, NAME)
    build = time.perf_counter() - started
    index = handle.index
    row = measure(lambda q: [c.doc for c in nearest_documents(index, None, q, K)], queries,
                  truth)
    return {**row, "build_seconds": round(build, 1), "memory_bytes": index.memory_bytes()
            if hasattr(index, "memory_bytes") else None,
            "process_rss_mib": rss_mib(os.getpid())}


def sharded(app, shards: int, compression: str, queries, truth, words: bool = False) -> dict:
    from searchapp.search.shards import ray_shards

    started = time.perf_counter()
    rows = ray_shards.serve(app, NAME, shards, 1, compression, words=words)
    build = time.perf_counter() - started
    with app.db.session() as s:
        from searchapp.store import repo

        state = repo.corpus_state(s, NAME)
    client = ray_shards.client_for(app, state.id, app.model_ref(state.model_name).id)
    row = measure(lambda q: [c.doc for c in client.nearest(q, K, 0.5)], queries, truth)
    per_shard = [r["memory_bytes"] for r in rows]
    rss = [rss_mib(r["pid"]) for r in rows]
    return {**row, "shards": shards, "compression": compression,
            "build_seconds": round(build, 1),
            "shard_build_seconds_max": round(max(r["built_seconds"] or 0 for r in rows), 1),
            "memory_bytes_per_shard_max": max(per_shard), "memory_bytes_total": sum(per_shard),
            "actor_rss_mib_max": max(x for x in rss if x is not None) if any(rss) else None,
            "nodes": sorted({r["ray_node"] for r in rows}),
            "documents_per_shard": [r["documents"] for r in rows]}


def stream(client, queries, stop: threading.Event, log: list) -> None:
    """Queries one after another until ``stop``: (time, ms, missing shards) each."""
    from searchapp.search.coverage import collecting

    i = 0
    while not stop.is_set():
        q = queries[i % len(queries)]
        i += 1
        started = time.perf_counter()
        with collecting() as missing:
            client.nearest(q, K, 0.5)
        log.append((time.monotonic(), (time.perf_counter() - started) * 1000, sorted(missing)))


def fault_run(app, replicas: int, queries, log_line) -> dict:
    """Kill one replica of shard 1 during a stream of queries; what the answers did."""
    from searchapp.search.shards import ray_shards
    from searchapp.store import repo

    rows = ray_shards.serve(app, NAME, 2, replicas, "float32")
    with app.db.session() as s:
        state = repo.corpus_state(s, NAME)
    client = ray_shards.client_for(app, state.id, app.model_ref(state.model_name).id)
    victim = next(r for r in rows if r["number"] == 0 and r["replica"] == 0)
    stop, log = threading.Event(), []
    worker = threading.Thread(target=stream, args=(client, queries, stop, log))
    worker.start()
    while len(log) < 200:
        time.sleep(0.01)  # the stream's own pace: let it run 200 queries before the kill
    killed = time.monotonic()
    os.kill(victim["pid"], signal.SIGKILL)
    deadline = killed + 300
    back = None
    while time.monotonic() < deadline:
        after = [e for e in log if e[0] > killed]
        partial = [e for e in after if e[2]]
        if replicas > 1 and len(after) > 500:
            break
        if partial and not after[-1][2] and len(after) - after.index(partial[-1]) > 50:
            back = partial[-1][0]
            break
        time.sleep(0.05)
    stop.set()
    worker.join()
    after = [e for e in log if e[0] > killed]
    partial = [e for e in after if e[2]]
    ms = [e[1] for e in after]
    out = {"replicas": replicas, "queries_after_kill": len(after),
           "partial_answers": len(partial),
           "partial_seconds": round(back - killed, 1) if back else 0.0,
           "missing_named": sorted({m for e in partial for m in e[2]}),
           "p50_ms_after_kill": round(float(np.percentile(ms, 50)), 3) if ms else None,
           "p99_ms_after_kill": round(float(np.percentile(ms, 99)), 3) if ms else None}
    log_line(f"fault, {replicas} replica(s): {out}")
    return out


def freshness_run(app, dim: int, log_line) -> dict:
    """Documents added while queries stream: seconds from commit until found through shards."""
    from benchmarks.synthetic import MODEL
    from searchapp.search.shards import ray_shards
    from searchapp.store import repo

    rows = ray_shards.serve(app, NAME, 2, 1, "float32")
    assert rows
    rng = np.random.default_rng(7)
    vector = rng.standard_normal(dim).astype(np.float32)
    vector /= np.linalg.norm(vector)
    with app.db.session() as s:
        corpus = repo.get_or_create_corpus(s, NAME, MODEL)
        repo.add_documents(s, corpus, [repo.NewDocument("fresh-1", "a new document")])
    with app.db.session() as s:
        state = repo.corpus_state(s, NAME)
        doc = {v: k for k, v in repo.external_ids(s, state.id).items()}["fresh-1"]
    model = app.model_ref(MODEL)
    with app.db.session() as s:
        repo.save_embeddings(s, state.id, model.id, [doc], vector[None, :])
    committed = time.monotonic()
    client = ray_shards.client_for(app, state.id, model.id)
    while True:
        if client.nearest(vector, 1, 0.5)[0].doc == doc:
            break
    seconds = time.monotonic() - committed
    log_line(f"freshness: found {seconds:.2f} s after its commit "
             f"(replicas catch up every {ray_shards.REFRESH_SECONDS} s)")
    return {"found_after_seconds": round(seconds, 2),
            "refresh_seconds": ray_shards.REFRESH_SECONDS}


def write(args, parts: dict) -> Path:
    """The run's results so far (each layout is written as it is measured: a long run that
    stops keeps what it measured)."""
    result = {"cpu": cpu_model(), "cores": os.cpu_count(), "vectors": args.vectors,
              "queries": args.queries, "ray_nodes": args.nodes, "database": "postgresql",
              **parts}
    out = args.out or (RESULTS if args.vectors == 200_000 else RESULTS.with_name(
        f"shards_ray_{args.vectors}.json"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vectors", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--shards", default="1,2,4,8")
    parser.add_argument("--compression", default="float32",
                        help="comma list of float32, sq8, pq")
    parser.add_argument("--nodes", type=int, default=4, help="Ray nodes (processes)")
    parser.add_argument("--quick", action="store_true", help="no fault or freshness runs")
    parser.add_argument("--stream", action="store_true",
                        help=f"make and store the vectors by chunks (always above {HOLD_MAX:,})")
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None, help="the result file (default: "
                        "results/shards_ray.json at 200,000 vectors, else shards_ray_N.json)")
    parser.add_argument("--database", help="a PostgreSQL URL holding the corpus of an earlier "
                        "streamed run of the same --vectors (it is searched, not stored)")
    parser.add_argument("--words", action="store_true", help="shards keep their full text "
                        "too (its build is timed with theirs; benchmarks/shards_fulltext.py "
                        "measures it)")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    work = args.work or Path(tempfile.mkdtemp(prefix="shards-ray-"))
    import ray
    from ray.cluster_utils import Cluster

    from tests.postgres import PostgresServer

    def log_line(text: str) -> None:
        print(text, flush=True)

    with (nullcontext() if args.database else PostgresServer.start()) as server:
        url = args.database or server.create_database()
        os.environ.update({"SEARCHAPP_DATA_DIR": str(work), "SEARCHAPP_DATABASE_URL": url,
                           "SEARCHAPP_SEARCH_ENGINE": "ray"})
        from searchapp.context import App

        app = App()
        if args.vectors > HOLD_MAX or args.stream:
            queries, truth, store_seconds = stream_corpus(app, args.vectors, args.queries,
                                                          log_line, bool(args.database))
            peer = None
            log_line(f"single machine: not run on a corpus made by chunks (float32 hnswlib "
                     f"needs about {args.vectors * 1733 / 2**30:.1f} GiB in one process)")
        else:
            vectors = clustered_vectors(args.vectors)
            stored = store_corpus(app, NAME, [f"passage {i}" for i in range(args.vectors)],
                                  vectors, log=log_line)
            rng = np.random.default_rng(1)
            picks = rng.choice(args.vectors, size=args.queries, replace=False)
            queries = noisy(vectors[picks], rng)
            truth = exact_top(vectors, stored["ids"], queries)
            store_seconds = {"documents": stored["documents_seconds"],
                             "vectors": stored["vectors_seconds"]}
            del vectors
            peer = single_machine(app, queries, truth)
            log_line(f"single machine (the app's index in one process): {peer}")
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
        for _ in range(args.nodes - 1):
            cluster.add_node(num_cpus=1)
        ray.init(address=cluster.address, log_to_driver=False, namespace="searchapp")
        rows = []
        try:
            for compression in args.compression.split(","):
                for shards in [int(s) for s in args.shards.split(",")]:
                    row = sharded(app, shards, compression, queries, truth, args.words)
                    base = peer or next((r for r in rows if r["compression"] == compression
                                         and r["shards"] == 1), row)
                    row["p50_ratio_to_single" if peer else "p50_ratio_to_one_shard"] = round(
                        row["p50_ms"] / base["p50_ms"], 2)
                    rows.append(row)
                    log_line(f"{shards} shard(s), {compression}: recall@10 "
                             f"{row['recall_at_10']}, p50 {row['p50_ms']} ms / p99 "
                             f"{row['p99_ms']} ms (against {'single' if peer else '1 shard'} "
                             f"{base['p50_ms']} / {base['p99_ms']}), build "
                             f"{row['build_seconds']} s, largest shard "
                             f"{row['memory_bytes_per_shard_max'] / 2**20:.1f} MB, nodes "
                             f"{len(row['nodes'])}")
                    write(args, {"single_machine": peer, "sharded": rows,
                                 "store_seconds": store_seconds, "partial": True})
            faults = [] if args.quick else [fault_run(app, 2, queries, log_line),
                                             fault_run(app, 1, queries, log_line)]
            fresh = None if args.quick else freshness_run(app, queries.shape[1], log_line)
        finally:
            from searchapp.search.shards import ray_shards

            ray_shards.stop(app, NAME)
            ray.shutdown()
            cluster.shutdown()
    out = write(args, {"single_machine": peer, "sharded": rows, "faults": faults,
                       "freshness": fresh, "store_seconds": store_seconds})
    log_line(f"wrote {out}")


if __name__ == "__main__":
    main()

"""Issue 33's numbers: a 1M-judgement import and listing, and a 200 MB request refused.

Usage (from the repository root; writes only under OUT, default a new temporary folder):

    PYTHONPATH=. .venv/bin/python benchmarks/trust_limits.py [--judgements 1000000] [--out DIR]

1. Import: a corpus of 1,500 documents (no vectors needed) and a CSV of N distinct pair
   judgements; ``searchapp judge import`` run as its own process under ``/usr/bin/time``:
   wall time and peak RSS.
2. Listing: a real server (``streamlit run serve.py`` as ``make run``) on the same data
   folder; every page of ``GET /api/v1/corpora/NAME/judgements?limit=1000`` fetched in turn:
   time, bytes, the largest page, the server's peak RSS (VmHWM) before and after, and the
   slowest ``/healthz`` answered meanwhile (a second thread).
3. A 200 MB body: announced (Content-Length) and chunked, to the API with the default
   limit (64 MiB): the time to the 413 and the server's VmHWM before and after.
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from itertools import combinations, islice
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.browser import served_app  # noqa: E402

DOCS = 1_500


def status_kb(pid: int) -> dict[str, int]:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text()
                  .splitlines() if ":" in line)
    return {k: int(fields[k].split()[0]) for k in ("VmRSS", "VmHWM")}


def make_corpus(data: Path, n: int, csv: Path) -> None:
    from searchapp.config import Settings
    from searchapp.context import App
    from searchapp.store import repo

    app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": str(data)}))
    with app.db.session() as s:
        c = repo.get_or_create_corpus(s, "big", "all-MiniLM-L6-v2")
        repo.add_documents(s, c, [repo.NewDocument(f"d{i}", f"text {i}") for i in range(DOCS)])
    app.db.dispose()
    with open(csv, "w") as f:
        f.write("a_id,b_id,label\n")
        for k, (a, b) in enumerate(islice(combinations(range(DOCS), 2), n)):
            f.write(f"d{a},d{b},{k % 2}\n")


def import_run(data: Path, csv: Path) -> dict:
    env = {**os.environ, "SEARCHAPP_DATA_DIR": str(data), "PYTHONPATH": str(REPO)}
    started = time.monotonic()
    done = subprocess.run(["/usr/bin/time", "-f", "%M %e", sys.executable, "-m", "searchapp",
                           "judge", "import", "--corpus", "big", str(csv)],
                          env=env, capture_output=True, text=True, check=True)
    peak_kb, _elapsed = done.stderr.strip().splitlines()[-1].split()
    return {"seconds": round(time.monotonic() - started, 1), "peak_rss_mb": int(peak_kb) // 1024,
            "said": done.stdout.strip()}


def health_watch(url: str, stop: threading.Event, worst: list[float]) -> None:
    with httpx.Client(base_url=url, timeout=60) as client:
        while not stop.is_set():
            started = time.monotonic()
            client.get("/healthz")
            worst[0] = max(worst[0], time.monotonic() - started)
            stop.wait(0.05)


def list_run(url: str, pid: int) -> dict:
    before = status_kb(pid)
    stop, worst = threading.Event(), [0.0]
    watcher = threading.Thread(target=health_watch, args=(url, stop, worst))
    watcher.start()
    count = pages = sent = largest = 0
    cursor = None
    started = time.monotonic()
    with httpx.Client(base_url=url, timeout=120) as client:
        while True:
            params = {"limit": 1000, **({"cursor": cursor} if cursor else {})}
            response = client.get("/api/v1/corpora/big/judgements", params=params)
            response.raise_for_status()
            sent += len(response.content)
            largest = max(largest, len(response.content))
            page = response.json()
            count += len(page["judgements"])
            pages += 1
            cursor = page["next_cursor"]
            if cursor is None:
                break
    seconds = time.monotonic() - started
    stop.set()
    watcher.join()
    after = status_kb(pid)
    return {"judgements": count, "pages": pages, "seconds": round(seconds, 1),
            "mb_sent": round(sent / 2**20, 1), "largest_page_kb": largest // 1024,
            "server_hwm_mb_before": before["VmHWM"] // 1024,
            "server_hwm_mb_after": after["VmHWM"] // 1024,
            "slowest_healthz_ms": round(worst[0] * 1000, 1)}


def refuse_run(url: str, pid: int, chunked: bool) -> dict:
    port = int(url.rsplit(":", 1)[1])
    before = status_kb(pid)
    head = (f"PUT /api/v1/corpora/big/documents HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Content-Type: application/json\r\n"
            + ("Transfer-Encoding: chunked\r\n" if chunked else f"Content-Length: {200 << 20}\r\n")
            + "\r\n")
    piece = b"[" * (1 << 20)
    sent = 0
    started = time.monotonic()
    body = (b"%x\r\n" % len(piece) + piece + b"\r\n") if chunked else piece
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(head.encode())
        answer, pending = b"", memoryview(body)
        while b"\r\n\r\n" not in answer:
            writable = [sock] if sent < 200 << 20 else []
            readable, ready, _ = select.select([sock], writable, [], 60)
            if readable:
                more = sock.recv(65536)
                if not more:
                    break
                answer += more
            elif ready:
                try:
                    n = sock.send(pending)
                except OSError:
                    writable = []
                    continue
                sent += n
                pending = pending[n:] or memoryview(body)
    seconds = time.monotonic() - started
    after = status_kb(pid)
    return {"status_line": answer.split(b"\r\n", 1)[0].decode(),
            "detail": answer.rsplit(b"\r\n\r\n", 1)[-1].decode()[:200],
            "mb_sent_before_refusal": round(sent / 2**20, 1), "seconds": round(seconds, 3),
            "server_hwm_mb_before": before["VmHWM"] // 1024,
            "server_hwm_mb_after": after["VmHWM"] // 1024,
            "server_rss_mb_after": after["VmRSS"] // 1024}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--judgements", type=int, default=1_000_000)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="trust-limits-"))
    data, csv = out / "data", out / "judgements.csv"
    make_corpus(data, args.judgements, csv)
    result = {"judgements": args.judgements, "csv_mb": round(csv.stat().st_size / 2**20, 1),
              "import": import_run(data, csv)}
    with served_app(data, out / "server.log", {"SEARCHAPP_PASSWORD": "",
                                               "SEARCHAPP_MAX_REQUEST_BYTES": ""}) as (proc, url):
        result["list"] = list_run(url, proc.pid)
        result["refuse_200mb_announced"] = refuse_run(url, proc.pid, chunked=False)
        result["refuse_200mb_chunked"] = refuse_run(url, proc.pid, chunked=True)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

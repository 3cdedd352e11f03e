"""The learning loop with a simulated user: which-to-ask proposals against random picks,
fine-tuning from the answers, the held-out metric before and after; and the unsupervised
adaptation against the untouched model.

Data (``../shared/data``): the first ``--pairs`` MRPC train pairs. Their sentences are
the corpus (one document per MRPC sentence id); 30% of the pairs (by a hash of the pair)
are the fixed test set nobody labels, the rest the labels the simulated user knows.

- **proposals**: the user answers what ``searchapp.judgements.proposals.propose`` asks
  (pairs, around the model's duplicate threshold), one batch after another, each answer
  stored as a judgement (so the next batch knows it). The simulated user knows only the
  MRPC labels: a proposal that is not an MRPC pair of the labelled part is skipped
  (pool-based active learning; a real user would answer those too), and the skips are
  counted.
- **random**: the same number of MRPC pairs of the labelled part, drawn at random.

For each strategy and N (answered judgements) the corpus gets exactly those judgements
and the product's ``learn`` job fine-tunes from them (its own held-out fifth and verdict
included); the fixed test pairs are scored with the untouched and the fine-tuned model
(AP, best F1, bootstrap 95% intervals; paired differences). With ``--augment N,...`` the
same is run with Augmented SBERT forced on (proposals), and with ``--simcse STEPS`` the
``adapt`` job (unsupervised SimCSE on the corpus' text, no judgements) is measured the same
way, and on STSb test (Spearman) after adapting to the STSb test sentences.

Rounds are kept short for 2 shared CPU cores: ``--pairs`` limits the corpus, the learn
job's own step rule (about 60 steps; ``--max-steps`` caps it) limits training, and torch
runs on ``--threads`` threads (1: under heavy load from other processes, one thread was
ten times faster than two).

Usage:
    PYTHONPATH=. python benchmarks/learning_loop.py --pairs 1500 --ns 50,100,200,500 \\
        --augment 100,200 --simcse 150
Results: benchmarks/results/learning_loop[_SUFFIX].json (rewritten after each round).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("SEARCHAPP_SHARED_DATA", ROOT.parent / "shared" / "data"))
CORPUS = "mrpc"


def held_out_test(a: str, b: str) -> bool:
    """30% of the pairs are the fixed test set (by a hash of the pair)."""
    digest = hashlib.sha256(f"learning-loop-test:{min(a, b)}:{max(a, b)}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < 0.3


def load_mrpc(n: int):
    import pandas as pd

    df = pd.read_csv(DATA / "mrpc" / "mrpc-train-dev.tsv.gz", sep="\t",
                     keep_default_na=False).head(n)
    docs, pairs = {}, []
    for r in df.itertuples():
        a, b = f"s{r.sid1}", f"s{r.sid2}"
        docs[a], docs[b] = r.sentence1, r.sentence2
        if a != b:
            pairs.append((min(a, b), max(a, b), int(r.is_paraphrase)))
    pairs = list({(a, b): (a, b, y) for a, b, y in pairs}.values())
    test = [p for p in pairs if held_out_test(p[0], p[1])]
    known = [p for p in pairs if not held_out_test(p[0], p[1])]
    return docs, known, test


def make_app(folder: Path):
    os.environ["SEARCHAPP_DATA_DIR"] = str(folder)
    from searchapp.context import App

    return App()


def ingest(app, docs: dict[str, str]) -> float:
    import pandas as pd

    from searchapp.intake.ingest import read_table
    from searchapp.intake.table_upload import upload
    from searchapp.jobs.worker import run_until_done

    started = time.monotonic()
    csv = pd.DataFrame([{"id": k, "text": v} for k, v in docs.items()]).to_csv(index=False)
    job = run_until_done(app, upload(app, read_table(csv.encode(), "mrpc.csv"), CORPUS).job_id)
    assert job.status == "succeeded", job.error
    return time.monotonic() - started


def set_judgements(app, pairs: list[tuple[str, str, int]]) -> None:
    """The corpus' judgements become exactly ``pairs`` (a snapshot of what the user said)."""
    from searchapp.judgements import service as judgements

    for j in judgements.list_judgements(app, CORPUS):
        judgements.remove(app, CORPUS, j.id)
    if pairs:
        csv = "a_id,b_id,label\n" + "".join(f"{a},{b},{y}\n" for a, b, y in pairs)
        judgements.import_csv(app, CORPUS, csv.encode(), "snapshot.csv")


def simulate_proposals(app, known: list, test: list, n: int, batch: int = 20) -> dict:
    """Answer proposals until ``n`` are answered; the answers in order, and the skips."""
    from searchapp.judgements import service as judgements
    from searchapp.judgements.proposals import propose

    set_judgements(app, [])
    labels = {(a, b): y for a, b, y in known}
    test_keys = {(a, b) for a, b, _ in test}
    answered, skipped, shown, exclude = [], {"test": 0, "unknown": 0}, 0, []
    started = time.monotonic()
    while len(answered) < n:
        proposals = propose(app, CORPUS, batch, kind="pair", exclude=exclude)
        if not proposals:
            break
        for p in proposals:
            shown += 1
            key = (min(p.a, p.b), max(p.a, p.b))
            if key in labels:
                judgements.add(app, CORPUS, a=p.a, b=p.b, label=labels[key], source="label")
                answered.append((key[0], key[1], labels[key]))
                if len(answered) == n:
                    break
            else:
                skipped["test" if key in test_keys else "unknown"] += 1
                exclude.append(("pair", None, key[0], key[1]))
    return {"answered": answered, "shown": shown, "skipped": skipped,
            "seconds": round(time.monotonic() - started, 1),
            "positives": sum(y for *_, y in answered)}


def test_scores(app, model: str, docs: dict[str, str], test: list) -> dict:
    """The test pairs' cosines under ``model`` (the encoder the app loads for it)."""
    import numpy as np

    from searchapp.evaluation.metrics import encode_pairs

    sims = encode_pairs(app.encoder(model), [docs[a] for a, _, _ in test],
                        [docs[b] for _, b, _ in test])
    return {"cosines": np.asarray(sims), "labels": np.array([y for *_, y in test])}


def pair_report(scores: dict) -> dict:
    from searchapp.evaluation.bootstrap import interval
    from searchapp.evaluation.corpus import PairScores

    p = PairScores(scores["cosines"], scores["labels"], [])
    n = len(p.labels)
    return {name: interval(p.statistic(name), n, strata=p.labels).scaled(
        100.0 if name != "threshold" else 1.0, 2 if name != "threshold" else 4)
        for name in ("ap", "f1", "threshold")}


def paired(a: dict, b: dict) -> dict:
    from searchapp.evaluation.bootstrap import paired_difference
    from searchapp.evaluation.corpus import PairScores

    pa = PairScores(a["cosines"], a["labels"], [])
    pb = PairScores(b["cosines"], b["labels"], [])
    return paired_difference(pa.statistic("ap"), pb.statistic("ap"), len(pa.labels),
                             strata=pa.labels).scaled()


def learn(app, name: str, augment: str, max_steps: int | None) -> tuple[dict, float]:
    from searchapp.jobs.worker import run_until_done
    from searchapp.training.learn_job import request_learning

    started = time.monotonic()
    job_id = request_learning(app, CORPUS, name=name, augment=augment,
                              max_steps=max_steps).job_id
    job = run_until_done(app, job_id)
    assert job.status == "succeeded", job.error
    return job.result, time.monotonic() - started


def job_summary(result: dict, minutes: float) -> dict:
    keep = ("verdict", "sentence", "threshold", "augmentation", "steps", "seconds_per_step",
            "negatives")
    out = {k: result.get(k) for k in keep}
    if result.get("comparison"):
        out["held_out_ap"] = result["comparison"]["pairs"].get("ap")
    out["minutes"] = round(minutes, 2)
    return out


def stsb_simcse(app, steps: int) -> dict:
    """SimCSE on the STSb test sentences (no scores), Spearman on STSb test before and after."""
    import pandas as pd

    from searchapp.evaluation.metrics import encode_pairs, sts_metrics
    from searchapp.intake.ingest import read_table
    from searchapp.intake.table_upload import upload
    from searchapp.jobs.worker import run_until_done
    from searchapp.training.adapt_job import request_adaptation

    df = pd.read_csv(DATA / "stsb" / "stsbenchmark.tsv.gz", sep="\t", keep_default_na=False)
    test = df[df.split == "test"]
    sentences = sorted(set(test.sentence1) | set(test.sentence2))
    csv = pd.DataFrame({"text": sentences}).to_csv(index=False)
    job = run_until_done(app, upload(app, read_table(csv.encode(), "stsb.csv"), "stsb").job_id)
    assert job.status == "succeeded", job.error
    started = time.monotonic()
    adapt = run_until_done(app, request_adaptation(app, "stsb", name="stsb-simcse",
                                                   max_steps=steps))
    assert adapt.status == "succeeded", adapt.error
    minutes = (time.monotonic() - started) / 60

    def spearman(model):
        sims = encode_pairs(app.encoder(model), test.sentence1.tolist(),
                            test.sentence2.tolist())
        return sts_metrics(sims, test.score.tolist())["spearman"]

    return {"sentences": len(sentences), "steps": steps, "minutes": round(minutes, 2),
            "stsb_test_spearman_before": spearman("all-MiniLM-L6-v2"),
            "stsb_test_spearman_after": spearman("stsb-simcse")}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pairs", type=int, default=1500, help="MRPC pairs making the corpus")
    p.add_argument("--ns", default="50,100,200,500", help="judgements answered per round")
    p.add_argument("--strategies", default="proposals,random")
    p.add_argument("--augment", default="", help="Ns also run with Augmented SBERT on")
    p.add_argument("--simcse", type=int, default=0, help="SimCSE steps (0: not run)")
    p.add_argument("--max-steps", type=int, help="cap on each training's steps")
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument("--seed", type=int, default=13, help="the random strategy's draw")
    p.add_argument("--suffix", default="")
    p.add_argument("--keep", help="data folder to use and keep (default: a temporary one)")
    args = p.parse_args()

    import torch

    from searchapp.errors import TrainingDataError

    torch.set_num_threads(args.threads)
    os.environ.setdefault("SEARCHAPP_DEVICE", "cpu")
    folder = Path(args.keep or tempfile.mkdtemp(prefix="learning-loop-"))
    app = make_app(folder)
    out_path = ROOT / "benchmarks" / "results" / f"learning_loop{args.suffix}.json"
    docs, known, test = load_mrpc(args.pairs)
    ns = [int(x) for x in args.ns.split(",") if x]
    result: dict = {
        "setup": {"mrpc_pairs": args.pairs, "documents": len(docs), "labelled_pool": len(known),
                  "test_pairs": len(test), "test_duplicates": sum(y for *_, y in test),
                  "threads": args.threads, "cpu_count": os.cpu_count(),
                  "load_average_at_start": os.getloadavg(), "python": platform.python_version(),
                  "torch": torch.__version__, "max_steps": args.max_steps},
        "rounds": [], "augmented": [], "simcse": None}

    def save() -> None:
        out_path.write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")

    result["setup"]["embed_seconds"] = round(ingest(app, docs), 1)
    untouched = test_scores(app, "all-MiniLM-L6-v2", docs, test)
    result["untouched"] = pair_report(untouched)
    print(f"untouched: test AP {result['untouched']['ap']}", flush=True)
    save()

    picks: dict[str, list] = {}
    if "proposals" in args.strategies or args.augment:
        sim = simulate_proposals(app, known, test, max(ns + [int(x) for x in
                                                           args.augment.split(",") if x]))
        picks["proposals"] = sim.pop("answered")
        result["proposals_simulation"] = sim
        print(f"proposals: {len(picks['proposals'])} answered of {sim['shown']} shown "
              f"({sim['skipped']} skipped), {sim['positives']} duplicates", flush=True)
    picks["random"] = random.Random(args.seed).sample(known, min(max(ns), len(known)))
    scores: dict[tuple[str, int], dict] = {}
    for n in ns:
        for strategy in args.strategies.split(","):
            answers = picks[strategy][:n]
            set_judgements(app, answers)
            name = f"{strategy}-{n}"
            try:
                job, seconds = learn(app, name, "off", args.max_steps)
            except TrainingDataError as exc:  # too few of one answer held out, say
                result["rounds"].append({"strategy": strategy, "n": len(answers),
                                         "refused": str(exc)})
                print(f"{name}: refused: {exc}", flush=True)
                save()
                continue
            scores[(strategy, n)] = test_scores(app, name, docs, test)
            row = {"strategy": strategy, "n": len(answers),
                   "duplicates": sum(y for *_, y in answers),
                   "test": pair_report(scores[(strategy, n)]),
                   "test_vs_untouched": paired(untouched, scores[(strategy, n)]),
                   "job": job_summary(job, seconds / 60)}
            if strategy == "random" and ("proposals", n) in scores:
                row["proposals_vs_random"] = paired(scores[("random", n)],
                                                    scores[("proposals", n)])
            result["rounds"].append(row)
            print(f"{name}: test AP {row['test']['ap']} vs untouched "
                  f"{row['test_vs_untouched']['delta']:+.2f} "
                  f"[{row['test_vs_untouched']['low']:+.2f}, "
                  f"{row['test_vs_untouched']['high']:+.2f}]; job {job['verdict']} on its "
                  f"held-out; {seconds / 60:.1f} min", flush=True)
            save()
    for n in [int(x) for x in args.augment.split(",") if x]:
        set_judgements(app, picks["proposals"][:n])
        name = f"augmented-{n}"
        job, seconds = learn(app, name, "on", args.max_steps)
        chosen = test_scores(app, name, docs, test)
        row = {"strategy": "proposals", "n": n, "test": pair_report(chosen),
               "test_vs_untouched": paired(untouched, chosen),
               "job": job_summary(job, seconds / 60)}
        if ("proposals", n) in scores:
            row["vs_without_augmentation"] = paired(scores[("proposals", n)], chosen)
        result["augmented"].append(row)
        print(f"{name}: kept={job['augmentation'].get('kept')} test AP {row['test']['ap']}; "
              f"{seconds / 60:.1f} min", flush=True)
        save()
    if args.simcse:
        from searchapp.jobs.worker import run_until_done
        from searchapp.training.adapt_job import request_adaptation

        set_judgements(app, [])
        started = time.monotonic()
        job = run_until_done(app, request_adaptation(app, CORPUS, name="mrpc-simcse",
                                                     max_steps=args.simcse))
        assert job.status == "succeeded", job.error
        adapted = test_scores(app, "mrpc-simcse", docs, test)
        result["simcse"] = {"mrpc": {"steps": args.simcse, "test": pair_report(adapted),
                                     "test_vs_untouched": paired(untouched, adapted),
                                     "minutes": round((time.monotonic() - started) / 60, 2),
                                     "verdict": job.result.get("verdict")}}
        save()
        result["simcse"]["stsb"] = stsb_simcse(app, args.simcse)
        print(f"simcse: {result['simcse']}", flush=True)
        save()
    result["setup"]["load_average_at_end"] = os.getloadavg()
    save()
    print(f"wrote {out_path}")


if __name__ == "__main__":
    main()

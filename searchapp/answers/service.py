"""Answers for the pages, the CLI and the API: a search, then the sentences that answer it.

``search_with_answers`` runs the search (at least ``finder.TOP_PASSAGES`` deep, so a small k
still draws on five passages) and, when the query reads as a question
(``questions.reads_as_question``) or an answer is asked for, scores the sentences of the
top passages (``finder``) and keeps at most ``MAX_ANSWERS`` at or above the corpus' answer
threshold (``threshold``): none means "no clear answer in these documents", never a weak
sentence. Where the search was reranked by the corpus' reranker, it orders the answers too.

Example:
    >>> hits, result = search_with_answers(app, "pg", "how do I change the port?")  # doctest: +SKIP
    >>> result.answers[0].text, result.answers[0].source["page"]                    # doctest: +SKIP
    ('Set port in postgresql.conf and restart the server.', 12)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from searchapp.answers import finder, threshold
from searchapp.answers.finder import Answer
from searchapp.answers.questions import reads_as_question
from searchapp.base.timing import StageTimes
from searchapp.search import rerank as reranking
from searchapp.search import spelling
from searchapp.search.coverage import SearchResults, missing_of
from searchapp.search.history import remember
from searchapp.search.hits import SearchHit, hit_json
from searchapp.search.modes import DEFAULT_MODE
from searchapp.search.service import as_handle, check_mode, search, understood

MAX_ANSWERS = 3
SILENCE = "No clear answer in these documents."


@dataclass(frozen=True)
class AnswerResult:
    """What the answer box shows: ``answers`` (best first; empty = no clear answer), whether
    an answer was sought at all, and the threshold used and where it comes from."""

    asked: bool
    answers: list[Answer] = field(default_factory=list)
    threshold: float = threshold.DEFAULT
    threshold_source: str = "default"
    candidates: list[Answer] = field(default_factory=list, repr=False)  # all scored, best first

    @property
    def silent(self) -> bool:
        """Asked, and nothing scored high enough: the box says ``SILENCE``."""
        return self.asked and not self.answers


def wants_answer(query: str, answer: bool | None) -> bool:
    """Whether to seek an answer: ``answer`` True/False forces it; None asks the query.

    Example:
        >>> wants_answer("postgres port", None), wants_answer("postgres port", True)
        (False, True)
    """
    return reads_as_question(query) if answer is None else bool(answer)


def search_with_answers(app, corpus, query: str, *, answer: bool | None = None, k: int = 10,
                        mode: str = "hybrid", where: Sequence[str] | None = None,
                        min_score: float | None = None, rerank: bool = False,
                        times: StageTimes | None = None) -> tuple[list[SearchHit], AnswerResult]:
    """The hits of ``search`` and the answers drawn from them (see the module's docstring)."""
    times = times if times is not None else StageTimes()
    handle = as_handle(app, corpus)
    text = understood(app, handle, query).parsed.text  # the words, without operators
    asked = bool(text) and wants_answer(text, answer)
    depth = max(k, finder.TOP_PASSAGES) if asked else k
    hits = search(app, handle, query, k=depth, min_score=min_score, mode=mode, where=where,
                  times=times, rerank=rerank)
    shown = SearchResults(hits[:k], missing_of(hits))  # a partial answer stays marked
    if not asked:
        return shown, AnswerResult(False)
    return shown, find_answers(app, handle, text, hits, times, rerank=rerank)


def find_answers(app, corpus, query: str, hits: list[SearchHit],
                 times: StageTimes | None = None, rerank: bool = False) -> AnswerResult:
    """The answers among the sentences of ``hits``' passages (a search's, best first)."""
    times = times if times is not None else StageTimes()
    handle = as_handle(app, corpus)
    vector = app.encoder(handle.model.name).encode_query(query, times)
    with times.stage("answers"):
        found = finder.candidates(app, handle, vector, hits)
        limit, source = threshold.threshold_for(app, handle, query_candidates(app, handle))
        shown = [a for a in found if a.score >= limit][:MAX_ANSWERS]
        if rerank and len(shown) > 1:
            shown = _reranked(app, handle.name, query, shown)
    return AnswerResult(True, shown, limit, source, found)


def query_candidates(app, handle):
    """The candidates of a judged query, for calibrating the threshold (searched the way
    ``search_with_answers`` does)."""
    def candidates_of(query: str) -> list[Answer]:
        hits = search(app, handle, query, k=finder.TOP_PASSAGES)
        vector = app.encoder(handle.model.name).encode_query(query)
        return finder.candidates(app, handle, vector, hits)
    return candidates_of


def _reranked(app, corpus: str, query: str, shown: list[Answer]) -> list[Answer]:
    """The answers in the order of the corpus' reranker, reading each in its context."""
    model = reranking.attached(app, corpus)
    scores = model.scores(query, [" ".join(p for p in (a.before, a.text, a.after) if p)
                                  for a in shown])
    order = sorted(range(len(shown)), key=lambda i: (-float(scores[i]), i))
    return [shown[i] for i in order]


def answer_json(a: Answer) -> dict:
    """One answer as JSON: what ``search --json`` prints and the API returns.

    Example:
        >>> answer_json(Answer("Restart it.", "a.md", 10, 21, 0.61, 0.66, 1, "Stop it.", ""))
        ... # doctest: +NORMALIZE_WHITESPACE
        {'text': 'Restart it.', 'doc_id': 'a.md', 'source': None, 'score': 0.61,
         'context': ['Stop it.', ''], 'start': 10, 'end': 21, 'view': None}
    """
    return {"text": a.text, "doc_id": a.doc_id, "source": a.source, "score": a.score,
            "context": [a.before, a.after], "start": a.start, "end": a.end, "view": a.view}


def result_json(result: AnswerResult) -> dict:
    """The answer part of a search's JSON: ``answers`` and how they were decided.

    Example:
        >>> result_json(AnswerResult(True))["answer"]["silent"]
        True
    """
    return {"answers": [answer_json(a) for a in result.answers],
            "answer": {"asked": result.asked, "silent": result.silent,
                       "threshold": round(result.threshold, 4),
                       "threshold_source": result.threshold_source}}


def answer_request(app, request: dict) -> dict:
    """A search as the CLI asks it (``query_wire``'s request) → its JSON: the mode, the
    hits (``hit_json``), the answers (``result_json``) and ``did_you_mean`` (the corrected
    query searched instead, ``search.spelling``; null when none, or with ``as_typed``);
    the same in a process of its own and in a running app or worker that answers over the
    socket.

    Example:
        >>> answer_request(app, {"corpus": "faq", "query": "how do I reset it?"})["answer"]
        ... # doctest: +SKIP
        {'asked': True, 'silent': False, 'threshold': 0.5, 'threshold_source': 'default'}
    """
    mode = check_mode(request.get("mode") or DEFAULT_MODE)
    answer = request.get("answer")
    query, fixed = spelling.query_to_run(app, request["corpus"], request["query"],
                                         bool(request.get("as_typed")))
    hits, result = search_with_answers(
        app, request["corpus"], query, answer=None if answer is None else bool(answer),
        k=request.get("k", 10), mode=mode, where=request.get("where"),
        min_score=request.get("min_score"), rerank=bool(request.get("rerank")))
    if request.get("remember"):  # after it ran: a failed search is not kept
        remember(app, request["corpus"], str(request["remember"]), request["query"])
    plan = understood(app, request["corpus"], query)
    return {"mode": mode, "hits": [hit_json(h) for h in hits], **result_json(result),
            "missing": list(missing_of(hits)), "understood": plan.as_json(),
            "did_you_mean": fixed.as_json() if fixed else None}

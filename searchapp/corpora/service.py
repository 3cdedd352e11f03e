"""A corpus' life: its name checked, created, its status, embedded (and again with another
model), its long documents split, deleted. How documents get in is ``searchapp.intake``.

Example:
    >>> app = App(Settings.from_env({"SEARCHAPP_DATABASE_URL": "sqlite://"}))
    >>> create_corpus(app, "demo").documents
    0
"""

from __future__ import annotations

import shlex
import unicodedata
from dataclasses import dataclass

from searchapp.config import Settings
from searchapp.context import App
from searchapp.corpora.job_payloads import EmbedPayload
from searchapp.embedding.models import model_path
from searchapp.errors import AlreadyExistsError, InvalidNameError, JobError, ModelError
from searchapp.jobs import kinds, queue
from searchapp.jobs.kinds import submit
from searchapp.store import repo

NAME_MAX = 200
NAME_PUNCTUATION = " ._-()+"  # besides letters and digits
NAME_RULE = ("use 1-200 letters, digits, spaces and . _ - ( ) +, starting with a letter or "
             "digit, without '..'")


def validate_corpus_name(name: str) -> str:
    """The name of a new corpus, stripped, if it is safe everywhere it may be used.

    Corpus names appear in file names (exports, downloads) and job keys, so the
    same rule as for model folders holds: letters and digits (any script),
    spaces and ``. _ - ( ) +``; no ``/``, ``\\``, NUL or other control
    characters, no leading dot, no ``..``. Raises InvalidNameError naming them.

    Example:
        >>> validate_corpus_name(" Support tickets (2024) ")
        'Support tickets (2024)'
        >>> validate_corpus_name("../etc")
        Traceback (most recent call last):
        ...
        searchapp.errors.InvalidNameError: Invalid corpus name '../etc': use 1-200 letters, ...
    """
    stripped = (name or "").strip()
    allowed = all(_name_char(ch) for ch in stripped)
    if (not stripped or len(stripped) > NAME_MAX or not allowed or ".." in stripped
            or not stripped[0].isalnum()):
        raise InvalidNameError(f"Invalid corpus name {name!r}: {NAME_RULE}.")
    return stripped


def _name_char(ch: str) -> bool:
    """A letter or digit of any script (no control or format character), or allowed punctuation."""
    return ch in NAME_PUNCTUATION or (ch.isalnum() and unicodedata.category(ch)[0] in "LN")


def _needs_embedding(app: App, name: str) -> bool:
    """True while some document of the corpus has no vector for its model (O(1) counters)."""
    with app.db.session() as s:
        c = repo.corpus_state(s, name)
        model = repo.find_model(s, c.model_name)
        return model is None or repo.count_embedded(s, c.id, model.id) < c.documents


def delete(app: App, name: str) -> None:
    """Remove a corpus, its documents, embeddings, stored analyses and index files.

    Refused while a job works on the corpus: it would write vectors for deleted rows.
    """
    busy = active_jobs(app, name)
    if busy:
        ids = ", ".join(str(j.id) for j in busy)
        raise JobError(f"Corpus {name!r} is in use by job {ids}; wait for it or cancel it "
                       f"(searchapp jobs cancel {busy[0].id}), then delete the corpus.")
    with app.db.session() as s:
        corpus_id = repo.delete_corpus(s, name).id
    app.drop_indexes(corpus_id)


SPLIT_PAGE = 1_000  # documents read (and their texts planned) per page


def split_long(app: App, name: str) -> tuple[int, int | None]:
    """Embed again, in passages, the long documents of ``name`` embedded before passages existed.

    Documents embedded before schema 3 kept one vector of their first 256 tokens:
    a sentence near the end of a long text was not found. This finds the
    embedded documents that have no passages but are longer than a passage
    (the model's own tokenizer decides, as for new documents), gives them new
    ids as a changed text gets (``repo.renew_documents``), and queues an embed
    job that embeds them in passages. Until it reaches them they are found by
    words only. Returns (documents renewed, the job's id or None). Refused
    while a job works on the corpus.

    Example:
        >>> split_long(app, "papers")                      # doctest: +SKIP
        (312, 18)
    """
    from searchapp.embedding.passages import plan

    busy = active_jobs(app, name)
    if busy:
        raise JobError(f"Corpus {name!r} is in use by job {busy[0].id}; wait for it to end "
                       "(searchapp jobs), then split its long documents.")
    with app.db.session() as s:
        state = repo.corpus_state(s, name)
    encoder = app.encoder(state.model_name)
    model_id = app.model_ref(state.model_name).id
    renewed, after = 0, 0
    while True:
        with app.db.session() as s:
            page = repo.unsplit_embedded(s, state.id, model_id, after, SPLIT_PAGE)
        if not page:
            break
        after = page[-1][0]
        plans = plan(encoder, [text for _, text in page], app.settings.passage_tokens)
        long_ids = [doc for (doc, _), p in zip(page, plans, strict=True) if p.split]
        if long_ids:
            with app.db.session() as s:
                renewed += repo.renew_documents(s, state.id, long_ids)
    return renewed, (request_embed(app, name, new_rows=True) if renewed else None)


def active_jobs(app: App, name: str) -> list[queue.JobView]:
    """Queued or running jobs of any kind whose payload names this corpus."""
    return [j for kind in kinds.kinds()
            if (j := queue.active_for(app.db, kind.name, "corpus", name))]


def request_embed(app: App, name: str, new_rows: bool = False) -> int | None:
    """Queue an embed job for documents of ``name`` still without a vector; its id, or None.

    Example: after a cancelled embedding, ``request_embed(app, "faq")`` picks up the rest.
    """
    active = queue.active_for(app.db, "embed", "corpus", name)
    if active and (active.status == "queued" or not new_rows):
        return active.id  # a running job may have passed its last batch: queue one more,
    with app.db.session() as s:  # but never a second one behind it (``enqueue_once``)
        repo.get_corpus(s, name)
    if new_rows or _needs_embedding(app, name):
        return _enqueue_embed(app, name, once=True)
    return None


def request_ray_embed(app: App, name: str, address: str | None = "auto", actors: int | None = None,
                 cpus_per_actor: int | None = None, batch: int | None = None) -> int | None:
    """Queue an embed job for ``name`` that encodes on a Ray cluster; its id, or None when
    every document has a vector already.

    An active Ray embed job of the corpus is returned as it is (one whose driver
    died is taken over by the next worker or ``--wait``, and embeds only what is
    missing); a queued local one (an upload queues one) is cancelled and
    replaced; a running local one is not stopped: the call is refused until it ends.

    Example: ``request_ray_embed(app, "faq", address="ray://head:10001")``.
    """
    active = queue.active_for(app.db, "embed", "corpus", name)
    if active and active.payload.get("engine") == "ray":
        return active.id
    if active and active.status == "queued":
        queue.cancel(app.db, active.id)
        active = queue.active_for(app.db, "embed", "corpus", name)
    if active:
        raise JobError(f"Corpus {name!r} already has embed job {active.id} ({active.status}); "
                       f"wait for it or cancel it (searchapp jobs cancel {active.id}), then "
                       "embed with --engine ray.")
    with app.db.session() as s:
        repo.get_corpus(s, name)
    if not _needs_embedding(app, name):
        return None
    return _enqueue_embed(app, name, ray={"address": address, "actors": actors,
                                         "cpus_per_actor": cpus_per_actor, "batch": batch})


def _enqueue_embed(app: App, corpus: str, model: str | None = None, switch: bool = False,
                   ray: dict | None = None, once: bool = False) -> int:
    """The one place an ``embed`` job is queued (``corpora.job_kinds.EmbedPayload``).

    ``model`` and ``switch`` to move the corpus to another model, or ``ray`` (the Ray
    options that were given) to encode on a Ray cluster.
    """
    payload = EmbedPayload(corpus)
    if model is not None:
        payload.model, payload.switch = model, switch
    if ray is not None:
        payload.engine, payload.address = "ray", ray.get("address")
        payload.actors, payload.cpus_per_actor, payload.batch = (
            ray.get("actors"), ray.get("cpus_per_actor"), ray.get("batch"))
    # once: one pending embed job per corpus, whoever asks at the same moment
    return submit(app.db, payload, once_key="corpus" if once else None)


def request_model_switch(app: App, corpus: str, model: str) -> int:
    """Re-embed ``corpus`` with ``model``, then switch the corpus to it; returns the job id.

    The old index keeps serving searches until every document has a vector
    from the new model (the ``embed`` job's ``switch``).
    """
    model_path(model, app.settings)  # raises with the known models listed
    with app.db.session() as s:
        current = repo.get_corpus(s, corpus).model_name
    if current == model:
        raise ModelError(f"Corpus {corpus!r} already uses {model!r}.")
    if queue.active_for(app.db, "embed", "corpus", corpus):
        raise JobError(f"Corpus {corpus!r} is being embedded right now; try again when the "
                       "job has ended.")
    return _enqueue_embed(app, corpus, model=model, switch=True)


@dataclass(frozen=True)
class CorpusStatus:
    """A corpus as the API and the CLI report it: counts, generation, model, active jobs."""

    name: str
    model: str
    documents: int
    embedded: int
    generation: int
    meta_columns: list
    active_jobs: list[int]

    @property
    def ready(self) -> bool:
        """Every document has a vector for the corpus' model."""
        return self.embedded >= self.documents


def model_for(settings: Settings, name: str, current: str | None, asked: str | None) -> str:
    """The model ``name``'s documents are embedded with, chosen the one way every front end
    chooses it (``ingest --model``, the Upload page's model for a new corpus, the API's
    ``POST /corpora`` and uploads): an existing corpus keeps its own (``current``; asking
    for another is a ModelError saying how to switch), a new one takes ``asked`` or
    SEARCHAPP_MODEL. An unknown model is a ModelError listing the known ones.

    Example:
        >>> model_for(Settings.from_env({}), "faq", None, "use-multilingual-v3")
        'use-multilingual-v3'
        >>> model_for(Settings.from_env({}), "faq", "all-MiniLM-L6-v2", None)
        'all-MiniLM-L6-v2'
    """
    if current is not None and asked and asked != current:
        raise ModelError(f"Corpus {name!r} uses model {current!r}; switch it with `searchapp "
                         f"models use --corpus {shlex.quote(name)} --model {asked}` (or the Models "
                         "page), "
                         "or add these documents to a new corpus.")
    chosen = current or asked or settings.model
    model_path(chosen, settings)  # raises with the known models listed, before anything is kept
    return chosen


def create_corpus(app: App, name: str, model: str | None = None) -> CorpusStatus:
    """An empty corpus called ``name`` (the API's ``POST /corpora``; ``ingest`` and the
    Upload page create one with their first file). AlreadyExistsError when the name is taken.

    Example:
        >>> create_corpus(app, "tickets").documents               # doctest: +SKIP
        0
    """
    name = validate_corpus_name(name)
    model_name = model_for(app.settings, name, None, model)
    with app.db.session() as s:
        if repo.find_corpus(s, name) is not None:
            raise AlreadyExistsError(f"A corpus named {name!r} exists already; choose another name "
                                "or add documents to it.")
        repo.get_or_create_corpus(s, name, model_name)
    return corpus_status(app, name)


def corpus_status(app: App, name: str) -> CorpusStatus:
    """Counts, generation and active jobs of one corpus (O(1) reads: the kept counters).

    Example:
        >>> corpus_status(app, "demo").generation > 0             # doctest: +SKIP
        True
    """
    with app.db.session() as s:
        state = repo.corpus_state(s, name)
        model = repo.find_model(s, state.model_name)
        embedded = repo.count_embedded(s, state.id, model.id) if model is not None else 0
    return CorpusStatus(state.name, state.model_name, state.documents, embedded,
                        state.generation, list(state.meta_columns),
                        [j.id for j in active_jobs(app, state.name)])

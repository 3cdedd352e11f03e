"""A cluster kept as a search filter: its documents tagged ``column = value``.

A cluster is a result of one computation; the next one (new documents,
another level or method) numbers its clusters afresh. A person who found a
group worth keeping ("Refunds") saves it as a filter: each of its documents
gets the metadata value ``cluster = "Refunds"`` (the column and the value are
theirs to choose), and ``cluster="Refunds"`` then works wherever metadata
filters do: the Search page, ``searchapp search --where``, the API's
``where``, the Documents page. The tag stays on the documents when the
clusters are computed again, the model changes, or the app restarts.

Saving the same name again moves the filter to the cluster now open (the
documents of the old set that are not in the new one lose the tag), so a
filter never grows by accident. A column the corpus' own files brought
(``product``, ``author``) is never written: only a new column or one that
saved filters already use. A document whose text changes on a later upload
keeps its id but is a new row with the file's metadata, so it drops out of
the filter, as it has not been seen in the cluster.

Example:
    >>> saved = save_cluster_filter(app, shown, 3, "cluster", "Refunds")  # doctest: +SKIP
    >>> saved.documents, saved.condition                                  # doctest: +SKIP
    (412, 'cluster="Refunds"')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from searchapp.clusters.result import ClusterResult
from searchapp.context import App
from searchapp.errors import InvalidParameterError
from searchapp.store import repo
from searchapp.store import saved_filters as registry

DEFAULT_COLUMN = "cluster"
MAX_VALUE = 80
_COLUMN = re.compile(r"^\w[\w .-]{0,39}$", re.UNICODE)


@dataclass(frozen=True)
class SavedFilter:
    """``column = value`` on ``documents`` documents of ``corpus``."""

    corpus: str
    column: str
    value: str
    documents: int
    saved_at: str = ""
    terms: tuple[str, ...] = ()

    @property
    def condition(self) -> str:
        """The filter as written in a search (the value quoted, so it is always text).

        Example:
            >>> SavedFilter("faq", "cluster", "2024 refunds", 3).condition
            'cluster="2024 refunds"'
        """
        return f'{self.column}="{self.value}"'


def checked_column(column: str) -> str:
    """A tag column's name, trimmed; InvalidParameterError saying what a name may hold.

    Example:
        >>> checked_column("  topic ")
        'topic'
    """
    name = str(column).strip()
    if not _COLUMN.match(name):
        raise InvalidParameterError(
            f"{name!r} cannot name a filter's column: use 1 to 40 letters, digits, spaces, "
            "'_', '-' or '.', starting with a letter or digit (for example 'cluster').")
    return name


def checked_value(value: str) -> str:
    """A filter's name (the value the documents get): spaces collapsed, 1 to 80 characters.

    Example:
        >>> checked_value(" Card   payments ")
        'Card payments'
    """
    name = " ".join(str(value).split())
    if not name:
        raise InvalidParameterError("A saved filter needs a name; type a few words.")
    if len(name) > MAX_VALUE:
        raise InvalidParameterError(
            f"A saved filter's name has at most {MAX_VALUE} characters; this one has "
            f"{len(name)}.")
    return name


def save_cluster_filter(app: App, result: ClusterResult, cluster_id: int,
                        column: str = DEFAULT_COLUMN, value: str | None = None) -> SavedFilter:
    """Tag the documents of cluster ``cluster_id`` of ``result`` with ``column = value``
    (``value`` defaults to the cluster's name as shown) and remember the filter.

    ``result`` is the result as the page shows it (``edits.apply_edits``), so a
    merged cluster is saved whole. Raises InvalidParameterError for an unknown
    cluster, a bad name, or a column of the corpus' own metadata.
    """
    by_id = {c["id"]: c for c in result.clusters}
    if cluster_id not in by_id:
        raise InvalidParameterError(
            f"There is no cluster {cluster_id} in this result; open one of its clusters.")
    info = by_id[cluster_id]
    column = checked_column(column)
    value = checked_value(info["label"] if value is None else value)
    members = result.doc_ids[result.cluster == cluster_id]
    model_id = _model_id(app, result.corpus)
    with app.db.session() as s:
        corpus = repo.get_corpus(s, result.corpus)
        own = set(corpus.meta_columns or []) - registry.tag_columns(s, corpus.id)
        if column in own:
            raise InvalidParameterError(
                f"{column!r} is a metadata column that the files of corpus {result.corpus!r} "
                f"brought (its own metadata); saving a filter there would overwrite it. "
                f"Choose another column, such as {_free_column(own)!r}.")
        repo.set_meta_value(s, corpus, column, value, members.tolist())
        documents = repo.count_meta_value(s, corpus.id, column, value)
        entry = {"column": column, "value": value, "documents": documents,
                 "terms": list(info.get("terms", []))[:8]}
        registry.remember(s, corpus.id, model_id, entry)
    return SavedFilter(result.corpus, column, value, documents, terms=tuple(entry["terms"]))


def remove_saved_filter(app: App, corpus: str, column: str, value: str) -> int:
    """Take the tag off its documents and forget the filter; how many documents lost it.

    Raises InvalidParameterError when there is no such saved filter.
    """
    model_id = _model_id(app, corpus)
    with app.db.session() as s:
        row = repo.get_corpus(s, corpus)
        if not registry.forget(s, row.id, model_id, column, value):
            raise InvalidParameterError(
                f"{corpus!r} has no saved filter {column}={value!r}; the saved ones are "
                f"listed on the Clusters page.")
        taken = repo.set_meta_value(s, row, column, value, [])[1]
        repo.drop_unused_column(s, row, column)
        return taken


def saved_filters(app: App, corpus: str) -> list[SavedFilter]:
    """The corpus' saved filters, newest first, with their documents counted now (a deleted
    document is no longer in its filter).

    Counting reads the corpus' metadata, so the list is kept in the App's memo per
    generation (every change of the documents or of a tag moves it): the Clusters page
    draws it on every rerun.

    Example:
        >>> [f.condition for f in saved_filters(app, "faq")]              # doctest: +SKIP
        ['cluster="Refunds"']
    """
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
        entries = registry.saved_filters(s, state.id)

    def counted() -> list[SavedFilter]:
        with app.db.session() as s:
            return [SavedFilter(corpus, e["column"], e["value"],
                                repo.count_meta_value(s, state.id, e["column"], e["value"]),
                                e.get("saved_at", ""), tuple(e.get("terms", [])))
                    for e in reversed(entries)]

    if not entries:
        return []
    key = ("saved-filters", tuple((e["column"], e["value"], e.get("saved_at")) for e in entries))
    return app.memo.get_or_make(state.id, state.generation, key, counted)


def _model_id(app: App, corpus: str) -> int:
    """The corpus' model's row id, looked up before a writing session (it may register the
    model, which takes a session of its own)."""
    with app.db.session() as s:
        model_name = repo.corpus_state(s, corpus).model_name
    return app.model_ref(model_name).id


def _free_column(taken: set[str]) -> str:
    """'cluster', or 'cluster 2', 'cluster 3', ... : the first name not taken."""
    names = (DEFAULT_COLUMN, *(f"{DEFAULT_COLUMN} {i}" for i in range(2, 100)))
    return next(n for n in names if n not in taken)


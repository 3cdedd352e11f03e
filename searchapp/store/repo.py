"""Queries over the store, by table family; this module is the one import callers use.

- ``catalog``: corpora and models, their counts, listing and deleting.
- ``documents``: batched upload with change detection; reads by id and keyset page.
- ``document_edits``: one document's metadata replaced, documents deleted by external id.
- ``embeddings``: saving vectors with generation and counts; reading some back.
- ``changes``: the per-corpus generation, tombstones, what changed since a generation.
- ``analyses``: stored duplicate / cluster results, keyed on the generation.
- ``facets``: the most common values of a metadata column, with counts.

Every function takes an open Session and leaves committing to the caller, so a
whole upload is one transaction. Vectors cross this boundary as numpy arrays.

Example:
    >>> db = Database("sqlite://")
    >>> with db.session() as s:
    ...     c = get_or_create_corpus(s, "faq", "all-MiniLM-L6-v2")
    ...     add_documents(s, c, [NewDocument("q1", "How do I reset my password?")]).added
    1
"""

from searchapp.store.analyses import (
    analysis_version,
    current_analyses,
    get_analysis,
    is_current,
    pack_arrays,
    save_analysis,
    unpack_arrays,
)
from searchapp.store.catalog import (
    CorpusState,
    CorpusSummary,
    corpus_names,
    corpus_reranker,
    corpus_state,
    count_documents,
    count_embedded,
    delete_corpus,
    find_corpus,
    find_model,
    get_corpus,
    get_or_create_corpus,
    get_or_create_model,
    set_corpus_reranker,
    summaries,
    update_model_info,
)
from searchapp.store.changes import (
    current_generation,
    embeddings_since,
    next_generation,
    passages_since,
    removed_since,
)
from searchapp.store.db import Database  # noqa: F401 - used in the doctest
from searchapp.store.document_edits import (
    count_meta_value,
    delete_by_external_id,
    drop_unused_column,
    rename_documents,
    replace_meta,
    set_meta_value,
)
from searchapp.store.documents import (
    AddResult,
    DocumentRow,
    DocumentWriter,
    NewDocument,
    add_documents,
    content_hash,
    document_by_external_id,
    document_texts,
    documents_by_id,
    documents_missing_embedding,
    external_ids,
    iter_texts,
    layouts_by_id,
    missing_embedding_ids,
    owners,
    renew_documents,
    stored_files,
    take_over,
    texts_by_id,
    texts_missing_embedding,
    unsplit_embedded,
)
from searchapp.store.embeddings import embedded_ids, passage_spans, save_embeddings, vectors_for
from searchapp.store.facets import top_values
from searchapp.store.sentences import read_sentences, save_sentences, sentence_count

__all__ = [
    "AddResult",
    "CorpusState",
    "CorpusSummary",
    "DocumentRow",
    "DocumentWriter",
    "NewDocument",
    "add_documents",
    "analysis_version",
    "content_hash",
    "corpus_names",
    "corpus_reranker",
    "corpus_state",
    "count_documents",
    "count_embedded",
    "count_meta_value",
    "current_analyses",
    "current_generation",
    "delete_by_external_id",
    "delete_corpus",
    "document_by_external_id",
    "document_texts",
    "documents_by_id",
    "documents_missing_embedding",
    "drop_unused_column",
    "embedded_ids",
    "embeddings_since",
    "external_ids",
    "find_corpus",
    "find_model",
    "get_analysis",
    "get_corpus",
    "get_or_create_corpus",
    "get_or_create_model",
    "is_current",
    "iter_texts",
    "layouts_by_id",
    "missing_embedding_ids",
    "next_generation",
    "owners",
    "pack_arrays",
    "passage_spans",
    "passages_since",
    "read_sentences",
    "removed_since",
    "rename_documents",
    "renew_documents",
    "replace_meta",
    "save_analysis",
    "save_embeddings",
    "save_sentences",
    "sentence_count",
    "set_corpus_reranker",
    "set_meta_value",
    "stored_files",
    "summaries",
    "take_over",
    "texts_by_id",
    "texts_missing_embedding",
    "top_values",
    "unpack_arrays",
    "unsplit_embedded",
    "update_model_info",
    "vectors_for",
]

"""A person's renames and merges of clusters, kept across recomputation while the cluster lives.

An edit remembers the members (document ids) of the clusters it was made on,
not their numbers: a recomputed clustering numbers its clusters afresh. When a
result is shown, each edit finds the cluster of that result sharing the most
members with what it remembers; it applies when their Jaccard overlap
(shared / either) is at least ``SURVIVES`` (0.5): the cluster survived the new
documents, another level or another method. Edits are stored per corpus and
model in the ``analyses`` table (kind ``cluster-edits``), apart from results,
so recomputing never loses them; the newest edit of a cluster wins. A merge is also
a constraint on the next computation by a centroid method (``merged_members``):
its documents stay in one cluster, which then carries its name.

Example:
    >>> rename_cluster(app, result, 3, "Card payments")             # doctest: +SKIP
    >>> apply_edits(result, load_edits(app, result)).clusters[3]["label"]  # doctest: +SKIP
    'Card payments'
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

import numpy as np

from searchapp.clusters.names import apart
from searchapp.clusters.result import ClusterResult
from searchapp.context import App
from searchapp.errors import InvalidParameterError
from searchapp.store import repo

KIND = "cluster-edits"
KEY = "edits"
SURVIVES = 0.5  # Jaccard overlap at which an edited cluster counts as the same one
MAX_NAME = 80


@dataclass(frozen=True)
class Edit:
    """``rename``: ``members`` holds one cluster; ``merge``: two or more, ``name`` optional."""

    kind: str
    name: str
    members: tuple[np.ndarray, ...]  # sorted document ids per cluster edited


def matching_cluster(result: ClusterResult, members: np.ndarray) -> tuple[int, float]:
    """(cluster, Jaccard) of ``result``'s cluster overlapping ``members`` most; (-1, 0) if none.

    Example:
        >>> r = ClusterResult("c", {}, "pca", [], np.arange(6), np.array([0, 0, 0, 1, 1, -1]),
        ...                   np.zeros(6), np.zeros(6), {})
        >>> matching_cluster(r, np.array([0, 1, 5]))
        (0, 0.5)
    """
    if result.size == 0 or len(members) == 0:
        return -1, 0.0
    pos = np.clip(np.searchsorted(result.doc_ids, members), 0, result.size - 1)
    found = pos[result.doc_ids[pos] == members]
    clusters = result.cluster[found]
    clusters = clusters[clusters >= 0]
    if len(clusters) == 0:
        return -1, 0.0
    shared = np.bincount(clusters)
    sizes = np.bincount(result.cluster[result.cluster >= 0], minlength=len(shared))
    jaccard = shared / (len(members) + sizes[:len(shared)] - shared)
    best = int(np.argmax(jaccard))
    return best, round(float(jaccard[best]), 4)


def _members(result: ClusterResult, cluster_id: int) -> np.ndarray:
    if not any(c["id"] == cluster_id for c in result.clusters):
        raise InvalidParameterError(
            f"There is no cluster {cluster_id} here; choose one of 0 to "
            f"{len(result.clusters) - 1}.")
    return np.sort(result.doc_ids[result.cluster == cluster_id])


def _checked_name(name: str) -> str:
    name = " ".join(str(name).split())
    if not name:
        raise InvalidParameterError("A cluster's name cannot be empty; type a few words.")
    if len(name) > MAX_NAME:
        raise InvalidParameterError(
            f"A cluster's name has at most {MAX_NAME} characters; this one has {len(name)}.")
    return name


def load_edits(app: App, result: ClusterResult) -> list[Edit]:
    """The edits stored for the result's corpus and model, oldest first."""
    with app.db.session() as s:
        model_id = _model_id(app, s, result)
    return stored_edits(app, result.corpus_id, model_id)


def stored_edits(app: App, corpus_id: int, model_id: int) -> list[Edit]:
    """The edits stored for a corpus and model, oldest first."""
    with app.db.session() as s:
        row = repo.get_analysis(s, corpus_id, model_id, KIND, KEY)
        if row is None:
            return []
        info, arrays = row.result, repo.unpack_arrays(row.arrays)
    return [Edit(e["kind"], e["name"], tuple(arrays[f"e{i}_{j}"] for j in range(e["parts"])))
            for i, e in enumerate(info["edits"])]


def merged_members(app: App, corpus_id: int, model_id: int) -> list[np.ndarray]:
    """Per merge a person made, the documents of the clusters it joined: constraints for
    the next computation (``compute``), so the merged documents stay one cluster even
    where the new clusters would have split them again.

    Example:
        >>> [len(m) for m in merged_members(app, 1, 1)]                  # doctest: +SKIP
        [80]
    """
    return [np.unique(np.concatenate(e.members)) for e in stored_edits(app, corpus_id, model_id)
            if e.kind == "merge"]


def _model_id(app: App, s, result: ClusterResult) -> int:
    return app.model_ref(repo.corpus_state(s, result.corpus).model_name).id


def _save(app: App, result: ClusterResult, edits: list[Edit]) -> None:
    info = {"edits": [{"kind": e.kind, "name": e.name, "parts": len(e.members)} for e in edits]}
    arrays = {f"e{i}_{j}": m for i, e in enumerate(edits) for j, m in enumerate(e.members)}
    with app.db.session() as s:
        repo.save_analysis(s, result.corpus_id, _model_id(app, s, result), KIND, KEY, {}, -1,
                           info, 0.0, arrays)


def _same_cluster(a: np.ndarray, b: np.ndarray) -> bool:
    shared = len(np.intersect1d(a, b, assume_unique=True))
    return shared / max(len(a) + len(b) - shared, 1) >= SURVIVES


def rename_cluster(app: App, result: ClusterResult, cluster_id: int, name: str) -> Edit:
    """Name a cluster of ``result``; kept while a cluster of later results matches it.

    Raises InvalidParameterError for an empty or long name, an unknown cluster,
    or a name another cluster of this result already shows.

    Example:
        >>> rename_cluster(app, result, 0, "Password resets").name    # doctest: +SKIP
        'Password resets'
    """
    name = _checked_name(name)
    shown = apply_edits(result, load_edits(app, result))
    if any(c["label"].casefold() == name.casefold() and c["id"] != cluster_id
           for c in shown.clusters):
        raise InvalidParameterError(
            f"Another cluster is already called {name!r}; choose a name of its own.")
    members = _members(result, cluster_id)
    edits = [e for e in load_edits(app, result)
             if not (e.kind == "rename" and _same_cluster(e.members[0], members))]
    edit = Edit("rename", name, (members,))
    _save(app, result, [*edits, edit])
    return edit


def merge_clusters(app: App, result: ClusterResult, cluster_ids: list[int], name: str = ""
                   ) -> Edit:
    """Show two or more clusters of ``result`` as one (named ``name``, or the first's name).

    Example:
        >>> merge_clusters(app, result, [2, 5], "Cards").kind          # doctest: +SKIP
        'merge'
    """
    ids = sorted(set(int(c) for c in cluster_ids))
    if len(ids) < 2:
        raise InvalidParameterError("Choose at least two clusters to merge.")
    edit = Edit("merge", _checked_name(name) if name.strip() else "",
                tuple(_members(result, c) for c in ids))
    _save(app, result, [*load_edits(app, result), edit])
    return edit


def _merged(result: ClusterResult, edit: Edit) -> ClusterResult:
    """``result`` with the clusters matching the edit's parts joined into the first."""
    found = {matching_cluster(result, m) for m in edit.members}
    ids = sorted({c for c, j in found if c >= 0 and j >= SURVIVES})
    if len(ids) < 2:  # computed with the merge as a constraint: one cluster holds it all
        return _named_whole(result, edit)
    into, rest = ids[0], ids[1:]
    cluster = np.where(np.isin(result.cluster, rest), into, result.cluster)
    by_id = {c["id"]: c for c in result.clusters}
    joined = dict(by_id[into])
    joined["size"] = sum(by_id[c]["size"] for c in ids)
    joined["merged"] = [by_id[c]["label"] for c in ids]
    if edit.name:
        joined["label"], joined["renamed"] = edit.name, True
    clusters = [joined if c["id"] == into else c for c in result.clusters if c["id"] not in rest]
    return replace(result, cluster=cluster, clusters=clusters)


def _named_whole(result: ClusterResult, edit: Edit) -> ClusterResult:
    """``result`` with the merge's name on the one cluster matching all its documents."""
    whole, jaccard = matching_cluster(result, np.unique(np.concatenate(edit.members)))
    if not edit.name or whole < 0 or jaccard < SURVIVES:
        return result
    clusters = [dict(c, label=edit.name, renamed=True) if c["id"] == whole else c
                for c in result.clusters]
    return replace(result, clusters=clusters)


def _renamed(result: ClusterResult, edit: Edit) -> ClusterResult:
    cluster_id, jaccard = matching_cluster(result, edit.members[0])
    if jaccard < SURVIVES:
        return result
    clusters = [dict(c, label=edit.name, renamed=True, auto_label=c.get("auto_label",
                                                                        c["label"]))
                if c["id"] == cluster_id else c for c in result.clusters]
    return replace(result, clusters=clusters)


def apply_edits(result: ClusterResult, edits: list[Edit]) -> ClusterResult:
    """``result`` as the person left it: merges, then renames, each where its cluster survives.

    Another cluster whose automatic name equals a person's name gets its best
    term of its own added in brackets (``names.apart``), so no two names on the
    map read alike.

    Example:
        >>> apply_edits(result, load_edits(app, result)).clusters[0]["label"]  # doctest: +SKIP
        'Password resets'
    """
    for edit in edits:
        if edit.kind == "merge":
            result = _merged(result, edit)
    for edit in edits:
        if edit.kind == "rename":
            result = _renamed(result, edit)
    given = {c["label"].casefold() for c in result.clusters if c.get("renamed")}
    taken = {c["label"].casefold() for c in result.clusters}
    clusters = [c if c.get("renamed") or c["label"].casefold() not in given
                else dict(c, label=apart(c["label"], c.get("terms", []), taken=taken))
                for c in result.clusters]
    fingerprint = "|".join(f"{c['id']}:{c['label']}:{c['size']}" for c in clusters
                           if c.get("renamed") or c.get("merged"))
    edited = "#" + hashlib.sha1(fingerprint.encode()).hexdigest()[:12] if fingerprint else ""
    return replace(result, clusters=clusters, edited=edited)

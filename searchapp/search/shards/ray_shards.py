"""A corpus' shards served by Ray: R replicas of each shard as named, detached Ray actors.

``serve(app, "docs", shards=8, replicas=2)`` starts ``ShardServer`` actors in
the namespace ``searchapp``, named ``shard/<corpus id>/<model id>/<n>of<shards>/r<replica>``
and spread over the cluster's nodes (Ray's SPREAD placement). Each builds its
shard from the shared database (``shard.Shard``: its own rows only), then keeps it
current: a thread catches up every ``REFRESH_SECONDS``, so a document committed
is found within that time plus the catch-up (the stated freshness). Ray restarts
a replica that dies (``max_restarts=-1``); the restarted one builds again from
the database and answers once it has. Serving again with another layout replaces
the corpus' actors.

Any process with ``SEARCHAPP_SEARCH_ENGINE=ray`` (the CLI, the API, the pages)
finds the actors by name (``client_for``) and fans its queries out to them
(``fanout.ShardSet``); it loads no vector itself.

Example (a cluster started with ``ray start --head``):
    >>> serve(app, "docs", shards=4, replicas=2, address="auto")      # doctest: +SKIP
    >>> [s["documents"] for s in status(app, "docs", "auto")][:2]       # doctest: +SKIP
    [25012, 24988]
"""

from __future__ import annotations

import logging
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from searchapp.config import Settings
from searchapp.context import App
from searchapp.corpora.ray_embed import actor_settings, connect, import_ray
from searchapp.errors import ConfigError, SearchAppError
from searchapp.search.shards.fanout import ReplicaUnavailable, ShardSet
from searchapp.search.shards.shard import Shard, ShardSpec
from searchapp.store import repo
from searchapp.store.shard_rows import check_shards

log = logging.getLogger(__name__)
NAMESPACE = "searchapp"
REFRESH_SECONDS = 1.0  # how often a replica catches up with the database
READY_SECONDS = 3_600.0  # how long ``serve`` waits for every replica's first build (a
# 10 M-vector shard read from PostgreSQL took over 10 minutes on 2 busy cores)
LIST_SECONDS = 10.0  # how often a client looks again for the corpus' actors
MAX_REPLICAS = 16


class ShardsNotServedError(SearchAppError):
    """SEARCHAPP_SEARCH_ENGINE=ray, and no shard of the corpus is served."""

    def __init__(self, name: str):
        super().__init__(f"Corpus {name!r} is not served on the Ray cluster: run `searchapp "
                         f"shards serve --corpus {name} --shards N`, or unset "
                         "SEARCHAPP_SEARCH_ENGINE to search this process' own index.")


class ShardsStillBuildingError(SearchAppError):
    """``serve`` stopped waiting; the replicas go on building."""

    def __init__(self, name: str, seconds: float):
        super().__init__(f"The shard servers of corpus {name!r} were still building after "
                         f"{seconds:.0f} s; they go on building: watch them with `searchapp "
                         f"shards status --corpus {name}` (searches name the shards not "
                         "ready yet as missing).")


class ShardServer:
    """A Ray actor: one replica of one shard (``Shard``), kept current by a thread."""

    def __init__(self, env: dict[str, str], spec: ShardSpec, replica: int,
                 refresh: float = REFRESH_SECONDS):
        from searchapp.store.db import Database

        settings = Settings.from_env(env)
        self.shard = Shard(Database(settings.database_url, settings.busy_timeout), spec,
                           words_folder(settings, spec, replica))
        self.replica = replica
        self.shard.catch_up()  # answers only once built: Ray queues calls until then
        self._stop = threading.Event()
        threading.Thread(target=self._keep_current, args=(refresh,), daemon=True,
                         name="shard-catch-up").start()

    def _keep_current(self, refresh: float) -> None:
        while not self._stop.wait(refresh):
            try:
                self.shard.catch_up()
            except Exception:  # the database away for a while: keep serving, try again
                log.exception("shard %s: catch-up failed", self.shard.spec.label)

    def nearest(self, vector: np.ndarray, n: int, weight: float):
        return self.shard.nearest(vector, n, weight)

    def neighbours(self, vector: np.ndarray, n: int):
        return self.shard.neighbours(vector, n)

    def lexical(self, query: str, n: int, stem_languages: tuple[str, ...] = ()):
        return self.shard.lexical(query, n, stem_languages)

    def score(self, vector: np.ndarray, docs: list[int], weight: float):
        return self.shard.score(vector, docs, weight)

    def count(self) -> int:
        return self.shard.index.count

    def close(self) -> None:
        """Before the replica is stopped: its catch-up ends and its full-text file goes."""
        self._stop.set()
        self.shard.close()

    def status(self) -> dict:
        import ray

        node = ray.get_runtime_context().get_node_id()
        return {**self.shard.status(), "replica": self.replica, "ray_node": node[:12]}


def words_folder(settings: Settings, spec: ShardSpec, replica: int) -> Path:
    """Where a replica keeps its full text: named after the actor and its Ray id, which a
    restart keeps (the restarted replica empties its predecessor's folder) and another
    cluster's same-named actor does not share."""
    import ray

    base = settings.shard_words_dir or Path(tempfile.gettempdir()) / "searchapp-shard-words"
    actor = ray.get_runtime_context().get_actor_id() or "driver"
    return base / f"{actor_name(spec, replica).replace('/', '-')}-{actor[:16]}"


def actor_name(spec: ShardSpec, replica: int) -> str:
    """The actor's name: ``shard/<corpus>/<model>/<number>of<shards>/r<replica>``.

    Example:
        >>> actor_name(ShardSpec(3, 1, 384, 2, 8), 1)
        'shard/3/1/2of8/r1'
    """
    return f"shard/{spec.corpus_id}/{spec.model_id}/{spec.number}of{spec.shards}/r{replica}"


def _parse(name: str) -> tuple[int, int, int, int, int] | None:
    """(corpus, model, number, shards, replica) of an actor name, None for another actor."""
    parts = name.split("/")
    if len(parts) != 5 or parts[0] != "shard" or "of" not in parts[3]:
        return None
    number, shards = parts[3].split("of")
    try:
        return int(parts[1]), int(parts[2]), int(number), int(shards), int(parts[4][1:])
    except ValueError:
        return None


@dataclass(frozen=True)
class RayReplica:
    """One replica, asked through its actor handle."""

    name: str
    actor: object

    def call(self, method: str, args: tuple, timeout: float):
        ray = import_ray()
        try:
            return ray.get(getattr(self.actor, method).remote(*args), timeout=timeout)
        except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError,
                ray.exceptions.ActorUnavailableError) as exc:
            raise ReplicaUnavailable(type(exc).__name__) from None


def _corpus_actors(corpus_id: int, model_id: int) -> dict[tuple[int, int], list[str]]:
    """{(shards, number): [actor names]} of the corpus' replicas on the cluster."""
    from ray.util import list_named_actors

    found: dict[tuple[int, int], list[str]] = {}
    for entry in list_named_actors(all_namespaces=True):
        name = entry["name"] if isinstance(entry, dict) else entry
        if isinstance(entry, dict) and entry.get("namespace") != NAMESPACE:
            continue
        parsed = _parse(name)
        if parsed and parsed[:2] == (corpus_id, model_id):
            found.setdefault((parsed[3], parsed[2]), []).append(name)
    return found


def _layout(corpus_id: int, model_id: int) -> dict[int, list[str]]:
    """{shard number: replica names} of the corpus' one layout (the largest served)."""
    actors = _corpus_actors(corpus_id, model_id)
    if not actors:
        return {}
    shards = max(s for s, _ in actors)
    return {number: sorted(names) for (s, number), names in actors.items() if s == shards}


def _shard_set(layout: dict[int, list[str]]) -> ShardSet | None:
    ray = import_ray()
    if not layout:
        return None
    shards = max(_parse(n)[3] for names in layout.values() for n in names)
    replicas = [[RayReplica(n, ray.get_actor(n, namespace=NAMESPACE))
                 for n in layout.get(number, [])] for number in range(shards)]
    labels = [f"shard {number + 1} of {shards}" for number in range(shards)]
    return ShardSet(replicas, labels)


# (corpus, model) -> (when the cluster was looked at, the layout seen, its client)
_CLIENTS: dict[tuple[int, int], tuple[float, dict, ShardSet | None]] = {}
_CLIENTS_LOCK = threading.Lock()


def client_for(app: App, corpus_id: int, model_id: int) -> ShardSet | None:
    """The fan-out client of a corpus' shards (None when none is served); the cluster is
    looked at again every ``LIST_SECONDS``, and a new client made only when the layout
    served changed (the old one's threads are let go)."""
    connect(app.settings.ray_address or "auto")
    key = (corpus_id, model_id)
    with _CLIENTS_LOCK:
        kept = _CLIENTS.get(key)
        if kept is not None and time.monotonic() - kept[0] < LIST_SECONDS:
            return kept[2]
        layout = _layout(corpus_id, model_id)
        if kept is not None and kept[1] == layout:
            _CLIENTS[key] = (time.monotonic(), layout, kept[2])
            return kept[2]
        if kept is not None and kept[2] is not None:
            kept[2].close()
        client = _shard_set(layout)
        _CLIENTS[key] = (time.monotonic(), layout, client)
        return client


def serve(app: App, name: str, shards: int, replicas: int = 1, compression: str = "float32",
          placement: str = "hash", address: str | None = None, cpus: float = 0.0,
          refresh: float = REFRESH_SECONDS, env_extra: dict | None = None,
          words: bool = True) -> list[dict]:
    """Start (or replace) corpus ``name``'s shard servers and wait until every replica has
    built its shard; returns their status. ``cpus``: CPUs Ray reserves per replica (0: they
    share the nodes with everything else; a replica's memory is what limits it).
    ``words``: each shard keeps its documents' full text for the lexical side (False:
    the database's full text answers it)."""
    check_shards(shards, placement)
    if not 1 <= replicas <= MAX_REPLICAS:
        raise ConfigError(f"Replicas must be from 1 to {MAX_REPLICAS}; got {replicas}.")
    with app.db.session() as s:
        state = repo.corpus_state(s, name)
    ref = app.model_ref(state.model_name)
    env = {**actor_settings(app.settings), **(env_extra or {})}
    ray = import_ray()
    connect(address or app.settings.ray_address or "auto")
    stop(app, name)
    server = ray.remote(ShardServer)
    handles = []
    for number in range(shards):
        spec = ShardSpec(state.id, ref.id, ref.dimension, number, shards, compression,
                         placement, words)
        for replica in range(replicas):
            handles.append(server.options(
                name=actor_name(spec, replica), namespace=NAMESPACE, lifetime="detached",
                max_restarts=-1, max_task_retries=0, max_concurrency=8, num_cpus=cpus,
                scheduling_strategy="SPREAD").remote(env, spec, replica, refresh))
    try:
        out = ray.get([h.status.remote() for h in handles], timeout=READY_SECONDS)
    except ray.exceptions.GetTimeoutError:
        raise ShardsStillBuildingError(name, READY_SECONDS) from None
    _forget_client((state.id, ref.id))
    return out


def status(app: App, name: str, address: str | None = None, timeout: float = 5.0
           ) -> list[dict]:
    """Every replica of corpus ``name``: its status, or ``{"down": reason}`` with its name."""
    with app.db.session() as s:
        state = repo.corpus_state(s, name)
    ref = app.model_ref(state.model_name)
    ray = import_ray()
    connect(address or app.settings.ray_address or "auto")
    rows = []
    for number, names in sorted(_layout(state.id, ref.id).items()):
        for actor in names:
            *_, shards, replica = _parse(actor)
            try:
                handle = ray.get_actor(actor, namespace=NAMESPACE)
                rows.append({**ray.get(handle.status.remote(), timeout=timeout),
                             "name": actor})
            except Exception as exc:  # dead, restarting or slow: say so, keep listing
                rows.append({"name": actor, "number": number, "shards": shards,
                             "replica": replica, "down": type(exc).__name__})
    return rows


def _wait_gone(ray, names: list[str], seconds: float = 60.0) -> None:
    """Until Ray has freed the names of killed actors (a new layout may reuse them)."""
    deadline = time.monotonic() + seconds
    for actor in names:
        while time.monotonic() < deadline:
            try:
                ray.get_actor(actor, namespace=NAMESPACE)
            except ValueError:
                break
            time.sleep(0.05)  # polling Ray's actor table: it has no wait for a name to free


def stop(app: App, name: str, address: str | None = None) -> int:
    """Stop every shard server of corpus ``name`` (all layouts); returns how many."""
    with app.db.session() as s:
        state = repo.corpus_state(s, name)
    ref = app.model_ref(state.model_name)
    ray = import_ray()
    connect(address or app.settings.ray_address or "auto")
    names = [n for group in _corpus_actors(state.id, ref.id).values() for n in group]
    for actor in names:
        try:
            handle = ray.get_actor(actor, namespace=NAMESPACE)
        except ValueError:  # gone meanwhile
            continue
        try:
            ray.get(handle.close.remote(), timeout=10)  # its files; the kill frees the rest
        except Exception:  # down or restarting: a restart empties its folder itself
            log.info("%s: not closed before its stop", actor)
        ray.kill(handle, no_restart=True)
    _wait_gone(ray, names)
    _forget_client((state.id, ref.id))
    return len(names)


def _forget_client(key: tuple[int, int]) -> None:
    """Drop (and let go of) the client of a corpus whose layout was just changed here."""
    with _CLIENTS_LOCK:
        kept = _CLIENTS.pop(key, None)
    if kept is not None and kept[2] is not None:
        kept[2].close()

"""Job kinds: each declared once, by the service that owns it, with its unit and payload.

A ``JobKind`` is a name, the unit its progress counts (for the rate: "412
documents/s"), a payload dataclass and the run function ``run(ctx, payload) ->
dict`` (the dict is the job's result). The service that owns a kind declares it
in its package's ``job_kinds`` module (``searchapp/<service>/job_kinds.py``) with
``declare``; the worker finds those modules itself (``discover``: every package
of ``searchapp`` that has one), so no list of kinds is kept anywhere else, and
the jobs layer imports no service by name. A ``job_kinds`` module stays small: its run
functions import the module doing the work when they are called, so the worker
loads only what it runs.

The payload is written and read through the same dataclass: the request side
writes ``payload_dict(Payload(...))`` (``submit``), the worker reads it back
with ``parse_payload`` before anything runs, refusing a payload with an unknown
key, a missing required field or a value of the wrong type. A field whose
metadata is ``OPTIONAL`` is left out of the written payload while it holds its default (the
payloads stay as they were before kinds were declared); every other field is
always written.

Tasks must be resumable: started again after a crash they carry on from what
the database holds.

Example:
    >>> @dataclass
    ... class Hello:
    ...     corpus: str
    ...     loud: bool = dataclasses.field(default=False, metadata=OPTIONAL)
    >>> hello = declare("hello-doc", unit="greetings", payload=Hello,
    ...                 run=lambda ctx, p: {"said": p.corpus})
    >>> parse_payload(hello, {"corpus": "faq"})
    Hello(corpus='faq', loud=False)
    >>> payload_dict(Hello("faq"))
    {'corpus': 'faq'}
    >>> _ = DECLARED.pop("hello-doc")
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import pkgutil
import threading
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from searchapp.errors import JobError
from searchapp.jobs import queue
from searchapp.jobs.tasks import TaskContext

DECLARATIONS = "job_kinds"  # the module of a service package that declares its kinds
DECLARED: dict[str, JobKind] = {}  # by name; a test adds its own with monkeypatch.setitem
_discovered = threading.Event()
_discovering = threading.Lock()
_OPTIONAL = "searchapp.optional"
OPTIONAL = {_OPTIONAL: True}  # field metadata: left out of the written payload at its default


@dataclass(frozen=True)
class JobKind:
    """One kind of job: its ``name``, the ``unit`` its progress counts, its ``payload``
    dataclass, its ``run(ctx, payload) -> dict``, and ``doing``: what it does, in the words
    before its target ("Reading" 'manuals'), for the pages and the sidebar."""

    name: str
    unit: str
    payload: type
    run: Callable[[TaskContext, Any], dict]
    doing: str = ""

    def submit(self, db, payload: Any, once_key: str | None = None) -> int:
        """Queue a job of this kind with ``payload`` (an instance of its dataclass); its id.

        ``once_key``: queue it only when no queued job of this kind has the same value
        under that key (``queue.enqueue_once``), else return that job's id.

        Example:
            >>> EMBED.submit(app.db, EmbedPayload(corpus="faq"))       # doctest: +SKIP
            12
        """
        if not isinstance(payload, self.payload):
            raise TypeError(f"a {self.name} job's payload is a {self.payload.__name__}, "
                            f"not {type(payload).__name__}")
        written = payload_dict(payload)
        if once_key is not None:
            return queue.enqueue_once(db, self.name, written, once_key)
        return queue.enqueue(db, self.name, written)


def submit(db, payload: Any, once_key: str | None = None) -> int:
    """Queue a job of the kind whose payload dataclass ``payload`` is; its id.

    Why: a service builds its payload (from its ``job_payloads`` module) and queues it
    here, without importing the module that declares its kinds (which imports the service
    to run them): requests and declarations never import each other.

    Example:
        >>> submit(app.db, EmbedPayload(corpus="faq"))              # doctest: +SKIP
        12
    """
    return by_payload(type(payload)).submit(db, payload, once_key)


def by_payload(payload_type: type) -> JobKind:
    """The declared kind whose payload dataclass is ``payload_type``."""
    discover()
    for declared in DECLARED.values():
        if declared.payload is payload_type:
            return declared
    raise JobError(f"No job kind is declared with the payload {payload_type.__name__}; "
                   "declare it in its service's job_kinds module.")


def declare(name: str, *, unit: str, payload: type,
            run: Callable[[TaskContext, Any], dict], doing: str = "") -> JobKind:
    """Declare a job kind (once, in the owning service's ``job_kinds`` module); returns it.

    Example:
        >>> BACKUP = declare("backup", unit="steps", payload=BackupPayload,
        ...                  run=_run_backup)                     # doctest: +SKIP
    """
    if not dataclasses.is_dataclass(payload):
        raise TypeError(f"job kind {name!r}: the payload must be a dataclass")
    declared = JobKind(name, unit, payload, run, doing or name.capitalize())
    twin = next((k for k in DECLARED.values() if k.payload is payload and k.name != name), None)
    if twin is not None:  # ``submit`` finds a kind by its payload's dataclass
        raise ValueError(f"job kind {name!r}: {payload.__name__} is already {twin.name!r}'s "
                         "payload; give each kind a dataclass of its own")
    previous = DECLARED.get(name)
    if previous is not None and previous != declared:
        raise ValueError(f"job kind {name!r} is declared twice")
    DECLARED[name] = declared
    return declared


def discover() -> None:
    """Import the ``job_kinds`` module of every package of ``searchapp`` that has one (once).

    Why: the jobs layer sits below the services and names none of them; a service
    adds a kind by declaring it in its own ``job_kinds`` module, and nothing else changes.
    """
    if _discovered.is_set():
        return
    with _discovering:
        if _discovered.is_set():
            return
        import searchapp

        for package in pkgutil.iter_modules(searchapp.__path__):
            module = f"searchapp.{package.name}.{DECLARATIONS}"
            if package.ispkg and importlib.util.find_spec(module) is not None:
                importlib.import_module(module)
        _discovered.set()


def kind(name: str) -> JobKind:
    """The declared kind ``name``; a JobError listing the known kinds when there is none.

    Example:
        >>> kind("embed").unit
        'documents'
    """
    if name not in DECLARED:
        discover()
    found = DECLARED.get(name)
    if found is None:
        raise JobError(f"Unknown job kind {name!r}; known kinds: {', '.join(sorted(DECLARED))}.")
    return found


def kinds() -> list[JobKind]:
    """Every declared kind, by name.

    Example:
        >>> "ingest" in [k.name for k in kinds()]
        True
    """
    discover()
    return sorted(DECLARED.values(), key=lambda k: k.name)


def payload_dict(payload: Any) -> dict:
    """The dict a job's payload is stored as: every field, but an ``OPTIONAL`` one that
    holds its default.

    Example:
        >>> payload_dict(kind("backup").payload(name="2026-01-01T00-00-00"))
        {'name': '2026-01-01T00-00-00'}
    """
    out = {}
    for f in dataclasses.fields(payload):
        value = getattr(payload, f.name)
        if f.metadata.get(_OPTIONAL) and value == _default(f):
            continue
        out[f.name] = _plain(value)
    return out


def parse_payload(job_kind: JobKind | str, raw: dict) -> Any:
    """The payload of a ``job_kind`` job read into its dataclass, checked field by field.

    Refused with a JobError naming the field: a key the dataclass has no field for, a
    required field missing, or a value of another type than the field's.

    Example:
        >>> parse_payload("backup", {"name": "2026-01-01T00-00-00"}).name
        '2026-01-01T00-00-00'
        >>> parse_payload("backup", {"nmae": "x"})
        Traceback (most recent call last):
        ...
        searchapp.errors.JobError: The backup job's payload has an unknown field 'nmae' ...
    """
    job_kind = kind(job_kind) if isinstance(job_kind, str) else job_kind
    what = f"The {job_kind.name} job's payload"
    again = ("it was queued by another version of searchapp or by hand; cancel it and "
             "start the job again from the app.")
    if not isinstance(raw, dict):
        raise JobError(f"{what} is a {type(raw).__name__}, not an object; {again}")
    fields = {f.name: f for f in dataclasses.fields(job_kind.payload)}
    unknown = sorted(set(raw) - set(fields))
    if unknown:
        raise JobError(f"{what} has an unknown field {unknown[0]!r} (known: "
                       f"{', '.join(fields)}); {again}")
    hints = typing.get_type_hints(job_kind.payload)
    for name, f in fields.items():
        if name not in raw:
            if _default(f) is dataclasses.MISSING:
                raise JobError(f"{what} lacks the required field {name!r}; {again}")
            continue
        if not _fits(raw[name], hints[name]):
            raise JobError(f"{what} has {name!r} = {_show(raw[name])}, a "
                           f"{type(raw[name]).__name__}, where {_describe(hints[name])} "
                           f"was expected; {again}")
    return job_kind.payload(**raw)


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def _plain(value: Any) -> Any:
    """A value as JSON stores it: tuples as lists, dicts and lists copied."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _fits(value: Any, hint: Any) -> bool:
    """Whether ``value`` (as read from JSON) is of the type ``hint``."""
    if hint is Any:
        return True
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, arg) for arg in args)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if hint is list or origin is list:
        return isinstance(value, list) and all(_fits(v, args[0]) for v in value if args)
    if hint is dict or origin is dict:
        return isinstance(value, dict) and (not args or all(
            _fits(k, args[0]) and _fits(v, args[1]) for k, v in value.items()))
    raise TypeError(f"a payload field of type {hint!r} cannot be checked")


def _describe(hint: Any) -> str:
    """``str | None`` → "a str or null"."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return " or ".join(_describe(arg) for arg in typing.get_args(hint))
    if hint is type(None):
        return "null"
    if hint is Any:
        return "any value"
    return f"a {getattr(hint, '__name__', None) or hint}" if typing.get_origin(hint) is None \
        else f"a {hint}"


def _show(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."

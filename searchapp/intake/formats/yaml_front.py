"""YAML front matter loaded with bounds: no aliases, a size cap, a nesting cap.

``yaml.safe_load`` is safe from code but not from cost: an alias (``*name``)
repeats a node without copying it, so 397 bytes of nine aliases of nine aliases
... load in milliseconds as a value that, once turned into text (a title, the
tags joined), is 9^9 "lol"s: gigabytes, held by the reader until its memory cap
or timeout. Front matter (a title, an author, a date, some tags) needs none of
it, so ``load_front`` refuses, before anything is built:

- more than ``MAX_FRONT_BYTES`` (64 KiB; real front matter is a few hundred bytes),
- any alias, and any nesting deeper than ``MAX_DEPTH`` (lists in maps in lists ...),
- a value Python will not convert (an integer of more than 4,300 digits),

each as ``FrontMatterRefused`` naming why, and what the YAML loader itself refuses
(bad syntax, unsafe tags) as its subclass ``NotYaml``; the caller reads the document without
its front matter. The events are checked in one pass of libyaml's parser (C,
when PyYAML has it) and only then built: 64 KiB of the costliest YAML takes
about 0.1 s here.

Example:
    >>> load_front("title: Guide\\ntags: [a, b]\\n")
    {'title': 'Guide', 'tags': ['a', 'b']}
    >>> load_front("a: &a [x, x]\\nb: [*a, *a]\\n")
    Traceback (most recent call last):
    ...
    searchapp.intake.formats.yaml_front.FrontMatterRefused: it uses a YAML alias (*a)...
"""

from __future__ import annotations

import yaml

from searchapp.intake.source import size_words

MAX_FRONT_BYTES = 64 << 10
MAX_DEPTH = 16  # collections inside collections
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser when there is one
OPEN, CLOSE = (yaml.SequenceStartEvent, yaml.MappingStartEvent), \
    (yaml.SequenceEndEvent, yaml.MappingEndEvent)


class FrontMatterRefused(Exception):
    """Front matter that is not read (why in the message); the document still is."""


class NotYaml(FrontMatterRefused):
    """Not valid YAML at all: most likely no front matter but text between two rules."""


def load_front(source: str) -> object:
    """The YAML in ``source`` as Python values, or ``FrontMatterRefused`` (see the module's
    docstring)."""
    size = len(source.encode("utf-8", "surrogatepass"))
    if size > MAX_FRONT_BYTES:
        raise FrontMatterRefused(f"it has {size_words(size)}, more than the "
                                 f"{size_words(MAX_FRONT_BYTES)} front matter may hold")
    try:
        _check_events(source)
        return yaml.load(source, Loader=LOADER)  # a safe loader, events checked
    except yaml.YAMLError as exc:
        raise NotYaml(f"it is not valid YAML ({_first_line(exc)})") from None
    except (ValueError, OverflowError, RecursionError) as exc:
        raise FrontMatterRefused(f"it holds a value that cannot be read "
                                 f"({_first_line(exc)})") from None


def _check_events(source: str) -> None:
    """Aliases and nesting refused from the parser's events, before a node is built."""
    depth = 0
    for event in yaml.parse(source, Loader=LOADER):
        if isinstance(event, yaml.AliasEvent):
            raise FrontMatterRefused(f"it uses a YAML alias (*{event.anchor}), which repeats "
                                     "a value without copying it; write the value out instead")
        if isinstance(event, OPEN):
            depth += 1
            if depth > MAX_DEPTH:
                raise FrontMatterRefused(f"it nests lists and maps more than {MAX_DEPTH} "
                                         "levels deep")
        elif isinstance(event, CLOSE):
            depth -= 1


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().split("\n", 1)[0][:200]

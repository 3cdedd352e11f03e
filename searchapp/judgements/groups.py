"""Groups confirmed by a person: documents joined by duplicate judgements, with a canonical one.

Confirming a group on the Duplicates page judges each member a duplicate of the
chosen canonical document (source 'review'), so a group is a connected set of
duplicate judgements and its canonical document is the member with the most of
them (a star's centre; ties: the member judged first). Nothing beyond the
judgements is stored, so a group follows every later judgement: one more
duplicate joins it, an undo splits it. A 'not duplicate' judgement between two
members is counted as a conflict, for a person to look at.

Example:
    >>> star = [("q1", "q2", 1), ("q1", "q3", 1), ("q4", "q5", 0)]
    >>> [(g.canonical, g.members) for g in group_judged_pairs(star)]
    [('q1', ['q1', 'q2', 'q3'])]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from searchapp.corpora.csv_safe import safe_csv
from searchapp.judgements import service

if TYPE_CHECKING:
    from searchapp.context import App


@dataclass(frozen=True)
class ConfirmedGroup:
    canonical: str
    members: list[str]  # the canonical first, then in order of judgement
    texts: list[str] = field(default_factory=list)
    conflicts: int = 0  # 'not duplicate' judgements between two members

    @property
    def size(self) -> int:
        return len(self.members)

    def as_dict(self) -> dict:
        return {"canonical": self.canonical, "members": self.members, "size": self.size,
                "conflicts": self.conflicts}


def group_judged_pairs(pairs: Sequence[tuple[str, str, int]]) -> list[ConfirmedGroup]:
    """Groups from (a, b, label) pair judgements in the order they were made; biggest first."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    order: dict[str, int] = {}
    degree: Counter = Counter()
    for a, b, label in pairs:
        if label >= 1:
            for x in (a, b):
                order.setdefault(x, len(order))
            degree.update((a, b))
            parent[root(a)] = root(b)
    members: dict[str, list[str]] = {}
    for x in sorted(order, key=order.get):
        members.setdefault(root(x), []).append(x)
    conflicts: Counter = Counter(root(a) for a, b, label in pairs
                                 if label == 0 and a in order and b in order
                                 and root(a) == root(b))
    out = []
    for r, group in members.items():
        canonical = max(group, key=lambda x: (degree[x], -order[x]))
        out.append(ConfirmedGroup(canonical, [canonical] + [x for x in group if x != canonical],
                                  conflicts=conflicts[r]))
    return sorted(out, key=lambda g: (-g.size, order[g.canonical]))


def confirmed_groups(app: App, corpus: str) -> list[ConfirmedGroup]:
    """The corpus' confirmed groups with their members' texts, biggest first.

    Example:
        >>> confirmed_groups(app, "faq")[0].canonical                    # doctest: +SKIP
        'q12'
    """
    judged = service.list_judgements(app, corpus, kind="pair")
    groups = group_judged_pairs([(j.a, j.b, j.label) for j in judged])
    texts = service.texts(app, corpus, [m for g in groups for m in g.members])
    return [ConfirmedGroup(g.canonical, g.members, [texts.get(m, "") for m in g.members],
                           g.conflicts) for g in groups]


def groups_csv(groups: Sequence[ConfirmedGroup], out: str | Path | None = None) -> str | None:
    """One row per member: group, canonical_id, id, is_canonical, text (spreadsheet-safe).

    Example:
        >>> groups_csv([ConfirmedGroup("a", ["a", "b"], ["A", "B"])]).splitlines()
        ['group,canonical_id,id,is_canonical,text', '1,a,a,True,A', '1,a,b,False,B']
    """
    rows = [{"group": n, "canonical_id": g.canonical, "id": m, "is_canonical": m == g.canonical,
             "text": t}
            for n, g in enumerate(groups, start=1)
            for m, t in zip(g.members, g.texts or [""] * g.size, strict=True)]
    return safe_csv(pd.DataFrame(rows, columns=["group", "canonical_id", "id", "is_canonical",
                                                "text"]), out)

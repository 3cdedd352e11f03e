"""Confirmed groups: duplicate judgements joined into groups, each with its canonical member."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from searchapp.judgements.groups import group_judged_pairs

_ids = st.sampled_from([f"d{i}" for i in range(8)])
_pairs = st.lists(st.tuples(_ids, _ids, st.integers(0, 1)).filter(lambda p: p[0] != p[1]),
                  max_size=25)


@given(_pairs)
def test_every_duplicate_judgement_joins_its_two_documents_in_one_group(pairs):
    groups = group_judged_pairs(pairs)
    where = {m: n for n, g in enumerate(groups) for m in g.members}
    assert sum(g.size for g in groups) == len(where)  # a document in one group only
    for a, b, label in pairs:
        if label:
            assert where[a] == where[b]
    degree = Counter(x for a, b, label in pairs if label for x in (a, b))
    for g in groups:
        assert g.members[0] == g.canonical
        assert degree[g.canonical] == max(degree[m] for m in g.members)
        assert g.conflicts == sum(1 for a, b, label in pairs if not label
                                  and a in g.members and b in g.members)
    assert [g.size for g in groups] == sorted((g.size for g in groups), reverse=True)


def test_a_confirmed_star_keeps_its_centre_as_canonical_and_an_undo_splits_it():
    star = [("q2", "q9", 1), ("q5", "q9", 1), ("q7", "q9", 1)]
    [group] = group_judged_pairs(star)
    assert group.canonical == "q9" and sorted(group.members) == ["q2", "q5", "q7", "q9"]
    assert [g.size for g in group_judged_pairs([*star[:1], ("q5", "q7", 1)])] == [2, 2]

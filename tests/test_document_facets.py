"""Facets of a search's documents: counts that add up, filters that read back, any metadata."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from searchapp.search.document_facets import facets_of
from searchapp.search.query_language import parse_query

VALUES = st.one_of(st.none(), st.text(max_size=12), st.sampled_from(
    ["pdf", "md", "contracts/2024", "contracts/2023/q1", "a b/c", "2024-03-02T10:00:00Z",
     "2023-12-31", "not a date", "Jane Doe", "de", "日本語/資料"]))
META = st.fixed_dictionaries({}, optional={k: VALUES for k in
                                           ("type", "folder", "author", "lang", "modified")})


@settings(max_examples=300, deadline=None)
@given(st.lists(META, max_size=30))
def test_facets_count_the_hits_and_each_value_reads_back_as_its_filter(metas):
    facets = facets_of(metas)
    for name, values in facets.items():
        assert values, name
        for value in values:
            assert 1 <= value.count <= len(metas)
            for written in value.filters:  # the filter a click adds is understood as written
                [understood] = parse_query(written).filters
                assert str(understood) == written
    for value in facets.get("folder", []):  # a folder counts its hits and those below it
        if value.depth == 0:
            below = [v for v in facets["folder"] if v.depth == 1
                     and v.filters[0].startswith(value.filters[0].rstrip('"'))]
            assert sum(v.count for v in below) <= value.count


def test_months_or_years_oldest_first():
    metas = [{"modified": d} for d in ("2024-03-02", "2024-01-10", "2024-03-30", "2023-12-01")]
    dates = facets_of(metas)["date"]
    assert [(v.label, v.count) for v in dates] == [("2023-12", 1), ("2024-01", 1),
                                                   ("2024-03", 2)]
    assert dates[0].filters == ("after:2023-12-01", "before:2024-01-01")
    wide = facets_of([{"modified": f"{y}-06-01"} for y in range(2000, 2030)])["date"]
    assert wide[0].label == "2000" and wide[0].filters == ("after:2000-01-01",
                                                            "before:2001-01-01")


def test_a_facet_that_does_not_split_the_hits_is_not_offered():
    metas = [{"lang": "en", "type": "pdf", "author": "Ann"}, {"lang": "en", "type": "md",
                                                               "author": "Ann"}]
    assert list(facets_of(metas)) == ["type"]  # one language, one author: nothing to narrow

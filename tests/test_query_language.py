"""The search box's language: any text parses, filters round-trip, syntax-like text is text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchapp.search.query_language import (
    FieldFilter,
    filter_text,
    parse_query,
    with_filter,
    without_filter,
)

COLUMNS = ["product", "year", "due_date"]
# pieces a person types: words, codes, operators, quotes, fields, URLs, unicode
PIECES = st.sampled_from([
    "lease", "C++", "ERR-40417", "a-b", '"', "-", "--force", "-5", "OR", "or", "http://x",
    "type:", "pdf", "folder:", "file:*.md", "author:", '"Jane Doe"', "after:2024-03",
    "before:", "year>=2024", "product:billing", "-draft", '-"old draft"', ":", "std::vector",
    "Größe", "日本語", "\t", " ", "<", ">=", "lang:de", "x:y", "-type:pdf", "'", "\\",
])
TYPED = st.lists(st.one_of(PIECES, st.text(max_size=6)), max_size=12).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(TYPED)
def test_any_text_parses_and_its_understanding_round_trips(typed):
    parsed = parse_query(typed, COLUMNS)
    again = parse_query(str(parsed), COLUMNS)
    assert again.filters == parsed.filters
    assert again.phrases == parsed.phrases and again.excluded == parsed.excluded
    assert again.any_of == parsed.any_of
    for f in parsed.filters:  # each filter's span is where it was typed
        start, end = f.span
        assert parse_query(typed[start:end], COLUMNS).filters == (f,)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_arbitrary_unicode_never_raises(typed):
    parsed = parse_query(typed, COLUMNS)
    assert isinstance(parsed.text, str)
    for f in parsed.filters:  # a chip removed: that filter is gone, the others stay
        left = parse_query(without_filter(typed, f), COLUMNS).filters
        assert left.count(f) == parsed.filters.count(f) - 1


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["type", "folder", "author", "product"]),
       st.one_of(st.sampled_from(["//x", "::y", ":", "a b", " lead", "C++", "ü"]),
                 st.text(alphabet=st.characters(blacklist_categories=["Cc", "Cs"]),
                         min_size=1, max_size=15)).filter(lambda v: '"' not in v))
def test_a_written_filter_reads_back_as_itself(name, value):
    written = filter_text(name, value)
    parsed = parse_query(written, COLUMNS)
    expected = value
    assert [(f.field, f.value) for f in parsed.filters] == [(name, expected)]


# The table of the note: what real queries became (text | phrases | excluded | filters).
REAL = [
    ("how do I change the default port", "how do I change the default port", (), (), ()),
    ('"notice period" lease', "notice period lease", ("notice period",), (), ()),
    ("lease -draft", "lease", (), ("draft",), ()),
    ('contract -"old version"', "contract", (), ("old version",), ()),
    ("C++ templates", "C++ templates", (), (), ()),
    ("ERR-40417", "ERR-40417", (), (), ()),
    ("a-b testing", "a-b testing", (), (), ()),
    ("http://example.com/path", "http://example.com/path", (), (), ()),
    ("https://x.org?a=b:c", "https://x.org?a=b:c", (), (), ()),
    ('5" screen', '5" screen', (), (), ()),
    ('"unbalanced quote', "unbalanced quote", (), (), ()),
    ("git rebase --onto", "git rebase --onto", (), (), ()),
    ("temperature -5 degrees", "temperature -5 degrees", (), (), ()),
    ("std::vector resize", "std::vector resize", (), (), ()),
    ("meeting at 10:30", "meeting at 10:30", (), (), ()),
    ("note: call back", "note: call back", (), (), ()),
    ("type:pdf lease", "lease", (), (), ("type:pdf",)),
    ("-type:pdf lease", "lease", (), (), ("-type:pdf",)),
    ("folder:contracts/2024 renewal", "renewal", (), (), ("folder:contracts/2024",)),
    ('folder:"my contracts" renewal', "renewal", (), (), ('folder:"my contracts"',)),
    ("file:*.md install", "install", (), (), ("file:*.md",)),
    ('author:"Jane Doe" report', "report", (), (), ('author:"Jane Doe"',)),
    ("after:2024-03-01 before:2025 budget", "budget", (), (),
     ("after:2024-03-01", "before:2025")),
    ("year>=2024 product:billing refund", "refund", (), (), ("year>=2024", "product:billing")),
    ("due_date<2024-06-01 overdue", "overdue", (), (), ("due_date<2024-06-01",)),
    ("lang:de Handbuch", "Handbuch", (), (), ("lang:de",)),
    ("color:red shirt", "color:red shirt", (), (), ()),
    ("pg_dump -Fc", "pg_dump", (), ("Fc",), ()),  # -word is "not", as everywhere
    ('"exact phrase" OR summary', "exact phrase summary", (), (), ()),
    ("cats OR dogs", "cats dogs", (), (), ()),
    ("OR", "OR", (), (), ()),
    ("Größe ändern -entwurf", "Größe ändern", (), ("entwurf",), ()),
    ("日本語 検索", "日本語 検索", (), (), ()),
    ("type: pdf", "type: pdf", (), (), ()),
    ("x<y a>b", "x<y a>b", (), (), ()),
    ('"I expect Japan to keep conducting intervention, but the volume is likely to fall '
     'sharply," said Junya Tanase.', "I expect Japan to keep conducting intervention, but the "
     "volume is likely to fall sharply, said Junya Tanase.", (), (), ()),  # a quotation: prose
]


@pytest.mark.parametrize(("typed", "text", "phrases", "excluded", "filters"), REAL,
                         ids=[r[0] for r in REAL])
def test_real_queries_read_as_a_person_means_them(typed, text, phrases, excluded, filters):
    parsed = parse_query(typed, COLUMNS)
    assert parsed.text == text
    assert parsed.phrases == phrases
    assert parsed.excluded == excluded
    assert tuple(str(f) for f in parsed.filters) == filters


def test_an_or_with_a_phrase_requires_one_of_them():
    parsed = parse_query('"exact phrase" OR summary')
    assert parsed.any_of == (("exact phrase", "summary"),)
    assert parsed.phrases == ()


def test_an_unknown_field_is_text_and_named():
    parsed = parse_query("color:red shirt", COLUMNS)
    assert parsed.filters == () and parsed.unknown_fields == ("color",)
    assert parse_query("https://x", COLUMNS).unknown_fields == ()


def test_a_chip_removed_leaves_the_rest_as_typed():
    typed = 'renewal  type:pdf "notice period"   folder:contracts'
    parsed = parse_query(typed)
    assert without_filter(typed, parsed.filters[0]) == 'renewal "notice period" folder:contracts'
    assert with_filter("renewal", "folder", "my contracts") == 'renewal folder:"my contracts"'
    assert FieldFilter("type", ":", "pdf") in parse_query(with_filter("x", "type", "pdf")).filters

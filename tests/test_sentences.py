"""Sentences for answers: any text is cut into stripped spans that hold each non-space
character once (hypothesis, with text built from the pieces that steer the splitter), and
real passages of Git's, Debian's and PostgreSQL's manuals are cut where a reader would cut."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from searchapp.embedding.sentences import MAX_SENTENCE_CHARS, sentence_spans, sentences_within

PIECES = ["e.g. ", "i.e., ", "etc. ", "Dr. ", "vs. ", "No. 5 ", "U.S. ", "2.39.5 ", "a.txt. ",
          "https://x.org/a.html. ", "3.5 GB ", "... ", "…", "。", "？", "! ", "? ", ". ", ".",
          "\n", "\n\n", "\t", "   ", "\u00a0", "\r\n", "\u2028", "\x0c", "\x1c", " | ", "- ",
          "* ", "• ", "1. ", "a) ", "(iv) ", "2.3. ", "$ git reset --soft HEAD^", "# ",
          "postgres=# ", "```", "----", "~~~~", "+", "§", "::", "\\", ";", ":", ", ",
          "SELECT *", "CREATE VIEW v AS", "Word ", "word ", "The End", "x" * 450, " " * 3,
          "见", "😀", "\u0301", "\x00"]


def check(text: str) -> list[tuple[int, int]]:
    """The contract: in order, not overlapping, stripped, every non-space character once."""
    spans = sentence_spans(text)
    covered = []
    last = 0
    for a, b in spans:
        assert last <= a < b <= len(text)
        assert not text[a].isspace() and not text[b - 1].isspace()
        assert b - a <= MAX_SENTENCE_CHARS
        covered.extend(range(a, b))
        last = b
    inside = {i for a, b in spans for i in range(a, b)}
    assert len(inside) == len(covered)  # no character twice, and...
    assert {i for i, c in enumerate(text) if not c.isspace()} <= inside  # ...all of the text
    assert all(text[i].isspace() for i in set(range(len(text))) - inside)
    return spans


@given(st.text())
def test_any_string_is_covered_once(text):
    check(text)


@given(st.lists(st.sampled_from(PIECES) | st.text(max_size=5), max_size=60).map("".join))
def test_any_text_made_of_what_steers_the_splitter_is_covered_once(text):
    check(text)


@pytest.mark.parametrize("text", [
    "", " \n\t\u00a0\u2028 ", "a" * 1_000_000, "word " * 200_000, "x.\n" * 333_333,
    "----\n\n" * 150_000, "```\n\n" * 200_000, "A. " * 333_333, "| " * 500_000,
    "Dr. Who. " * 111_111, "见" * 1_000_000,
])
def test_edge_and_megabyte_texts(text):
    spans = check(text)
    assert all(b - a <= MAX_SENTENCE_CHARS for a, b in spans)


def units(text: str) -> list[str]:
    return [" ".join(text[a:b].split()) for a, b in sentence_spans(text)]


# Real passages (the files named), each with the units a reader would cut them into.
REAL = {
    "abbreviations (debian-faq)": (
        "    in and out. One can confidently say that the packages do not have\n"
        "    any known severe bugs, security holes etc., in them. The packages\n"
        "    in stable integrate seamlessly with other stable packages.\n\n"
        "    On the other hand, packages in testing or unstable can have\n"
        "    hidden bugs, security holes etc. Moreover, some packages in\n"
        "    testing and unstable might not be working as intended.",
        ["in and out.", "One can confidently say that the packages do not have any known "
         "severe bugs, security holes etc., in them.", "The packages in stable integrate "
         "seamlessly with other stable packages.", "On the other hand, packages in testing or "
         "unstable can have hidden bugs, security holes etc.", "Moreover, some packages in "
         "testing and unstable might not be working as intended."]),
    "abbreviations before capitals (git-cvsserver, git-filter-branch, debian-faq)": (
        "'git-cvsserver' uses one database per Git head (i.e. CVS module) to\n"
        "store information about the repository.\n"
        "  BSD vs. GNU userland differences can really bite.  If lucky, error\n"
        "  messages are spewed.\n\n"
        "    No. Packages can be upgraded in place, even in running systems.",
        ["'git-cvsserver' uses one database per Git head (i.e. CVS module) to store "
         "information about the repository.", "BSD vs. GNU userland differences can really "
         "bite.", "If lucky, error messages are spewed.", "No.",
         "Packages can be upgraded in place, even in running systems."]),
    "e.g., i.e., version numbers (git-cvsexportcommit, datatype-pg-lsn.html)": (
        "-k::\n\tReverse CVS keyword expansion (e.g. $Revision: 1.2.3.4$\n"
        "\tbecomes $Revision$) in working CVS checkout before applying patch.\n\n"
        "-w::\n\tSpecify the location of the CVS checkout. Note that\n"
        "the calculated LSN should be in the range of pg_lsn type,\ni.e., between 0/0 and\n"
        "FFFFFFFF/FFFFFFFF.",
        ["-k::", "Reverse CVS keyword expansion (e.g. $Revision: 1.2.3.4$ becomes $Revision$) "
         "in working CVS checkout before applying patch.", "-w::",
         "Specify the location of the CVS checkout.", "Note that the calculated LSN should "
         "be in the range of pg_lsn type, i.e., between 0/0 and FFFFFFFF/FFFFFFFF."]),
    "file names, URLs, sizes, sections (libpq-connect, install-windows, storage-page-layout)": (
        "Specifies the name of the file used to store passwords\n(see Section 34.16).\n"
        "Defaults to ~/.pgpass, or\n%APPDATA%\\postgresql\\pgpass.conf on Microsoft Windows.\n"
        "(No error is reported if this file does not exist.)\nchannel_binding\n"
        "This option controls the client's use of channel binding.\n"
        "Windows, available as a graphical installer package\nfrom the PostgreSQL website at\n"
        "https://www.postgresql.org/download/. Building from source\n"
        "is only intended for people developing PostgreSQL.\nEvery table is stored "
        "as an array of pages of a\nfixed size (usually 8 kB, although a different page size "
        "can be selected).\nTable 73.2 shows the overall layout of a page.\n"
        "Table 73.2. Overall Page Layout",
        ["Specifies the name of the file used to store passwords (see Section 34.16).",
         "Defaults to ~/.pgpass, or %APPDATA%\\postgresql\\pgpass.conf on Microsoft Windows.",
         "(No error is reported if this file does not exist.)", "channel_binding",
         "This option controls the client's use of channel binding.",
         "Windows, available as a graphical installer package from the PostgreSQL website at "
         "https://www.postgresql.org/download/.",
         "Building from source is only intended for people developing PostgreSQL.",
         "Every table is stored as an array of pages of a fixed size (usually 8 kB, although "
         "a different page size can be selected).",
         "Table 73.2 shows the overall layout of a page.", "Table 73.2. Overall Page Layout"]),
    "ellipsis and a numbered heading (debian-faq)": (
        "1.3.\u00a0OK, now I know what Debian is... what is Linux?!\n\n"
        "    In short, Linux is the kernel of a Unix-like operating system. It\n"
        "    was originally designed for 386 (and better) PCs.",
        ["1.3. OK, now I know what Debian is... what is Linux?!",
         "In short, Linux is the kernel of a Unix-like operating system.",
         "It was originally designed for 386 (and better) PCs."]),
    "headings and underlines (gitweb.txt, manage-ag-createdb.html)": (
        "NAME\n----\ngitweb - Git web interface (web frontend to Git repositories)\n\n"
        "23.2. Creating a Database\nIn order to create a database, the PostgreSQL\n"
        "server must be up and running (see Section 19.3).\n"
        "Databases are created with the SQL command\nCREATE DATABASE:\n"
        "CREATE DATABASE name;\nwhere name follows the usual rules for\nSQL identifiers.",
        ["NAME", "----", "gitweb - Git web interface (web frontend to Git repositories)",
         "23.2. Creating a Database", "In order to create a database, the PostgreSQL server "
         "must be up and running (see Section 19.3).",
         "Databases are created with the SQL command CREATE DATABASE:",
         "CREATE DATABASE name;", "where name follows the usual rules for SQL identifiers."]),
    "list items (debian-faq, glossary-content.txt)": (
        "    Debian GNU/Linux is:\n\n      * full featured: Debian includes more than 59100 "
        "software\n        packages at present. Users can select which packages to\n"
        "        install.\n\n      * free to use and redistribute.\n"
        "* any path matches itself\n* the pathspec up to the last slash represents a\n"
        "  directory prefix.  The scope of that pathspec is\n  limited to that subtree.",
        ["Debian GNU/Linux is:", "* full featured: Debian includes more than 59100 software "
         "packages at present.", "Users can select which packages to install.",
         "* free to use and redistribute.", "* any path matches itself",
         "* the pathspec up to the last slash represents a directory prefix.",
         "The scope of that pathspec is limited to that subtree."]),
    "table rows (gin-builtin-opclasses.html)": (
        "Table 70.1. Built-in GIN Operator Classes\nName | Indexable Operators\n"
        "array_ops | && (anyarray,anyarray)\njsonb_ops | @> (jsonb,jsonb)",
        ["Table 70.1. Built-in GIN Operator Classes", "Name | Indexable Operators",
         "array_ops | && (anyarray,anyarray)", "jsonb_ops | @> (jsonb,jsonb)"]),
    "code, prompts and output (user-manual.txt, debian-faq, sql-createview.html)": (
        "project in mind, here are some interesting examples:\n\n"
        "------------------------------------------------\n"
        "\t# Git itself (approx. 40MB download):\n$ git clone git://git.kernel.org/pub/scm/git/"
        "git.git\n------------------------------------------------\n\n"
        "    $ lsb_release  -a\n    Distributor ID: Debian\n"
        "    Description:    Debian GNU/Linux unstable (sid)\n"
        "Create a view with LOCAL CHECK OPTION:\nCREATE VIEW universal_comedies AS\n"
        "    SELECT *\n    FROM comedies\n    WITH LOCAL CHECK OPTION;\n"
        "This will create a view based on the comedies view.",
        ["project in mind, here are some interesting examples:",
         "------------------------------------------------",
         "# Git itself (approx. 40MB download):",
         "$ git clone git://git.kernel.org/pub/scm/git/git.git",
         "------------------------------------------------", "$ lsb_release -a",
         "Distributor ID: Debian", "Description: Debian GNU/Linux unstable (sid)",
         "Create a view with LOCAL CHECK OPTION:", "CREATE VIEW universal_comedies AS",
         "SELECT *", "FROM comedies", "WITH LOCAL CHECK OPTION;",
         "This will create a view based on the comedies view."]),
    "a command continued with a backslash (gitweb.txt)": (
        "    # http://git.example.org/~<user>/\n"
        "    RewriteRule ^/\\~([^\\/]+)(/|/gitweb.cgi)?$\t/cgi-bin/gitweb.cgi \\\n"
        "\t\t[QSA,E=GITWEB_PROJECTROOT:/home/$1/public_git/,L,PT]",
        ["# http://git.example.org/~<user>/", "RewriteRule ^/\\~([^\\/]+)(/|/gitweb.cgi)?$ "
         "/cgi-bin/gitweb.cgi \\ [QSA,E=GITWEB_PROJECTROOT:/home/$1/public_git/,L,PT]"]),
}


@pytest.mark.parametrize("case", list(REAL))
def test_real_hard_cases(case):
    text, expected = REAL[case]
    assert units(text) == expected


def test_a_page_long_unit_is_cut_at_clause_boundaries():
    clause = "the server keeps the write-ahead log until every standby has read it"
    text = ", and ".join([clause] * 20) + "."
    spans = check(text)
    assert len(spans) > 1
    assert all(text[b - 1] == "," for _a, b in spans[:-1])  # at a comma, never mid-word


def test_sentences_within_a_passage():
    text = "One. Two words. Three."
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in sentences_within(spans, 5, len(text))] == [
        "Two words.", "Three."]

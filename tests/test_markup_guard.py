"""No string a user or a file supplies reaches a page's Markdown unescaped: a guard on the
source of the pages (an AST check, independent of ruff).

Streamlit renders Markdown in ``st.markdown``, ``st.write``, ``st.caption``, the alerts,
``st.toast``, the titles, the badges, every widget's label, a radio's options and
captions, the tabs, and every ``help=`` tooltip. Each argument of such a call in
``searchapp/ui/``, ``searchapp/web/``, ``app.py`` and ``serve.py`` must be text the app
wrote itself: a constant (or a module constant in CAPITALS), a number formatted with a
format spec, a call of ``md_escape`` (``searchapp.reporting``, the one escape) or
``md_code``, or a local variable made only of those. Anything else is listed in
``REVIEWED`` with the reason it carries no user text, or the test fails naming it: a new
``st.error(str(exc))`` cannot slip in.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCES = sorted([*REPO.glob("searchapp/ui/**/*.py"), *REPO.glob("searchapp/web/*.py"),
                  REPO / "app.py", REPO / "serve.py"])
BODY_CALLS = {"markdown", "write", "caption", "info", "warning", "error", "success", "toast",
              "title", "header", "subheader", "badge", "exception"}
LABEL_CALLS = {"expander", "button", "checkbox", "toggle", "radio", "tabs", "metric",
               "link_button", "page_link", "popover", "download_button", "form_submit_button",
               "selectbox", "multiselect", "text_input", "text_area", "number_input", "slider",
               "select_slider", "date_input", "time_input", "file_uploader", "color_picker",
               "camera_input", "pills", "segmented_control", "status", "spinner", "feedback",
               "audio_input", "chat_input"}
MARKDOWN_KEYWORDS = {"help", "captions", "body", "label", "text"}
OPTION_CALLS = {"radio", "tabs", "pills", "segmented_control"}  # options drawn as Markdown
ESCAPES = {"md_escape", "md_code"}
# Functions whose result is the app's own words and numbers (no user text).
OWN_TEXT = {"len", "int", "float", "round", "duration", "ago", "done_line", "percent_done",
            "size_words", "two_cosines",
            "type_words", "table_words", "labels", "listing"}  # the format registry's own words
NOT_STREAMLIT = {"write"}  # a method of this name on these receivers is not st.write
OTHER_RECEIVERS = {"url", "UrlState", "state"}
# Names the pages give only to the app's own numbers and states (a job's id, a page number).
OWN_NAMES = {"id", "job_id", "k", "status", "kind", "number", "page", "pid", "reference",
             "passage"}

# (file, the argument's first line as written): why it carries no user text. Kept short on purpose.
REVIEWED = {
    ("searchapp/ui/pages/guide.py", "part"):
        "the guide's own pages, read from docs/ (a topic is only ever one of their names)",
    ("searchapp/ui/welcome.py", "words"): "the app's own sentence about the worker",
    ("searchapp/ui/welcome.py",
     '"\\n".join(f"- {icon} **{name}**: {what}." for name, icon, what in STEPS)'):
        "the first screen's constant steps",
    ("searchapp/ui/answer_box.py", "answer_markdown(answer)"):
        "each sentence md_escape'd inside the box's own colours (test_ui_answer_box.py)",
    ("searchapp/ui/cluster_filters.py", 'label or f"Search in {md_escape(repr(saved.value))}"'):
        "callers pass a constant label",
    ("searchapp/ui/common.py", "label"): "page_link: callers pass the pages' constant names",
    ("searchapp/ui/search_facets.py", "_label(name, value, widest)"):
        "the value md_escape'd, then the app's folder icon, bar and count",
    ("searchapp/ui/duplicates_review.py", 'f"{REVIEW_KEYS} · {line}"'): "counts of the session",
    ("searchapp/ui/judging.py", "list(options)"): "the constant judgement names",
    ("searchapp/ui/learning_panel.py", '"\\n".join(f"- {md_escape(line)}" for line in lines)'):
        "each line md_escape'd",
    ("searchapp/ui/labelling.py", "label"): "the constant button names (Yes, No, Skip, Undo)",
    ("searchapp/ui/pages/clusters.py", 'f"{used}; map: {result.projection.upper()}; computed in "'):
        "the clustering's own parameters (numbers, method names)",
    ("searchapp/ui/pages/clusters.py",
     'f"**Distinctive terms:** {md_escape(\', \'.join(info[\'terms\']))}{merged}  \\n"'):
        "merged and central are joined from md_escape'd terms and texts",
    ("searchapp/ui/pages/duplicates.py", 'f"▲ {marker}"'): "marker escapes the model's name",
    ("searchapp/ui/pages/jobs.py", '" · ".join(times)'): "ago() of the job's times",
    ("searchapp/ui/pages/label.py", 'f"{SHORTCUTS_NOTE} · {session_line(session)}"'):
        "counts of the session",
    ("searchapp/ui/pages/label.py", "list(KINDS)"): "the constant kinds of labelling",
    ("searchapp/ui/pages/models.py", "role"): "the constant roles of a column",
    ("searchapp/ui/pages/models.py", 'f"Why {data.objective}: {AUTO_REASONS[data.kind]}"'):
        "the objective is one of the app's own names",
    ("searchapp/ui/results.py", "head"):
        "built from md_escape'd file names and snippets (tested in test_markup_escape.py)",
    ("searchapp/ui/results.py", "details_text(hit)"):
        "md_escape'd id and metadata (tested in test_markup_escape.py)",
    ("searchapp/ui/results.py", 'f"{note}.  \\n{extra}" if extra else note'):
        "the app's note and the ranks",
    ("searchapp/ui/results.py", 'score + (" · weak match" if weak else "")'): "a number",
    ("searchapp/ui/results.py", "action.help"): "the actions' constant help",
    ("searchapp/ui/results.py", "action.label"): "the actions' constant names",
    ("searchapp/ui/search_view.py", 'f"Results {first + 1:,}–{end:,}. {total}. {note}"'):
        "counts and the app's note",
}


def markdown_arguments(call: ast.Call) -> list[ast.expr]:
    """The arguments of ``call`` that Streamlit draws as Markdown."""
    if not isinstance(call.func, ast.Attribute):
        return []
    name = call.func.attr
    receiver = call.func.value
    if isinstance(receiver, ast.Name) and receiver.id in OTHER_RECEIVERS:
        return []
    if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) \
            and receiver.func.id in OTHER_RECEIVERS:
        return []
    found: list[ast.expr] = []
    if name in BODY_CALLS:
        found += call.args if name == "write" else call.args[:1]
    if name in LABEL_CALLS and name != "page_link":  # page_link's first is the page
        found += call.args[:1]
    if name in OPTION_CALLS and len(call.args) > 1:
        found.append(call.args[1])
    if name == "progress" and len(call.args) > 1:
        found.append(call.args[1])
    if name in BODY_CALLS | LABEL_CALLS | {"progress"}:
        found += [k.value for k in call.keywords if k.arg in MARKDOWN_KEYWORDS]
        if name in OPTION_CALLS:
            found += [k.value for k in call.keywords if k.arg == "options"]
    else:
        found += [k.value for k in call.keywords if k.arg in {"help"}]
    return found


class Scope:
    """The assignments of one function (or the module), to follow a local variable."""

    def __init__(self, node: ast.AST):
        self.assigned: dict[str, list[ast.expr | None]] = {}
        for child in ast.walk(node):
            if isinstance(child, ast.Assign):
                for target in child.targets:
                    self._bind(target, child.value)
            elif isinstance(child, ast.AnnAssign | ast.AugAssign) and child.value is not None:
                self._bind(child.target, child.value if isinstance(child, ast.AnnAssign)
                           else None)
            elif isinstance(child, ast.For | ast.comprehension | ast.withitem):
                target = child.optional_vars if isinstance(child, ast.withitem) \
                    else child.target
                if target is not None:
                    self._bind(target, None)
            elif isinstance(child, ast.NamedExpr):
                self._bind(child.target, child.value)

    def _bind(self, target: ast.expr, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            self.assigned.setdefault(target.id, []).append(value)
        elif isinstance(target, ast.Tuple | ast.List):
            whole = value if isinstance(value, ast.Call) else None  # a == two_cosines(..)
            for element in target.elts:
                self._bind(element, whole)


def is_own_text(node: ast.expr | None, scope: Scope, seen: frozenset = frozenset()) -> bool:
    """Whether ``node`` can only be text the app wrote itself (or escaped user text)."""
    if node is None:
        return False
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Attribute):  # a module's constant, an id or a state
        return node.attr.isupper() or node.attr in OWN_NAMES
    if isinstance(node, ast.Name):
        if node.id.isupper() or node.id in OWN_NAMES:
            return True
        values = scope.assigned.get(node.id)
        if not values or node.id in seen:
            return False
        return all(is_own_text(v, scope, seen | {node.id}) for v in values)
    if isinstance(node, ast.JoinedStr):
        return all(isinstance(part, ast.Constant) or (
            part.format_spec is not None and part.conversion == -1)
            or (part.conversion == -1 and is_own_text(part.value, scope, seen))
            for part in node.values)
    if isinstance(node, ast.Call):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else \
            func.attr if isinstance(func, ast.Attribute) else ""
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id.isupper():  # HELP.get(kind, ...): a table of our words
            return True
        if isinstance(func, ast.Attribute) and func.attr in {"upper", "lower", "strip"}:
            return is_own_text(func.value, scope, seen)
        return name in ESCAPES | OWN_TEXT
    if isinstance(node, ast.BinOp):
        return is_own_text(node.left, scope, seen) and is_own_text(node.right, scope, seen)
    if isinstance(node, ast.IfExp):
        return is_own_text(node.body, scope, seen) and is_own_text(node.orelse, scope, seen)
    if isinstance(node, ast.BoolOp):
        return all(is_own_text(v, scope, seen) for v in node.values)
    if isinstance(node, ast.List | ast.Tuple):
        return all(is_own_text(e, scope, seen) for e in node.elts)
    if isinstance(node, ast.Subscript):  # a table of the app's own words: HELP[kind]
        return isinstance(node.value, ast.Name) and node.value.id.isupper()
    return False


def unescaped(path: Path) -> list[tuple[int, str]]:
    """(line, argument) of every Markdown argument in ``path`` that may carry user text."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    out = []
    scopes = [tree, *(n for n in ast.walk(tree)
                      if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))]
    for node in scopes:
        scope = Scope(node)
        body = node.body
        for call in (c for stmt in body for c in ast.walk(stmt) if isinstance(c, ast.Call)):
            if node is tree and _inside_function(tree, call):
                continue
            for argument in markdown_arguments(call):
                if not is_own_text(argument, scope):
                    out.append((call.lineno, ast.get_source_segment(source, argument)))
    return sorted(set(out))


def _inside_function(tree: ast.Module, call: ast.Call) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and \
                node.lineno <= call.lineno <= (node.end_lineno or node.lineno):
            return True
    return False


def test_no_page_renders_user_text_as_markdown_unescaped():
    found = []
    for path in SOURCES:
        relative = path.relative_to(REPO).as_posix()
        found += [f"{relative}:{line}: {text}" for line, text in unescaped(path)
                  if (relative, text.splitlines()[0]) not in REVIEWED]
    assert found == [], ("Markdown drawn from text that may be a user's: pass it through "
                         "md_escape (searchapp.reporting), or add it to REVIEWED with the "
                         "reason it is the app's own:\n" + "\n".join(found))


def test_every_reviewed_exception_still_exists():
    for relative, text in REVIEWED:
        assert (REPO / relative).exists() and text in (REPO / relative).read_text(), \
            f"{relative}: {text!r} is gone; drop it from REVIEWED"


def test_the_guard_sees_the_guide_page_bug():
    """The guard fails on what the Guide page did (an address parameter in st.error)."""
    tree = ast.parse('wanted = st.query_params.get("topic")\n'
                     'st.error(f"The guide has no page {wanted!r}.")\n'
                     'st.error(f"No page {md_escape(wanted)}, {len(x):,} pages.")\n'
                     'st.button(label, help=str(path))\n')
    calls = [c for c in ast.walk(tree) if isinstance(c, ast.Call)
             and isinstance(c.func, ast.Attribute) and c.func.attr in {"error", "button"}]
    scope = Scope(tree)
    verdicts = [[is_own_text(a, scope) for a in markdown_arguments(c)] for c in calls]
    assert verdicts == [[False], [True], [False, False]]

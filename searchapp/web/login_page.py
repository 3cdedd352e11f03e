"""The login page: one plain HTML form, nothing fetched from anywhere, no script.

Its style is inline and allowed by its hash in the page's Content-Security-Policy,
which forbids everything else (scripts, images, fonts, frames, other form
targets). Messages and the ``next`` path are HTML-escaped.

Example:
    >>> body = render(message="Wrong password. Try again.", next_path="/search")
    >>> 'name="password"' in body and "Wrong password. Try again." in body
    True
    >>> "<script" in render(message="<script>x</script>")
    False
"""

from __future__ import annotations

import base64
import hashlib
import html

STYLE = """
body { font-family: system-ui, sans-serif; background: #f6f7f9; color: #1f2328; margin: 0; }
main { max-width: 22rem; margin: 12vh auto; background: #fff; padding: 2rem;
       border-radius: 0.75rem; box-shadow: 0 1px 4px rgba(0, 0, 0, 0.12); }
h1 { font-size: 1.6rem; margin: 0 0 1.25rem; }
label { display: block; font-size: 0.9rem; margin-bottom: 0.35rem; }
input[type=password] { width: 100%; box-sizing: border-box; padding: 0.55rem;
       font-size: 1rem; border: 1px solid #c4c8cf; border-radius: 0.4rem; }
button { margin-top: 1rem; width: 100%; padding: 0.6rem; font-size: 1rem; border: 0;
         border-radius: 0.4rem; background: #ff4b4b; color: #fff; cursor: pointer; }
p.message { background: #fdecea; color: #7d1a14; padding: 0.6rem; border-radius: 0.4rem; }
p.note { background: #eef4fb; color: #18406b; padding: 0.6rem; border-radius: 0.4rem; }
"""
STYLE_HASH = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src 'sha256-{STYLE_HASH}'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)


def render(message: str | None = None, next_path: str = "/", note: str | None = None) -> str:
    """The login page's HTML: ``message`` as an error (wrong password, wait), ``note`` as
    information (logged out), the form posting back to ``/login`` with ``next_path``."""
    parts = []
    if note:
        parts.append(f'<p class="note" role="status">{html.escape(note)}</p>')
    if message:
        parts.append(f'<p class="message" role="alert">{html.escape(message)}</p>')
    notices = "\n    ".join(parts)
    return f"""<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="referrer" content="same-origin">
  <title>searchapp · log in</title>
  <style>{STYLE}</style>
</head>
<body>
  <main>
    <h1>searchapp</h1>
    {notices}
    <form method="post" action="/login">
      <input type="hidden" name="next" value="{html.escape(next_path, quote=True)}">
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password"
             required autofocus>
      <button type="submit">Log in</button>
    </form>
  </main>
</body>
</html>
"""

"""The CLI's output piped into a reader that stops early (``| head``) ends quietly."""

from __future__ import annotations

import os
import subprocess
import sys

from searchapp.jobs import queue


def test_output_piped_into_head_ends_without_a_traceback(app):
    for i in range(3000):  # a listing longer than the pipe's buffer
        queue.enqueue(app.db, "embed", {"corpus": f"c{i}"})
    lister = subprocess.Popen([sys.executable, "-m", "searchapp", "jobs", "--limit", "3000"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env={**os.environ})
    assert lister.stdout.readline().startswith(b"ID")
    lister.stdout.close()  # the reader is gone, as after `head -1`
    err = lister.stderr.read().decode()
    assert lister.wait(timeout=120) == 0, err
    assert "Traceback" not in err and err == ""

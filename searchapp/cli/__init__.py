"""The command line, one module per command group; every command calls the core's services.

- ``main``: the parser assembled from the groups and the one error boundary.
- ``corpora`` (ingest, embed, corpora), ``search``, ``jobs`` (jobs, worker),
  ``duplicates`` (duplicates, check, calibrate), ``judge`` (add, remove, list,
  export, import, next, groups), ``clusters``, ``models``
  (finetune, evaluate, models), ``passwords`` (hash-password): each command's
  arguments beside its handler.
- ``output``: JSON, tables, progress, files written atomically.
- ``common``: the App a command works on, running a job to its end here.

Example:
    $ searchapp ingest questions.csv --corpus faq --wait
    $ searchapp search --corpus faq "how do I reset my password" -k 3 --json
"""

from searchapp.cli.main import main

__all__ = ["main"]

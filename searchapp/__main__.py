"""``python -m searchapp`` is the CLI (the worker is started this way too)."""

from searchapp.cli import main

raise SystemExit(main())

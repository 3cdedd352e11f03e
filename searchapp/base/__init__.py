"""The floor every layer stands on: small, dependency-free helpers for secrets
(``passwords``), files only the app may read (``private_files``), the data folder's
lock (``data_lock``) and a request's stage times (``timing``).

Nothing here imports another part of searchapp except ``errors``; every layer may import it.
"""

"""Saved searches that watch: a search kept with its query, mode, k and filters, checked
after each ingest against the documents that arrived, its news counted ("N new"), shown
first when it is opened, and sent where its owner asked (a webhook, a desktop
notification, an Atom feed at a private address).

- ``service``: save, list, open (the look that moves the watermark), run, remove.
- ``check``: the ``saved-check`` job (``job_kinds``, ``job_payloads``) a corpus' saved
  searches are checked by, queued after each ``embed`` and ``ingest`` job that succeeded
  (a hook of ``jobs.after``, registered in ``job_kinds``).
- ``news``: the new hits as the webhook's JSON; ``sender``: notifications sent off the
  job's thread by a small bounded sender, their outcome recorded; ``webhook``: the POST
  (timeout, retries, redirects only to the same origin); ``desktop``: notify-send or
  osascript where a desktop session is there; ``feed``: the Atom feed.
"""

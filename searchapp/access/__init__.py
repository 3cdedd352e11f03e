"""Who may use the JSON API: keys created, listed, revoked and checked (``keys``).

A service like the others: the CLI (``searchapp keys``), the Settings page and
the web door (``searchapp.web``, which checks ``Authorization: Bearer KEY`` on
every API request) call the same functions.
"""

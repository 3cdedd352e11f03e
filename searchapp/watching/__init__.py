"""Watched folders: corpora that follow folders on disk (add, list, pause, the keeper)."""

"""Persistence: SQLAlchemy ORM, engine set-up and queries. Never imports torch."""

"""searchapp: self-hosted semantic search on a Sentence-BERT style siamese encoder.

The core (everything outside ``searchapp.ui``) never imports streamlit, and
``searchapp.store`` never imports torch, so the CLI, the worker and the tests
run the same functions the browser app calls.
"""

__version__ = "0.1.0"

"""Text to vectors: the siamese encoder, its speed path, passages and the model registry.

- ``encoder``: ``SiameseEncoder``, a Hugging Face model with pooling and normalisation.
- ``speed``: which precision and batch path this CPU or GPU runs fastest, checked at load.
- ``passages``: long texts split into overlapping passages that fit the model's window.
- ``models``: where models live (bundled, fine-tuned, user folders), their cards and loading.

Below the vectors and above the store: nothing here knows corpora, indexes or jobs.
"""

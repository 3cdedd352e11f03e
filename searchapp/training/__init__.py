"""Training service: fine-tuning the siamese encoder on the user's pairs, as a job.

- ``data``: labelled files read into pairs or triplets, the objective chosen by the data.
- ``losses``: the paper's objectives (softmax, cosine, triplet) and later ones (MNRL,
  contrastive, CoSENT, AnglE).
- ``trainer``: the training loop (warm-up, dev checks, best state kept, resumable).
- ``checkpoint``, ``averaging``: safe checkpoints and weight averaging.
- ``task``: the ``finetune`` job: train, save the model folder, register it.
- ``learn_job``, ``adapt_job``: the ``learn`` job (a corpus' judgements) and the ``adapt``
  job (its text), both run by ``job_steps.run_model_job`` (resumable steps, the model
  saved with its ``card``, then judged by ``verdict``).
"""

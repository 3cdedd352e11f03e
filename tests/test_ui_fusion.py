"""The Evaluate page's fusion panel through ``AppTest`` on a real database: the fusion in use,
the fit button queueing a ``fit-fusion`` job, its outcome, and the fusion a run used."""

from __future__ import annotations

from searchapp.jobs import queue
from searchapp.jobs.worker import run_until_done
from searchapp.reporting import md_escape
from tests.test_ui_learning import corpus, page, texts  # noqa: F401 - corpus is a fixture


def test_the_evaluate_page_shows_the_fusion_and_fits_it(corpus):  # noqa: F811
    app = corpus
    at = page("evaluate").run()
    assert not at.exception
    assert "**Hybrid fusion** · default: semantic weight 3 (1 with a digit), RRF k 10" in texts(at)
    [fit] = [b for b in at.button if b.label == "Fit the fusion to the judged queries"]
    fit.click().run()
    job = queue.recent(app.db)[0]
    assert (job.kind, job.payload["corpus"]) == ("fit-fusion", "topics")
    assert run_until_done(app, job.id).status == "succeeded"
    at.run()
    assert not at.exception
    sentence = queue.get(app.db, job.id).result["sentence"]
    assert md_escape(sentence) in texts(at) and "held-out hybrid nDCG@10" in sentence
    [evaluate] = [b for b in at.button if b.label == "Evaluate"]
    evaluate.click().run()
    assert run_until_done(app, queue.recent(app.db)[0].id).status == "succeeded"
    at.run()
    assert "Hybrid fusion: " in texts(at)

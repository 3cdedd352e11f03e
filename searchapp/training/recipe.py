"""How the ``learn`` job fine-tunes on query judgements: its levers, each one switchable.

A few hundred judged queries moved a benchmark's nDCG@10 by under 2 points with
the first recipe (batch 16, about 60 steps, semantic hard negatives, whole
documents as positives). The levers below are what retrieval fine-tuning does
to learn more from the same judgements; ``benchmarks/learning_ir.py`` measures
them on separate test queries, and only what measurably helped would be on by
default. On Debian's PostgreSQL manual none did (300 judged queries: test hybrid
nDCG@10 73.79 with the first recipe, 72.52 with every lever, 71.93 with lexical
negatives and passages), so the default stays the first recipe; every lever
(``all``) makes the job 3-5 times faster (7.3 against 33.1 minutes on 2 cores)
for a gain within the same intervals, and is there to choose.

- ``cached``: in-batch negatives over large batches (``BIG_BATCH``) with the
  gradient-cache trick (``Trainer._cached_backward``) where memory needs it
  (``cache_size``), so the memory of a large batch is that of a mini-batch;
  the same training budget as before (``MIN_TRIPLETS`` examples seen: on 2 CPU
  cores compute is the limit) in more epochs where the judgements are few, with
  early stopping on the dev part of the training judgements.
- ``lexical``: hard negatives from the lexical (BM25) list as well as the
  semantic one, through the same false-negative guard: a document that shares
  the query's words but does not answer it is the mistake hybrid search makes.
- ``passages``: for long documents, the judged document's best passage (the
  one search would score) as the positive, and the negative's best passage as
  the negative, instead of the document's first 256 tokens.

Example:
    >>> recipe_named("all").levers()
    ['cached', 'lexical', 'passages']
    >>> recipe_named(None).levers()     # the default: the first recipe, measured best
    []
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from searchapp.errors import TrainingDataError

BIG_BATCH = 64  # examples per step (in-batch negatives: 2·64 − 1 per anchor)
MINI_BATCH = 32  # texts per forward pass inside a cached step
PLAIN_TEXTS_CPU = 256  # on the CPU a step of up to this many texts fits in memory uncached
MIN_TRIPLETS = 960  # the training budget: epochs until about this many examples were seen
MAX_EPOCHS = 8  # with early stopping
EVALS_PER_EPOCH = 2  # dev checks per epoch (early stopping needs a few even in 2 epochs)
PATIENCE = 2  # dev evaluations without a gain before training stops
CACHED_LR = 3e-5  # fewer, larger steps than batch 16's 2e-5


def cache_size(batch: int, columns: int, device_type: str) -> int:
    """Texts per forward pass of the gradient cache; 0: the step is one plain pass.

    On a GPU the batch's activations are what limits it, so every large step is
    cached; on the CPU memory is plentiful and the cache's second forward pass
    costs a third more compute, so only steps of more than ``PLAIN_TEXTS_CPU`` are.

    Example:
        >>> cache_size(64, 3, "cuda"), cache_size(64, 3, "cpu"), cache_size(128, 3, "cpu")
        (32, 0, 32)
    """
    texts = batch * columns
    if device_type == "cuda" and texts > MINI_BATCH:
        return MINI_BATCH
    return MINI_BATCH if texts > PLAIN_TEXTS_CPU else 0


@dataclass(frozen=True)
class Recipe:
    """The levers of a learning job (see the module docstring)."""

    cached: bool = True
    lexical: bool = True
    passages: bool = True

    def levers(self) -> list[str]:
        return [name for name, on in asdict(self).items() if on]

    def as_dict(self) -> dict:
        return asdict(self)


RECIPES = {
    "all": Recipe(),
    "before": Recipe(cached=False, lexical=False, passages=False),
    "cached": Recipe(cached=True, lexical=False, passages=False),
    "lexical": Recipe(cached=False, lexical=True, passages=False),
    "passages": Recipe(cached=False, lexical=False, passages=True),
}
DEFAULT = "before"  # see the module docstring: no lever measurably helped quality


def recipe_named(name: str | dict | None) -> Recipe:
    """A recipe by name (``RECIPES``), from a job payload's dict, or the default for None.

    Levers joined by ``+`` name a recipe of just those.

    Example:
        >>> recipe_named({"cached": False, "lexical": True, "passages": True}).cached
        False
        >>> recipe_named("lexical+passages").levers()
        ['lexical', 'passages']
    """
    if name is None:
        return RECIPES[DEFAULT]
    if isinstance(name, dict):
        return Recipe(**{k: bool(v) for k, v in name.items() if k in Recipe.__annotations__})
    if "+" in name and set(name.split("+")) <= set(Recipe.__annotations__):
        return Recipe(**{k: k in name.split("+") for k in Recipe.__annotations__})
    if name not in RECIPES:
        raise TrainingDataError(f"Unknown recipe {name!r}; use one of: {', '.join(RECIPES)}, "
                                f"or levers joined by '+' ({'+'.join(Recipe.__annotations__)}).")
    return RECIPES[name]

"""Training objectives for the siamese encoder, one idea per class.

Every loss is a ``torch.nn.Module`` called as ``loss(embeddings, labels)``:
``embeddings`` is a list with one (batch, dim) tensor per text column of the
batch (the same encoder produced all of them: that is the siamese part) and
``labels`` a (batch,) tensor, or None for objectives without labels.

| objective     | columns                  | labels              | from                       |
|---------------|--------------------------|---------------------|----------------------------|
| ``softmax``   | u, v                     | class ids (long)    | SBERT paper, NLI           |
| ``cosine``    | u, v                     | score in [0, 1]     | SBERT paper, STSb          |
| ``triplet``   | anchor, positive, neg.   | none                | SBERT paper, Wikipedia     |
| ``mnrl``      | anchor, positive (, neg) | none                | Henderson et al. 2017      |
| ``contrastive`` | u, v                   | 0 / 1               | Hadsell et al. 2006        |
| ``cosent``    | u, v                     | score (any scale)   | Su 2022 (CoSENT)           |
| ``angle``     | u, v                     | score (any scale)   | Li & Li 2024 (AnglE)       |

Example:
    >>> u, v = torch.randn(4, 8), torch.randn(4, 8)
    >>> loss = CosineSimilarityLoss()
    >>> float(loss([u, u], torch.ones(4))) < 1e-6       # identical pairs, gold 1: no loss
    True
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from searchapp.errors import InvalidParameterError

CONCAT_PARTS = ("u", "v", "|u-v|", "u*v")
PAPER_CONCAT = ("u", "v", "|u-v|")


class SoftmaxLoss(nn.Module):
    """The paper's classification objective: softmax(W · (u, v, |u−v|)) with cross-entropy.

    W ∈ R^{(parts·dim) × num_labels} is trained with the encoder and thrown away
    afterwards. ``concat`` picks the parts of the feature vector, as in the
    paper's ablation (|u−v| matters most; u*v is an optional extra).

    Shapes: u, v (batch, dim); labels (batch,) long in [0, num_labels).

    Example:
        >>> loss = SoftmaxLoss(dim=8, num_labels=3)
        >>> loss.classifier.in_features
        24
        >>> loss([torch.randn(2, 8), torch.randn(2, 8)], torch.tensor([0, 2])).shape
        torch.Size([])
    """

    def __init__(self, dim: int, num_labels: int, concat: tuple[str, ...] = PAPER_CONCAT):
        super().__init__()
        unknown = [p for p in concat if p not in CONCAT_PARTS]
        if unknown or not concat:
            raise InvalidParameterError(
                f"Unknown concatenation part(s) {unknown or '(none)'}; "
                f"use some of: {', '.join(CONCAT_PARTS)}.")
        if num_labels < 2:
            raise InvalidParameterError("The classification objective needs at least 2 labels.")
        self.concat = tuple(concat)
        self.classifier = nn.Linear(len(concat) * dim, num_labels)

    def features(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """The concatenated pair features (batch, parts·dim)."""
        parts = {"u": lambda: u, "v": lambda: v, "|u-v|": lambda: (u - v).abs(),
                 "u*v": lambda: u * v}
        return torch.cat([parts[p]() for p in self.concat], dim=1)

    def logits(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Class scores (batch, num_labels); the classifier runs in float32."""
        return self.classifier(self.features(u, v).float())

    def forward(self, embeddings: list[torch.Tensor], labels: torch.Tensor) -> torch.Tensor:
        u, v = embeddings[0], embeddings[1]
        return F.cross_entropy(self.logits(u, v), labels.long())


class CosineSimilarityLoss(nn.Module):
    """The paper's regression objective: MSE between cosine(u, v) and the gold score.

    Gold scores are expected in [0, 1] (``data.py`` rescales them; [−1, 1] works too).

    Shapes: u, v (batch, dim); labels (batch,) float.
    """

    def forward(self, embeddings: list[torch.Tensor], labels: torch.Tensor) -> torch.Tensor:
        cosine = F.cosine_similarity(embeddings[0].float(), embeddings[1].float(), dim=1)
        return F.mse_loss(cosine, labels.float())


class TripletLoss(nn.Module):
    """max(‖a−p‖ − ‖a−n‖ + margin, 0), Euclidean distance, margin 1 (the paper's ε).

    Shapes: anchor, positive, negative (batch, dim); no labels.
    """

    def __init__(self, margin: float = 1.0):
        super().__init__()
        self.margin = margin

    def forward(self, embeddings: list[torch.Tensor], labels: torch.Tensor | None = None
                ) -> torch.Tensor:
        a, p, n = (e.float() for e in embeddings[:3])
        d_pos = F.pairwise_distance(a, p)  # (batch,)
        d_neg = F.pairwise_distance(a, n)  # (batch,)
        return F.relu(d_pos - d_neg + self.margin).mean()


class MultipleNegativesRankingLoss(nn.Module):
    """In-batch negatives: each anchor must pick its own positive among all in the batch.

    Cross-entropy over scale · cosine(anchor_i, candidate_j) where candidates are
    the batch's positives (and hard negatives, if a third column is given); the
    right answer for anchor i is candidate i. Needs positive pairs only.

    Shapes: anchors, positives[, negatives] (batch, dim); no labels.
    """

    def __init__(self, scale: float = 20.0):
        super().__init__()
        self.scale = scale

    def forward(self, embeddings: list[torch.Tensor], labels: torch.Tensor | None = None
                ) -> torch.Tensor:
        anchors = F.normalize(embeddings[0].float(), dim=1)  # (batch, dim)
        candidates = F.normalize(torch.cat([e.float() for e in embeddings[1:]]), dim=1)
        scores = self.scale * anchors @ candidates.T  # (batch, batch · (columns − 1))
        target = torch.arange(len(anchors), device=anchors.device)
        return F.cross_entropy(scores, target)


class OnlineContrastiveLoss(nn.Module):
    """Contrastive loss on the batch's hard cases, for pairs labelled duplicate (1) / not (0).

    Distance is 1 − cosine. Positives farther apart than the closest negative
    and negatives closer than the farthest positive are the hard ones; the loss
    pulls hard positives together (d²) and pushes hard negatives past the
    margin (max(margin − d, 0)²). With no hard case in a batch, all pairs count.

    Shapes: u, v (batch, dim); labels (batch,) in {0, 1}.
    """

    def __init__(self, margin: float = 0.5):
        super().__init__()
        self.margin = margin

    def forward(self, embeddings: list[torch.Tensor], labels: torch.Tensor) -> torch.Tensor:
        distance = 1 - F.cosine_similarity(embeddings[0].float(), embeddings[1].float())
        pos, neg = distance[labels == 1], distance[labels == 0]
        hard_pos = pos[pos > neg.min()] if len(neg) else pos
        hard_neg = neg[neg < pos.max()] if len(pos) else neg
        if len(hard_pos) + len(hard_neg) == 0:  # an easy batch: keep a gradient anyway
            hard_pos, hard_neg = pos, neg
        return hard_pos.pow(2).sum() + F.relu(self.margin - hard_neg).pow(2).sum()


class CoSENTLoss(nn.Module):
    """CoSENT (Su 2022): rank the batch's pairs by cosine in the order of their gold scores.

    log(1 + Σ_{gold_i > gold_j} exp(scale · (cos_j − cos_i))). Only the order of
    the scores matters, which is what Spearman correlation measures, and the
    loss sees every pair of pairs in the batch instead of each pair alone.

    Shapes: u, v (batch, dim); labels (batch,) float, any scale.
    """

    def __init__(self, scale: float = 20.0):
        super().__init__()
        self.scale = scale

    def forward(self, embeddings: list[torch.Tensor], labels: torch.Tensor) -> torch.Tensor:
        cosine = self.scale * F.cosine_similarity(embeddings[0].float(), embeddings[1].float())
        return _rank_loss(cosine, labels)


def _rank_loss(similarity: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
    """log(1 + Σ_{gold_i > gold_j} exp(sim_j − sim_i)): the CoSENT ranking term.

    Shapes: similarity, gold (batch,); similarity already multiplied by its scale.
    """
    diff = similarity[None, :] - similarity[:, None]  # (batch, batch): sim_j − sim_i
    wrong_order = gold[:, None] > gold[None, :]  # gold_i > gold_j
    diff = diff - (~wrong_order).float() * 1e12  # pairs not in that order drop out
    zero = torch.zeros(1, device=diff.device)  # the "1 +" inside the log
    return torch.logsumexp(torch.cat([zero, diff.flatten()]), dim=0)


def angle_similarity(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """AnglE's similarity: each vector read as complex numbers, real half + i·imaginary half.

    Dividing z = a + bi by w = c + di and scaling by |w|/|z| leaves the angle
    difference; summing its real and imaginary parts gives
    (⟨a, c⟩ + ⟨b, d⟩ + ⟨b, c⟩ − ⟨a, d⟩) / (|z| |w|): the cosine plus a rotated
    term whose gradient does not vanish where the cosine saturates. Its absolute
    value is the similarity.

    Shapes: u, v (batch, dim) with dim even → (batch,).
    """
    a, b = u.float().chunk(2, dim=1)
    c, d = v.float().chunk(2, dim=1)
    dot = (a * c + b * d + b * c - a * d).sum(dim=1)
    return (dot / (u.float().norm(dim=1) * v.float().norm(dim=1)).clamp_min(1e-12)).abs()


class AnglELoss(nn.Module):
    """AnglE (Li & Li 2024): the CoSENT ranking on cosine, on angle and with in-batch negatives.

    loss = w_cos · rank(cosine) + w_angle · rank(angle similarity) + w_ibn · ibn,
    where rank() is CoSENT's term and ibn asks each pair scored in the top fifth of
    the scale (``top``; "mostly equivalent" on STS) to find its partner among all
    2·batch − 1 other texts of the batch, as the paper's in-batch objective does
    for its positives. Weights 1 and scale 20 follow the AnglE paper's STS runs.

    Shapes: u, v (batch, dim) with dim even; labels (batch,) float, any scale.
    """

    def __init__(self, scale: float = 20.0, w_cos: float = 1.0, w_angle: float = 1.0,
                 w_ibn: float = 1.0, top: float = 0.8):
        super().__init__()
        self.scale, self.top = scale, top
        self.w_cos, self.w_angle, self.w_ibn = w_cos, w_angle, w_ibn

    def forward(self, embeddings: list[torch.Tensor], labels: torch.Tensor) -> torch.Tensor:
        u, v = embeddings[0].float(), embeddings[1].float()
        labels = labels.float()
        loss = self.w_cos * _rank_loss(self.scale * F.cosine_similarity(u, v), labels)
        loss = loss + self.w_angle * _rank_loss(self.scale * angle_similarity(u, v), labels)
        return loss + self.w_ibn * self._in_batch_negatives(u, v, labels)

    def _in_batch_negatives(self, u: torch.Tensor, v: torch.Tensor, labels: torch.Tensor
                            ) -> torch.Tensor:
        low, high = labels.min(), labels.max()
        if high == low:  # one score for the whole batch: no pair stands out as a positive
            return labels.new_zeros(())
        positive = labels >= low + self.top * (high - low)
        texts = F.normalize(torch.cat([u, v]), dim=1)  # (2·batch, dim): u rows, then v rows
        scores = self.scale * texts @ texts.T
        scores = scores - torch.eye(len(texts), device=texts.device) * 1e12  # not itself
        n = len(u)
        first = torch.nonzero(positive).flatten()
        rows = torch.cat([first, first + n])
        partner = (rows + n) % (2 * n)  # u_i ↔ v_i
        return F.cross_entropy(scores[rows], partner)


class MixedLoss(nn.Module):
    """Query judgements and judged pairs in one training: MNRL and online contrastive loss.

    A row labelled −1 is a triplet (query, relevant document, hard negative) for
    MultipleNegativesRankingLoss; a row labelled 0 or 1 is a judged pair (not
    duplicate / duplicate) for OnlineContrastiveLoss on its first two columns.
    A batch may hold both kinds: each kind's loss on its own rows, summed.

    Shapes: three (batch, dim) columns (the third unused by pair rows); labels (batch,).

    Example:
        >>> u = torch.nn.functional.normalize(torch.randn(4, 8), dim=1)
        >>> float(MixedLoss()([u, u, -u], torch.tensor([-1, -1, 1, 0]))) > 0
        True
    """

    def __init__(self):
        super().__init__()
        self.triplets, self.pairs = MultipleNegativesRankingLoss(), OnlineContrastiveLoss()

    def forward(self, embeddings: list[torch.Tensor], labels: torch.Tensor) -> torch.Tensor:
        triplet = labels < 0
        loss = embeddings[0].new_zeros(())
        if triplet.any():
            loss = loss + self.triplets([e[triplet] for e in embeddings])
        if (~triplet).any():
            loss = loss + self.pairs([e[~triplet] for e in embeddings[:2]], labels[~triplet])
        return loss


OBJECTIVES = ("softmax", "cosine", "triplet", "mnrl", "contrastive", "cosent", "angle")
MIXED = "mixed"  # judgements of both kinds (searchapp.training.learn_job); not for files
SCORED_OBJECTIVES = ("cosine", "cosent", "angle")  # pairs with a similarity score


def make_loss(objective: str, dim: int, num_labels: int = 3,
              concat: tuple[str, ...] = PAPER_CONCAT) -> nn.Module:
    """The loss module for an objective name.

    Example:
        >>> type(make_loss("cosent", dim=8)).__name__
        'CoSENTLoss'
    """
    if objective == "softmax":
        return SoftmaxLoss(dim, num_labels, concat)
    if objective == "angle" and dim % 2:
        raise InvalidParameterError(
            f"The angle objective splits each vector into two halves; this model's vectors "
            f"have an odd dimension ({dim}). Use cosent instead.")
    simple = {"cosine": CosineSimilarityLoss, "triplet": TripletLoss,
              "mnrl": MultipleNegativesRankingLoss, "contrastive": OnlineContrastiveLoss,
              "cosent": CoSENTLoss, "angle": AnglELoss, MIXED: MixedLoss}
    if objective not in simple:
        raise InvalidParameterError(
            f"Unknown objective {objective!r}; use one of: {', '.join(OBJECTIVES)}.")
    return simple[objective]()

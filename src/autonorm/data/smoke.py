"""Offline stand-in datasets for the smoke preset (the embedded default config).

Why: the smoke DAG must run end to end on a laptop with no network in
seconds, yet exercise every code path of the paper's pipeline (vision incl.
corruptions and rotation, token tagging, sentence classification, tabular
regression) on data that is *learnable*, so a broken model or trainer shows
up as chance-level metrics.  Every output says ``standin: true`` and the
description says what the data is; none of these numbers may be compared
with the paper.

* smoke_digits: scikit-learn's bundled 8x8 digits (real data), 1 channel,
  0..16 rescaled to 0..255, seeded train/val/test split (``val_fraction``, ``test_fraction``).
* smoke_shapes32: generated 32x32 RGB, 8 classes (circle, square, triangle,
  cross, ring, horizontal stripes, vertical stripes, checkerboard) with random
  position, size, colours, background gradient and pixel noise; 2000/500/500
  images from one seeded generator.  Under the 90-degree rotation horizontal
  and vertical stripes swap, so rotation accuracy drops measurably.
* smoke_pos: sentences sampled from a small probabilistic grammar with
  PTB-style tags; many words are ambiguous (e.g. "watches" NNS/VBZ, "light"
  NN/JJ/VB/VBP, "can" MD/NN), so the tag depends on context.  1500 sentences,
  seeded train/val/test split.
* smoke_sentiment: template movie-review sentences: 55% plain ("the plot was
  dull"), 20% negated ("was not good"), 25% contrast ("A but B", "although
  A , B": the label is B's), so a share of them needs word order.  2000
  sentences, balanced, seeded train/val/test split.
* smoke_diabetes: see tabular.py (scikit-learn's bundled diabetes, real data).
"""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

import numpy as np

from .text import build_sequence_classification, build_token_classification
from .source import DatasetSource
from .storage import split_note, subsample_train, three_way
from .vision import build_vision

SHAPE_CLASSES = ["circle", "square", "triangle", "cross", "ring", "h_stripes", "v_stripes", "checker"]


# =========================================================================== vision
def preprocess_smoke_digits(options: Dict[str, Any]):
    from sklearn.datasets import load_digits
    d = load_digits()
    x = np.round(d.images * (255.0 / 16.0)).clip(0, 255).astype(np.uint8)[:, None]  # [N,1,8,8]
    y = d.target.astype(np.int64)
    tr, va, te = three_way(len(y), float(options.get("val_fraction", 0.1)), float(options.get("test_fraction", 0.2)),
                           int(options.get("split_seed", 0)))
    tr, sub = subsample_train(tr, options, int(options.get("split_seed", 0)))
    splits = {"train": (x[tr], y[tr]), "val": (x[va], y[va]), "test": (x[te], y[te])}
    return build_vision("smoke_digits", splits, [str(i) for i in range(10)], options,
                        {"source": {"sklearn": "load_digits()"}, "split_note": split_note(tr, va, te) + sub})


def generate_shapes32(n: int, seed: int) -> Tuple[np.ndarray, np.ndarray]:
    """n images uint8 [n,3,32,32] and labels; fully vectorised, deterministic for the seed."""
    rng = np.random.default_rng([seed, 32032])
    k = len(SHAPE_CLASSES)
    y = np.arange(n) % k
    rng.shuffle(y)
    size = 32
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float64)
    yy, xx = yy[None], xx[None]
    # Sizes and positions jitter only a little: a 2-layer ViT trained for a few epochs on 2,000 images
    # must be able to learn the shapes (with the full range it stayed near chance).
    r = rng.uniform(8.5, 11.5, n)[:, None, None]
    cy = rng.uniform(14, 18, n)[:, None, None]
    cx = rng.uniform(14, 18, n)[:, None, None]
    dy, dx = yy - cy, xx - cx
    dist = np.sqrt(dy ** 2 + dx ** 2)
    period = rng.integers(4, 7, n)[:, None, None]
    phase = rng.integers(0, 6, n)[:, None, None]
    box = (np.abs(dy) <= r * 0.85) & (np.abs(dx) <= r * 0.85)
    hs = ((np.floor((yy + phase) / period) % 2) == 0)
    vs = ((np.floor((xx + phase) / period) % 2) == 0)
    masks = {
        "circle": dist <= r,
        "square": (np.abs(dy) <= r * 0.8) & (np.abs(dx) <= r * 0.8),
        "triangle": (dy >= -r) & (dy <= r * 0.8) & (np.abs(dx) <= (dy + r) * 0.55),
        "cross": ((np.abs(dy) <= r * 0.3) & (np.abs(dx) <= r)) | ((np.abs(dx) <= r * 0.3) & (np.abs(dy) <= r)),
        "ring": (dist <= r) & (dist >= r * 0.55),
        "h_stripes": box & hs,
        "v_stripes": box & vs,
        "checker": box & (hs ^ vs),
    }
    mask = np.zeros((n, size, size), dtype=bool)
    for i, name in enumerate(SHAPE_CLASSES):
        sel = y == i
        mask[sel] = masks[name][sel]
    bg = rng.uniform(0.0, 1.0, (n, 3))
    fg = rng.uniform(0.0, 1.0, (n, 3))
    close = np.abs(fg - bg).sum(1) < 0.9  # guarantee contrast: push fg away from bg
    fg[close] = np.where(bg[close] > 0.5, bg[close] - 0.5, bg[close] + 0.5).clip(0, 1)
    grad_dir = rng.uniform(0, 2 * np.pi, n)[:, None, None]
    grad = (np.cos(grad_dir) * (xx - 16) + np.sin(grad_dir) * (yy - 16)) / 32 * rng.uniform(0, 0.3, n)[:, None, None]
    img = bg[:, :, None, None] + grad[:, None]
    img = np.where(mask[:, None], fg[:, :, None, None], img)
    img = img + rng.normal(0, 0.06, img.shape)
    return np.round(np.clip(img, 0, 1) * 255).astype(np.uint8), y.astype(np.int64)


def preprocess_smoke_shapes32(options: Dict[str, Any]):
    ntr, nva, nte = (int(options.get(k, d)) for k, d in (("n_train", 2000), ("n_val", 500), ("n_test", 500)))
    x, y = generate_shapes32(ntr + nva + nte, int(options.get("split_seed", 0)))
    tr, sub = subsample_train(np.arange(ntr), options, int(options.get("split_seed", 0)))
    splits = {"train": (x[tr], y[tr]), "val": (x[ntr:ntr + nva], y[ntr:ntr + nva]),
              "test": (x[ntr + nva:], y[ntr + nva:])}
    return build_vision("smoke_shapes32", splits, SHAPE_CLASSES, options,
                        {"source": {"generator": "autonorm.data.smoke.generate_shapes32",
                                    "seed": int(options.get("split_seed", 0))},
                         "split_note": "one seeded generator; first n_train / next n_val / last n_test images" + sub})


# =========================================================================== POS tagging
# Nouns and verbs share most of their words ("watch", "watches", "runs" ...), so a word's most frequent
# tag is right only about three times in four; the rest needs context (a determiner before a noun,
# a pronoun or a modal before a verb), which the transformers must learn and the lexicon cannot.
_SHARED_STEMS = ["watch", "run", "light", "book", "play", "walk", "park", "cook", "dance", "paint", "fish",
                 "plant", "visit", "call", "help", "work"]
_SHARED_S = ["watches", "runs", "lights", "books", "plays", "walks", "parks", "cooks", "dances", "paints",
             "fishes", "plants", "visits", "calls", "helps", "works"]
_LEX = {
    "DT_sg": ["the", "a", "every", "this"], "DT_pl": ["the", "some", "these", "many"],
    "NN": _SHARED_STEMS + ["dog", "cat", "man", "woman", "house", "bird", "car", "garden", "teacher", "can"],
    "NNS": _SHARED_S + ["dogs", "cats", "men", "women", "birds", "cars", "teachers", "cans"],
    "VBZ": _SHARED_S + ["sees", "likes", "eats", "finds"],
    "VBP": _SHARED_STEMS + ["see", "like", "eat", "find"],
    "VBD": ["saw", "liked", "booked", "watched", "ran", "played", "walked", "ate", "found", "cooked",
            "painted", "visited", "called", "helped", "worked"],
    "VB": _SHARED_STEMS + ["see", "like", "eat", "find"],
    "JJ": ["big", "small", "red", "old", "quick", "light", "happy", "quiet", "new"],
    "RB": ["quickly", "slowly", "often", "never", "quietly", "today"],
    "IN": ["in", "on", "near", "with", "under"],
    "PRP_sg": ["he", "she", "it"], "PRP_pl": ["they", "we", "you"],
    "MD": ["can", "will", "must", "should"], "CC": ["and", "but"],
}


def _pos_sentence(rng) -> List[Tuple[str, str]]:
    def pick(key, tag=None):
        w = _LEX[key][rng.integers(len(_LEX[key]))]
        return (w, tag or key.split("_")[0])

    def np_(plural, depth=0):
        out = [pick("DT_pl" if plural else "DT_sg", "DT")] if (not plural or rng.random() < 0.7) else []
        for _ in range(rng.choice([0, 0, 1, 1, 2])):
            out.append(pick("JJ"))
        out.append(pick("NNS" if plural else "NN"))
        if depth == 0 and rng.random() < 0.3:
            out += [pick("IN")] + np_(rng.random() < 0.4, depth + 1)
        return out

    def clause():
        plural = rng.random() < 0.45
        if rng.random() < 0.25:
            subj = [pick("PRP_pl" if plural else "PRP_sg", "PRP")]
        else:
            subj = np_(plural)
        u = rng.random()
        if u < 0.4:
            vp = [pick("VBP" if plural else "VBZ")] + np_(rng.random() < 0.4)
        elif u < 0.65:
            vp = [pick("MD"), pick("VB")] + (np_(rng.random() < 0.4) if rng.random() < 0.7 else [])
        elif u < 0.85:
            vp = [pick("VBD")] + np_(rng.random() < 0.4)
        else:
            vp = [pick("VBP" if plural else "VBZ"), pick("RB")]
        if rng.random() < 0.2:
            vp += [pick("IN")] + np_(rng.random() < 0.4, 1)
        if rng.random() < 0.15:
            vp.append(pick("RB"))
        return subj + vp

    s = clause()
    if rng.random() < 0.25:
        s += [(",", ","), pick("CC")] + clause()
    return s + [(".", ".")]


def generate_pos(n: int, seed: int) -> List[List[Tuple[str, str]]]:
    rng = np.random.default_rng([seed, 505])
    return [_pos_sentence(rng) for _ in range(n)]


def preprocess_smoke_pos(options: Dict[str, Any]):
    seed = int(options.get("split_seed", 0))
    sents = generate_pos(int(options.get("n_sentences", 1500)), seed)
    tr, va, te = three_way(len(sents), float(options.get("val_fraction", 0.15)), float(options.get("test_fraction", 0.15)), seed)
    tr, sub = subsample_train(tr, options, seed)
    split = {"train": [sents[i] for i in tr], "val": [sents[i] for i in va], "test": [sents[i] for i in te]}
    ambiguous = sorted({w for k, v in _LEX.items() for w in v if sum(w in vv for vv in _LEX.values()) > 1})
    return build_token_classification("smoke_pos", split, options,
                                      {"source": {"generator": "autonorm.data.smoke.generate_pos", "seed": seed},
                                       "ambiguous_words": ambiguous, "split_note": split_note(tr, va, te) + sub})


# =========================================================================== sentiment
_SUBJ = [["the", "movie"], ["the", "plot"], ["the", "acting"], ["this", "film"], ["the", "story"],
         ["the", "music"], ["the", "ending"], ["the", "cast"], ["the", "script"], ["the", "director"]]
_VERB = ["was", "is", "seemed", "felt"]
_POS = ["good", "great", "wonderful", "brilliant", "enjoyable", "funny", "moving", "charming", "clever", "fresh"]
_NEG = ["bad", "boring", "awful", "dull", "terrible", "weak", "tedious", "messy", "bland", "silly"]
_INT = [[], [], ["very"], ["really"], ["quite"], ["so"]]


def _sent_clause(rng, polarity: int, p_negated: float) -> List[str]:
    """A clause with the requested polarity (1 positive, 0 negative), negated with probability p_negated."""
    negated = rng.random() < p_negated
    adj_pol = polarity ^ int(negated)
    adj = (_POS if adj_pol else _NEG)[rng.integers(10)]
    words = list(_SUBJ[rng.integers(len(_SUBJ))]) + [_VERB[rng.integers(len(_VERB))]]
    if negated:
        words.append("not" if rng.random() < 0.8 else "never")
    return words + list(_INT[rng.integers(len(_INT))]) + [adj]


# Sentence forms and their shares. Most sentences carry their polarity in the adjective (learnable by
# any model, the teacher's bag of words included); negation and "A but B" contrast make a share of
# them depend on word order, so the transformers have something the bag of words cannot do.
SENTIMENT_FORMS = {"plain": 0.55, "negated": 0.2, "contrast": 0.25}


def generate_sentiment(n: int, seed: int) -> Tuple[List[List[str]], np.ndarray]:
    rng = np.random.default_rng([seed, 777])
    labels = np.arange(n) % 2
    rng.shuffle(labels)
    p_plain, p_neg = SENTIMENT_FORMS["plain"], SENTIMENT_FORMS["negated"]
    texts = []
    for lab in labels:
        u = rng.random()
        if u < p_plain:
            toks = _sent_clause(rng, int(lab), 0.0)
        elif u < p_plain + p_neg:
            toks = _sent_clause(rng, int(lab), 1.0)
        elif rng.random() < 0.6:
            toks = _sent_clause(rng, 1 - int(lab), 0.0) + ["but"] + _sent_clause(rng, int(lab), 0.0)
        else:
            toks = ["although"] + _sent_clause(rng, 1 - int(lab), 0.0) + [","] + _sent_clause(rng, int(lab), 0.0)
        if rng.random() < 0.2:
            toks = [["overall", ","], ["honestly", ","], ["i", "think"]][rng.integers(3)] + toks
        texts.append(toks + ["."])
    return texts, labels.astype(np.int64)


def preprocess_smoke_sentiment(options: Dict[str, Any]):
    seed = int(options.get("split_seed", 0))
    texts, labels = generate_sentiment(int(options.get("n_sentences", 2000)), seed)
    tr, va, te = three_way(len(texts), float(options.get("val_fraction", 0.15)), float(options.get("test_fraction", 0.15)), seed)
    tr, sub = subsample_train(tr, options, seed)
    split_t = {k: [texts[i] for i in idx] for k, idx in (("train", tr), ("val", va), ("test", te))}
    split_y = {k: labels[idx] for k, idx in (("train", tr), ("val", va), ("test", te))}
    return build_sequence_classification("smoke_sentiment", split_t, split_y, ["negative", "positive"], options,
                                         {"source": {"generator": "autonorm.data.smoke.generate_sentiment", "seed": seed},
                                          "split_note": split_note(tr, va, te) + sub})


# ------------------------------------------------------------------ the sources (offline: built, never fetched)
SMOKE_DIGITS = DatasetSource(
    build=lambda raw, opts: preprocess_smoke_digits(opts),
    bundled=("stand-in", "scikit-learn's bundled 8x8 'digits' (UCI optdigits test set), load_digits(); "
                         "stands in for the paper's vision sets", ["digits.csv.gz"]))
SMOKE_SHAPES32 = DatasetSource(
    build=lambda raw, opts: preprocess_smoke_shapes32(opts),
    bundled=("generated", "32x32 coloured shapes generated by autonorm.data.smoke.generate_shapes32 "
                          "from split_seed", []))
SMOKE_POS = DatasetSource(
    build=lambda raw, opts: preprocess_smoke_pos(opts),
    bundled=("generated", "POS corpus sampled from a small grammar by autonorm.data.smoke.generate_pos "
                          "from split_seed", []))
SMOKE_SENTIMENT = DatasetSource(
    build=lambda raw, opts: preprocess_smoke_sentiment(opts),
    bundled=("generated", "template sentiment sentences from autonorm.data.smoke.generate_sentiment "
                          "with split_seed", []))

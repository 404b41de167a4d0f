"""Text encoding shared by the text datasets (PTB, SST-2 and their stand-ins): tokenising,
vocabularies (with unknown-word classes), encoding into padded id arrays, and the builders that
turn tokenised splits into a processed dataset's (meta, splits)."""
from __future__ import annotations

import re
from collections import Counter
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import registry

PAD, UNK = "<pad>", "<unk>"
# Letters are [^\W\d_] and letters-or-digits [^\W_] in Python's Unicode-aware re: words keep their
# accents; "'s" and "n't" stay single tokens as GLUE has them; any other symbol is its own token.
_TOKEN_RE = re.compile(r"'[^\W\d_]+|[^\W_]+(?:'[^\W\d_]+)*|[^\w\s]|_")


def tokenize_sst(text: str) -> List[str]:
    """Lowercase + regex split (keeps "n't", "'s" as GLUE has them)."""
    return _TOKEN_RE.findall(str(text).lower())


def build_vocab(token_lists: Sequence[Sequence[str]], min_freq: int = 1) -> List[str]:
    """itos from training sentences: [<pad>, <unk>, tokens by (-freq, token)]."""
    cnt = Counter(t for toks in token_lists for t in toks)
    words = sorted((w for w, c in cnt.items() if c >= min_freq), key=lambda w: (-cnt[w], w))
    return [PAD, UNK] + words


# Suffixes that mark a word's part of speech in English, longest first (signature classes of
# unknown words, as in the Berkeley and Stanford parsers' unknown-word models).
_SIGNATURE_SUFFIXES = ("ments", "ness", "ment", "ship", "able", "ible", "ings", "tion", "sion", "ing", "ion",
                       "ive", "ous", "ful", "ity", "ize", "ise", "ism", "ist", "est", "ant", "ent", "ers",
                       "ed", "ly", "er", "al", "ic", "en", "es", "'s", "s", "y")


def unk_signature(word: str) -> str:
    """The class token of a word outside the vocabulary: capitalisation, digits, hyphen, suffix.

    ``"Reorganizing"`` -> ``"<unk-cap-ing>"``, ``"1987-88"`` -> ``"<unk-num-hyph>"``. A tagger
    trained on 3,000 sentences meets ~8% unknown words at test; a bare ``<unk>`` tells it nothing.
    """
    parts = ["unk"]
    if any(c.isdigit() for c in word):
        parts.append("num")
    if "-" in word:
        parts.append("hyph")
    if word[:1].isupper():
        parts.append("cap")
    low = word.lower()
    for suffix in _SIGNATURE_SUFFIXES:
        if low.endswith(suffix) and len(low) > len(suffix) + 1:
            parts.append(suffix)
            break
    return "<" + "-".join(parts) + ">"


def encode(token_lists: Sequence[Sequence[str]], itos: List[str], max_len: int,
           signatures: bool = False) -> Tuple[np.ndarray, int]:
    """int64 [N, max_len] ids (pad 0, unk 1, truncated); also the number of truncated sequences.

    With ``signatures`` a word outside the vocabulary maps to its ``unk_signature`` token when the
    vocabulary has it, else to ``<unk>``.
    """
    stoi = {w: i for i, w in enumerate(itos)}
    x = np.zeros((len(token_lists), max_len), dtype=np.int64)
    trunc = 0

    def token_id(t: str) -> int:
        i = stoi.get(t)
        if i is None:
            i = stoi.get(unk_signature(t), 1) if signatures else 1
        return i

    for i, toks in enumerate(token_lists):
        if len(toks) > max_len:
            trunc += 1
        ids = [token_id(t) for t in toks[:max_len]]
        x[i, :len(ids)] = ids
    return x, trunc


def encode_tags(tag_lists: Sequence[Sequence[str]], tag_names: List[str], max_len: int) -> np.ndarray:
    """int64 [N, max_len] tag ids, -100 at padding (ignored by cross-entropy)."""
    tid = {t: i for i, t in enumerate(tag_names)}
    y = np.full((len(tag_lists), max_len), -100, dtype=np.int64)
    for i, tags in enumerate(tag_lists):
        ids = [tid[t] for t in tags[:max_len]]
        y[i, :len(ids)] = ids
    return y


def _lengths_summary(token_lists) -> Dict[str, float]:
    lens = np.array([len(t) for t in token_lists]) if len(token_lists) else np.zeros(1)
    return {"mean": float(lens.mean()), "max": int(lens.max()), "p95": float(np.percentile(lens, 95))}


def build_token_classification(name: str, sents: Dict[str, List[List[Tuple[str, str]]]], options: Dict[str, Any],
                               extra: Optional[Dict[str, Any]] = None):
    """(meta, splits) for a tagging corpus given {split: [[(word, tag), ...], ...]}."""
    spec = registry.get_spec(name)
    max_len = int(options.get("max_len", 128))
    toks = {k: [[w for w, _ in s] for s in v] for k, v in sents.items()}
    tags = {k: [[t for _, t in s] for s in v] for k, v in sents.items()}
    itos = build_vocab(toks["train"], int(options.get("min_freq", 1)))
    signatures = bool(options.get("unk_signatures", False))
    if signatures:  # train words below min_freq become their signature, so signatures get trained
        known = set(itos)
        # a word with no class gets the bare "<unk>" (id 1), never a second entry for it
        itos = itos + sorted({unk_signature(w) for s in toks["train"] for w in s if w not in known} - known)
    tag_names = sorted({t for v in tags.values() for s in v for t in s})
    out, trunc = {}, {}
    for k in ("train", "val", "test"):
        x, trunc[k] = encode(toks[k], itos, max_len, signatures)
        out[k] = (x, encode_tags(tags[k], tag_names, max_len))
    train_vocab = set(itos)
    oov = {k: float(np.mean([w not in train_vocab for s in toks[k] for w in s])) for k in ("val", "test")}
    meta = {
        "name": name, "task": spec.task, "family": spec.family, "standin": spec.standin,
        "description": spec.description,
        "sizes": {k: len(sents[k]) for k in ("train", "val", "test")},
        "split_seed": int(options.get("split_seed", 0)),
        "vocab_size": len(itos), "pad_id": 0, "unk_id": 1, "max_len": max_len, "itos": itos,
        "num_tags": len(tag_names), "tag_names": tag_names, "ignore_index": -100,
        "truncated": trunc, "oov_rate": oov, "length_stats": _lengths_summary(toks["train"]),
        "unk_signatures": signatures,
        "options": dict(options),
    }
    if signatures:  # the baseline stays per WORD (unknown: most frequent tag), not per signature
        from .baselines import trivial_baseline
        words = build_vocab(toks["train"], 1)
        plain = {k: (encode(toks[k], words, max_len)[0], out[k][1]) for k in ("train", "test")}
        meta["trivial_baseline"] = trivial_baseline(spec.task, plain["train"], plain["test"], meta)
    meta.update(extra or {})
    return meta, out


def build_sequence_classification(name: str, texts: Dict[str, List[List[str]]], labels: Dict[str, np.ndarray],
                                  class_names: List[str], options: Dict[str, Any],
                                  extra: Optional[Dict[str, Any]] = None):
    """(meta, splits) for sentence classification from tokenised texts."""
    spec = registry.get_spec(name)
    max_len = int(options.get("max_len", 64))
    itos = build_vocab(texts["train"], int(options.get("min_freq", 1)))
    out, trunc = {}, {}
    for k in ("train", "val", "test"):
        x, trunc[k] = encode(texts[k], itos, max_len)
        out[k] = (x, np.asarray(labels[k], dtype=np.int64))
    meta = {
        "name": name, "task": spec.task, "family": spec.family, "standin": spec.standin,
        "description": spec.description,
        "sizes": {k: len(texts[k]) for k in ("train", "val", "test")},
        "split_seed": int(options.get("split_seed", 0)),
        "num_classes": len(class_names), "class_names": list(class_names),
        "vocab_size": len(itos), "pad_id": 0, "unk_id": 1, "max_len": max_len, "itos": itos,
        "truncated": trunc, "length_stats": _lengths_summary(texts["train"]),
        "class_balance": {k: np.bincount(out[k][1], minlength=len(class_names)).tolist() for k in out},
        "options": dict(options),
    }
    meta.update(extra or {})
    return meta, out

"""Padding-aware gates: a sentence's outputs do not depend on how much padding follows it.

Every norm that reads a token-mean (NormSelector, FiLM, AutoNorm-3) averages over real
tokens only; the text encoder passes its key padding mask down to them.
"""

import pytest
import torch

from autonorm.layers import norms
from autonorm.methods import METHODS
from autonorm.models import build_model
from autonorm.layers.norms import FiLMNorm, NormSelector, token_mean

MAX_LEN = 40
MODEL = {"dim": 16, "depth": 2, "heads": 2, "mlp_ratio": 2.0, "mlp_hidden": [16], "drop_path": 0.1,
         "dropout": 0.1}


def _meta(task):
    base = {"task": task, "vocab_size": 30, "pad_id": 0, "max_len": MAX_LEN}
    return {**base, "num_tags": 5} if task == "token_classification" else {**base, "num_classes": 3}


def _perturbed_model(task, method, pooling="mean"):
    """Eval-mode float64 model with every parameter moved off its init (FiLM's zero projection
    included). Float64, so that 1e-6 tests the padding and not float32 rounding of the attention
    sums over 10 vs 40 keys (~2e-6 in float32 for every method, LN included)."""
    torch.manual_seed(0)
    model = build_model(_meta(task), method, {**MODEL, "pooling": pooling}, {"tau": 0.5})
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.5 * torch.randn(p.shape, generator=g))
    return model.double().eval()


def _padded(sentences, length):
    x = torch.zeros(len(sentences), length, dtype=torch.long)
    for i, s in enumerate(sentences):
        x[i, :len(s)] = torch.tensor(s)
    return x


SENTENCES = [[5, 9, 2, 17, 3, 11, 8], [4, 4, 21], [7, 1, 29, 13, 6, 2, 2, 9, 10]]


def _outputs(model, task, length):
    with torch.no_grad():
        out = model(_padded(SENTENCES, length))
    if task == "token_classification":  # real positions only: padded positions are never scored
        return [out[i, :len(s)] for i, s in enumerate(SENTENCES)]
    return [out[i] for i in range(len(SENTENCES))]


CASES = [("token_classification", m, "mean") for m in sorted(METHODS)] + \
        [("sequence_classification", m, "mean") for m in sorted(METHODS)] + \
        [("sequence_classification", m, "cls") for m in ("autonorm", "film", "autonorm3")]


@pytest.mark.parametrize("task,method,pooling", CASES)
def test_outputs_do_not_depend_on_padding_length(task, method, pooling):
    model = _perturbed_model(task, method, pooling)
    short, long = _outputs(model, task, 10), _outputs(model, task, MAX_LEN)
    for a, b in zip(short, long):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-6)


@pytest.mark.parametrize("method", ["autonorm", "autonorm_s", "film", "autonorm3"])
def test_unmasked_token_mean_would_leak_padding(method, monkeypatch):
    """The test above has teeth: with the mask ignored, the same sentences give other outputs."""
    model = _perturbed_model("sequence_classification", method)
    plain = token_mean
    monkeypatch.setattr(norms, "token_mean", lambda x, mask=None: plain(x))
    short, long = _outputs(model, "sequence_classification", 10), _outputs(model, "sequence_classification",
                                                                           MAX_LEN)
    assert max(float((a - b).abs().max()) for a, b in zip(short, long)) > 1e-4


def test_masked_token_mean_by_hand():
    x = torch.tensor([[[1.0, 2.0], [3.0, 6.0], [100.0, -100.0]],
                      [[2.0, 0.0], [4.0, 4.0], [6.0, 8.0]],
                      [[9.0, 9.0], [9.0, 9.0], [9.0, 9.0]]])
    mask = torch.tensor([[True, True, False], [True, True, True], [False, False, False]])
    # row 0: (1+3)/2, (2+6)/2; row 1: (2+4+6)/3, (0+4+8)/3; row 2: no real token -> zeros
    expected = torch.tensor([[2.0, 4.0], [4.0, 4.0], [0.0, 0.0]])
    torch.testing.assert_close(token_mean(x, mask), expected)
    torch.testing.assert_close(token_mean(x), x.mean(1))  # no mask: every token counts
    flat = torch.randn(3, 2)
    assert token_mean(flat, mask) is flat  # pooled (B, d) inputs pass through


def test_selector_and_film_read_real_tokens_only():
    torch.manual_seed(0)
    x = torch.randn(2, 5, 8)
    mask = torch.tensor([[True, True, True, False, False], [True, True, True, True, True]])
    sel = NormSelector(8).eval()
    torch.testing.assert_close(sel.logits(x, mask)[0], sel.mlp(x[0, :3].mean(0)))
    torch.testing.assert_close(sel.logits(x, mask)[1], sel.mlp(x[1].mean(0)))
    film = FiLMNorm(8)
    with torch.no_grad():
        film.film.weight.normal_()
        film.film.bias.normal_()
    gamma, beta = film.film(x[0, :3].mean(0)).chunk(2)
    expected = torch.nn.functional.layer_norm(x[0], (8,)) * (1 + gamma) + beta
    torch.testing.assert_close(film(x, mask=mask)[0], expected)


def test_trim_padding_drops_only_all_padding_columns():
    from autonorm.run.tasks import Task
    x = _padded(SENTENCES, MAX_LEN)
    y_tags = torch.where(x != 0, x % 5, torch.full_like(x, -100))
    task = Task(_meta("token_classification"), {}, torch.device("cpu"))
    xt, yt = task.trim_padding(x, y_tags)
    assert xt.shape == (3, 9) and yt.shape == (3, 9)  # the longest sentence has 9 tokens
    assert torch.equal(xt, x[:, :9]) and torch.equal(yt, y_tags[:, :9])
    labels = torch.tensor([0, 2, 1])
    task = Task(_meta("sequence_classification"), {}, torch.device("cpu"))
    xt, yt = task.trim_padding(x, labels)
    assert xt.shape == (3, 9) and torch.equal(yt, labels)  # sentence labels are not trimmed
    image_task = Task({"task": "regression", "y_mean": 0.0, "y_std": 1.0}, {}, torch.device("cpu"))
    feats = torch.zeros(3, 40)
    assert image_task.trim_padding(feats, labels)[0] is feats  # only token tasks are trimmed


@pytest.mark.parametrize("task_kind", ["token_classification", "sequence_classification"])
def test_eval_metrics_do_not_depend_on_padding_width(task_kind):
    """run_eval trims each batch and pads tag outputs back: the same sentences padded to 10 and to
    40 columns give the same loss and metrics."""
    from autonorm.run.tasks import Task, run_eval
    model = _perturbed_model(task_kind, "autonorm").float()
    task = Task(_meta(task_kind), {}, torch.device("cpu"))
    results = []
    for length in (10, MAX_LEN):
        x = _padded(SENTENCES, length)
        y = (torch.where(x != 0, x % 5, torch.full_like(x, -100)) if task_kind == "token_classification"
             else torch.tensor([0, 2, 1]))
        results.append(run_eval(model, task, x, y, batch_size=2))
    (loss_a, metrics_a, _), (loss_b, metrics_b, _) = results
    assert loss_a == pytest.approx(loss_b, abs=1e-5)
    assert metrics_a == pytest.approx(metrics_b, abs=1e-4)


def test_word_dropout_replaces_real_tokens_only_at_its_rate():
    from autonorm.run.tasks import Task
    meta = {**_meta("token_classification"), "unk_id": 1}
    x = _padded(SENTENCES * 400, MAX_LEN)
    off = Task(meta, {}, torch.device("cpu"))
    assert off.word_dropout(x, torch.Generator().manual_seed(0)) is x  # default: off
    task = Task(meta, {"word_dropout": 0.25}, torch.device("cpu"))
    out = task.word_dropout(x, torch.Generator().manual_seed(0))
    real = x != 0
    assert torch.equal(out[~real], x[~real])  # padding is never touched
    changed = out != x
    assert torch.all(out[changed] == 1)  # replaced by <unk>
    rate = changed.sum().item() / real.sum().item()  # 7,600 real tokens: rate within ~4 sd of 0.25
    assert 0.23 < rate < 0.27
    again = task.word_dropout(x, torch.Generator().manual_seed(0))
    assert torch.equal(out, again)  # reproducible from the training generator

import math

import pytest
import torch

from autonorm.metrics import classification_metrics, regression_metrics, tagging_metrics


def test_classification_macro_by_hand():
    y = torch.tensor([0, 0, 1, 1, 2])
    p = torch.tensor([0, 1, 1, 1, 0])
    m = classification_metrics(p, y, 3)
    # class 0: P 1/2 R 1/2; class 1: P 2/3 R 1; class 2: P 0 (no predictions) R 0
    assert m["accuracy"] == pytest.approx(60.0)
    assert m["precision_macro"] == pytest.approx(100 * (0.5 + 2 / 3 + 0) / 3)
    assert m["recall_macro"] == pytest.approx(100 * (0.5 + 1 + 0) / 3)
    f1 = [0.5, 2 * (2 / 3) / (2 / 3 + 1), 0.0]
    assert m["f1_macro"] == pytest.approx(100 * sum(f1) / 3)


def test_tagging_ignores_padding_and_perplexity_is_exp_ce():
    logits = torch.tensor([[[2.0, 0.0], [0.0, 1.0], [5.0, -5.0]]])
    y = torch.tensor([[0, 0, -100]])
    m = tagging_metrics(logits, y, 2)
    ce = (-math.log(math.exp(2) / (math.exp(2) + 1)) - math.log(1 / (1 + math.e))) / 2
    assert m["tag_perplexity"] == pytest.approx(math.exp(ce), rel=1e-6)
    assert m["accuracy"] == pytest.approx(50.0)


def test_regression_by_hand():
    m = regression_metrics(torch.tensor([1.0, 2.0, 4.0]), torch.tensor([1.0, 4.0, 1.0]))
    assert m["rmse"] == pytest.approx(math.sqrt((0 + 4 + 9) / 3))
    assert m["mae"] == pytest.approx(5 / 3)

"""Teacher MLP: the paper's distillation teacher and cheapest reference row.

Images are flattened; tokens are embedded (no context: each token for tagging,
the mean embedding for sentence classification); tabular features go in as is.
"""

from __future__ import annotations

from torch import nn


class TeacherMLP(nn.Module):
    def __init__(self, task: str, in_features: int, num_outputs: int, hidden: tuple[int, ...] = (512, 256),
                 dropout: float = 0.1, vocab_size: int | None = None, embed_dim: int = 128,
                 pad_id: int = 0, **_):
        super().__init__()
        self.task, self.pad_id = task, pad_id
        self.embed = None
        if task in ("token_classification", "sequence_classification"):
            self.embed = nn.Embedding(vocab_size, embed_dim, padding_idx=pad_id)
            in_features = embed_dim
        layers, prev = [], in_features
        for h in hidden:
            layers += [nn.Linear(prev, h), nn.GELU(), nn.Dropout(dropout)]
            prev = h
        layers.append(nn.Linear(prev, num_outputs))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        if self.task == "token_classification":
            return self.net(self.embed(x))
        if self.task == "sequence_classification":
            m = (x != self.pad_id).unsqueeze(-1).float()
            return self.net((self.embed(x) * m).sum(1) / m.sum(1).clamp_min(1.0))
        out = self.net(x.flatten(1))
        return out.squeeze(-1) if self.task == "regression" else out

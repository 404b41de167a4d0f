"""Backbones: ViT-Lite (vision), text encoder (NLP), feature-token transformer
(tabular) and the Teacher MLP. ``build_model`` picks one from the dataset's
task and the method; the norm is one argument passed down to every block."""

from .build import build_model

__all__ = ["build_model"]

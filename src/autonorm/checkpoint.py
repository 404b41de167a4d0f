"""Checkpoint I/O for the trainer: atomic saves and the RNG state that makes a
resumed run end with the same numbers as an uninterrupted one."""

from __future__ import annotations

import os
import random
from pathlib import Path

import torch

CHECKPOINT_FORMAT = 1


def save_atomic(obj, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def rng_state(gen: torch.Generator, rng: random.Random) -> dict:
    version, state, gauss = rng.getstate()
    return {"torch": torch.get_rng_state(), "data": gen.get_state(),
            "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
            "py": [version, list(state), gauss]}


def set_rng_state(s: dict, gen: torch.Generator, rng: random.Random) -> None:
    torch.set_rng_state(s["torch"])
    gen.set_state(s["data"])
    if s["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(s["cuda"])
    version, state, gauss = s["py"]
    rng.setstate((version, tuple(state), gauss))

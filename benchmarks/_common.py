"""Shared helpers for the benchmark scripts: the paper-size setups, interleaved timing, tables.

Every script measures all its variants in one process, interleaved (the order rotates each
repeat), after untimed warm-up, and prints medians and RATIOS: absolute times drift on a shared
machine, ratios measured side by side in one run are what the scripts report.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:  # benchmark this checkout's code, installed or not
    sys.path.insert(0, str(ROOT / "src"))

import torch  # noqa: E402
import yaml  # noqa: E402

# The three backbones at the paper's sizes (config.yaml `families`), with the batch shapes.
VISION_META = {"name": "bench_cifar10", "task": "image_classification", "family": "vision",
               "num_classes": 10,
               "image": {"channels": 3, "height": 32, "width": 32,
                         "mean": [0.4914, 0.4822, 0.4465], "std": [0.2470, 0.2435, 0.2616]}}
TEXT_META = {"name": "bench_sst2", "task": "sequence_classification", "family": "nlp", "num_classes": 2,
             "vocab_size": 16000, "pad_id": 0, "unk_id": 1, "max_len": 64}
TABULAR_META = {"name": "bench_housing", "task": "regression", "family": "tabular", "num_features": 8,
                "y_mean": 2.07, "y_std": 1.15}
BACKBONES = {
    # name: (meta, family, batch size, description)
    "vision": (VISION_META, "vision", 128, "ViT-Lite 8x128, 32x32x3, batch 128"),
    "text": (TEXT_META, "nlp", 64, "text encoder 12x128, seq len 64, batch 64"),
    "tabular": (TABULAR_META, "tabular", 256, "feature-token transformer 12x128, 8 features, batch 256"),
}


def load_config() -> dict:
    with open(ROOT / "config.yaml") as f:
        return yaml.safe_load(f)


def family_cfg(family: str) -> tuple[dict, dict]:
    """(model_cfg, train_cfg) of a family at the paper's sizes (config.yaml)."""
    cfg = load_config()
    fam = cfg["families"][family]
    return dict(fam["model"]), dict(fam["train"])


def norm_options() -> dict:
    cfg = load_config()
    opts = dict(cfg.get("norm_options", {}))
    a = cfg.get("autonorm", {})
    opts.setdefault("tau", a.get("tau", 0.5))
    opts.setdefault("drop_noise_when_frozen", a.get("drop_noise_when_frozen", True))
    return opts


def example_batch(backbone: str, batch: int | None = None, seed: int = 0):
    """Random inputs and targets shaped like the backbone's real data (model inputs, not raw)."""
    meta, _, bs, _ = BACKBONES[backbone]
    bs = batch or bs
    g = torch.Generator().manual_seed(seed)
    if backbone == "vision":
        x = torch.randn(bs, 3, 32, 32, generator=g)
        y = torch.randint(0, meta["num_classes"], (bs,), generator=g)
    elif backbone == "text":
        x = torch.randint(2, meta["vocab_size"], (bs, meta["max_len"]), generator=g)
        x[:, -8:] = 0  # a little padding, so the key-padding mask is exercised
        y = torch.randint(0, meta["num_classes"], (bs,), generator=g)
    else:
        x = torch.randn(bs, meta["num_features"], generator=g)
        y = torch.randn(bs, generator=g) * meta["y_std"] + meta["y_mean"]
    return x, y


def base_parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="fewer repeats (a rough number in about a minute)")
    p.add_argument("--repeats", type=int, help="timed repeats per variant (median reported)")
    p.add_argument("--warmup", type=int, help="untimed calls per variant first")
    p.add_argument("--threads", type=int, default=1,
                   help="torch CPU threads (default 1: on a shared machine, 2+ OpenMP threads inflate times "
                        "many-fold whenever another process holds a core; 0 = torch's default)")
    p.add_argument("--no-malloc-tuning", action="store_true",
                   help="glibc's default malloc thresholds (autonorm.run.malloc_tuning is what the trainer uses)")
    return p


def setup_torch(threads: int | None, malloc_tuning: bool = True) -> None:
    if threads:  # 0 / None: torch's default
        torch.set_num_threads(threads)
    if malloc_tuning:  # as autonorm-train and autonorm-evaluate do
        from autonorm.run.malloc_tuning import keep_freed_memory

        keep_freed_memory()
    # as the trainer (runtime.deterministic: true)
    torch.use_deterministic_algorithms(True, warn_only=True)


def machine_line() -> str:
    return (f"python {platform.python_version()}, torch {torch.__version__}, {platform.machine()}, "
            f"{torch.get_num_threads()} torch threads, cuda={'yes' if torch.cuda.is_available() else 'no'}")


class Times(dict):
    """name -> list of wall seconds; ``.cpu`` holds the matching process CPU seconds."""

    def __init__(self, names):
        super().__init__({n: [] for n in names})
        self.cpu = {n: [] for n in names}


def interleaved(fns: dict, repeats: int, warmup: int, sync=None) -> Times:
    """Time every callable ``repeats`` times, interleaved, order rotating each round, after warm-up.

    Records wall time and process CPU time. With one torch thread the CPU time is the
    robust estimator on a shared machine (it does not count time the process spent
    descheduled); on an idle machine the two agree.
    """
    names = list(fns)
    for _ in range(warmup):
        for n in names:
            fns[n]()
    if sync:
        sync()
    times = Times(names)
    for r in range(repeats):
        order = names[r % len(names):] + names[:r % len(names)]
        for n in order:
            c0, t0 = time.process_time(), time.perf_counter()
            fns[n]()
            if sync:
                sync()
            times[n].append(time.perf_counter() - t0)
            times.cpu[n].append(time.process_time() - c0)
    return times


def med(ts: list[float]) -> float:
    return statistics.median(ts)


def spread(ts: list[float]) -> str:
    """Interquartile range relative to the median, as a noise indicator."""
    if len(ts) < 4:
        return f"min {min(ts) / med(ts):.2f}x med"
    q = statistics.quantiles(ts, n=4)
    return f"IQR {100 * (q[2] - q[0]) / med(ts):.0f}%"


def table(rows: list[list], header: list[str]) -> str:
    """A GitHub-markdown table (so the README can take the output as printed)."""
    cells = [[str(c) for c in r] for r in [header] + rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    fmt = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    lines = [fmt(cells[0]), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    return "\n".join(lines + [fmt(r) for r in cells[1:]])

"""autonorm.run.malloc_tuning: freed activations stay mapped (no page faults on reuse) on glibc."""

import platform
import subprocess
import sys

import pytest

# Four eval forwards of a small ViT (batch 128, 32x32) after three warm-up forwards: prints
# whether the tuning applied and the minor page faults of the four.
PROBE = """
import resource, sys
import torch
from autonorm.run.malloc_tuning import keep_freed_memory
from autonorm.models import build_model
applied = keep_freed_memory()
torch.set_num_threads(1)
meta = {"name": "probe", "task": "image_classification", "family": "vision", "num_classes": 10,
        "image": {"channels": 3, "height": 32, "width": 32, "mean": [0.5] * 3, "std": [0.25] * 3}}
model = build_model(meta, "frozen_ln", {"dim": 128, "depth": 2, "heads": 4, "mlp_ratio": 4.0, "patch_size": 4}, {}).eval()
x = torch.randn(128, 3, 32, 32)
with torch.no_grad():
    for _ in range(3):
        model(x)
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(4):
        model(x)
print(applied, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
"""


def _faults(env_value):
    env = {"AUTONORM_MALLOC_TUNING": env_value, "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True)
    applied, faults = out.stdout.split()
    return applied == "True", int(faults)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt only")
def test_tuning_removes_page_faults_of_reused_activations():
    # Faults vary from run to run: a busy machine adds some (memory compaction, huge-page
    # splits), and glibc's own trimming depends on its adaptive mmap threshold (one untuned
    # probe in a few returned nothing). So: the least of three tuned probes against the most
    # of three untuned ones.
    on_probes, off_probes = [_faults("1") for _ in range(3)], [_faults("0") for _ in range(3)]
    on_applied, on = all(a for a, _ in on_probes), min(f for _, f in on_probes)
    off_applied, off = any(a for a, _ in off_probes), max(f for _, f in off_probes)
    assert on_applied and not off_applied
    # glibc's defaults hand the activations back and fault them in again (~16,000 pages a forward)
    assert off > 5000, off
    assert on * 5 < off, (on, off)  # measured 0-4,200 against 40,000-100,000

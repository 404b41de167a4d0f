"""Knowledge distillation (Hinton et al. 2015): a transformer student learns from the trained
Teacher MLP run of the same dataset and seed (the paper's distillation ablation).

    L = (1 - alpha) * L_task + alpha * T^2 * KL( softmax(z_teacher / T) || softmax(z_student / T) )

T is the temperature and alpha the weight (the run config's ``distill.temperature`` and
``distill.weight``). The T^2 factor keeps the soft term's gradients on the scale of the task
term's as T changes (Hinton et al. 2015, section 2). The KL is averaged over samples, or over
real (labelled) tokens for tagging. The teacher is frozen and runs in eval mode on the same
(augmented) inputs the student sees.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import torch.nn.functional as F

from ..metrics import IGNORE_INDEX


class DistillationError(RuntimeError):
    pass


def kd_divergence(student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float,
                  valid: torch.Tensor | None = None) -> torch.Tensor:
    """T^2 * mean over positions of KL(softmax(teacher / T) || softmax(student / T)).

    Logits are (..., classes); ``valid`` (same leading shape, bool) selects the positions that
    count (tagging: labelled tokens). The teacher gets no gradient.
    """
    t = float(temperature)
    log_p_student = F.log_softmax(student_logits.float() / t, dim=-1)
    log_p_teacher = F.log_softmax(teacher_logits.detach().float() / t, dim=-1)
    kl = (log_p_teacher.exp() * (log_p_teacher - log_p_student)).sum(dim=-1)
    if valid is not None:
        kl = kl[valid]
    if kl.numel() == 0:
        return student_logits.new_zeros(()).float()
    return (t * t) * kl.mean()


def distillation_loss(task_loss: torch.Tensor, student_logits: torch.Tensor, teacher_logits: torch.Tensor,
                      temperature: float, weight: float, valid: torch.Tensor | None = None) -> torch.Tensor:
    """(1 - weight) * task_loss + weight * T^2 * KL(teacher_T || student_T)."""
    w = float(weight)
    return (1.0 - w) * task_loss + w * kd_divergence(student_logits, teacher_logits, temperature, valid)


class Distiller:
    """The frozen teacher of one student run and the loss that mixes it in."""

    def __init__(self, teacher: torch.nn.Module, temperature: float, weight: float, task_kind: str):
        if task_kind == "regression":
            raise DistillationError("distillation needs class logits; regression has none")
        self.teacher = teacher.eval()
        for p in self.teacher.parameters():
            p.requires_grad_(False)
        self.temperature, self.weight, self.task_kind = float(temperature), float(weight), task_kind

    @classmethod
    def from_run_config(cls, cfg: dict, meta: dict, device: torch.device,
                        data_identity: str | None = None) -> "Distiller | None":
        """None unless the run config has a ``distill`` block; else load its teacher run (which
        must have been trained on this data when ``data_identity`` is given)."""
        dcfg = cfg.get("distill")
        if not dcfg:
            return None
        from .tasks import load_trained_model  # the model zoo imports torch-heavy modules

        run_dir = Path(dcfg["teacher_run_dir"])
        metrics = run_dir / "metrics.json"
        if not metrics.exists() or not (run_dir / "model.pt").exists():
            raise DistillationError(f"teacher run {run_dir} has no trained model (metrics.json, model.pt); "
                                    f"train it first (the workflow does: its status.json is an input)")
        recorded = json.loads(metrics.read_text())
        if recorded.get("status") != "ok":
            raise DistillationError(f"teacher run {run_dir} ended with status {recorded.get('status')!r}, not 'ok'")
        expected = dcfg.get("teacher_config_hash")
        if expected and recorded.get("config_hash") != expected:
            raise DistillationError(f"teacher run {run_dir} was trained with config hash "
                                    f"{recorded.get('config_hash')!r}, this student expects {expected!r}: "
                                    f"retrain the teacher with the current config first")
        if data_identity is not None and recorded.get("data_identity") != data_identity:
            raise DistillationError(f"teacher run {run_dir} was trained on other data (data identity "
                                    f"{recorded.get('data_identity')!r}, this student's data {data_identity!r}): "
                                    f"retrain the teacher on the current data first")
        with torch.random.fork_rng(devices=[]):  # building the teacher leaves the student's random stream as it was
            teacher = load_trained_model(run_dir, meta, device)
        return cls(teacher, dcfg["temperature"], dcfg["weight"], meta["task"])

    def loss(self, task_loss: torch.Tensor, student_out: torch.Tensor, inputs: torch.Tensor,
             targets: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            teacher_out = self.teacher(inputs)
        valid = None
        if self.task_kind == "token_classification":
            valid = targets != IGNORE_INDEX
        return distillation_loss(task_loss, student_out, teacher_out, self.temperature, self.weight, valid)

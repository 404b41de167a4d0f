"""The schemas of the aggregate tables (the columns of each csv) and the facts the aggregation
shares: the reports read the same names (report.context), so a column is named once."""
from __future__ import annotations

import re

from autonorm.analysis import stats
from autonorm.data import registry

REFERENCE_METHOD = "autonorm_s"

# Facts of the dataset registry (autonorm.data.registry), as the aggregation uses them.
PAPER_DATASETS = tuple(registry.PAPER_DATASETS) + tuple(
    c for c, v in registry.CORRUPTION_SETS.items() if v["official"])
#: dataset -> family, used when neither metrics.json nor meta.json says
KNOWN_FAMILY = {d: spec.family for d, spec in registry.DATASETS.items()} | {
    c: registry.DATASETS[v["source"]].family for c, v in registry.CORRUPTION_SETS.items()}
KNOWN_STANDIN = set(registry.SMOKE_DATASETS) | {
    c for c, v in registry.CORRUPTION_SETS.items() if not v["official"]}

COST_KEYS = stats.COST_METRICS
CORRUPTION_SUMMARY_KEYS = ("gaussian_noise_s3", "motion_blur_s3", "brightness_s3", "mean_s3",
                           "mean_all")

SUMMARY_COLUMNS = ["dataset", "method", "metric", "n", "mean", "std", "ci95_low", "ci95_high",
                   "paper_mean", "paper_std", "standin", "family", "metric_family",
                   "source_dataset", "higher_is_better", "n_expected", "n_diverged", "n_missing",
                   "n_stale", "baseline_name", "baseline_value", "at_or_below_baseline",
                   "same_run_as"]
COMPARISON_COLUMNS = ["dataset", "metric", "method_a", "method_b", "n", "mean_a", "mean_b",
                      "mean_diff", "t", "p", "p_holm", "cohens_dz", "wilcoxon_p", "note",
                      "holm_family", "holm_m", "higher_is_better", "standin", "family",
                      "sd_diff", "mdd80", "holm_alpha", "mdd80_holm", "paper_diff", "same_runs"]
RUNS_COLUMNS = ["dataset", "method", "seed", "status", "path", "eval_path", "has_eval",
                "standin", "family", "task", "epochs", "message", "config_hash_recorded",
                "config_hash_current", "config_state", "same_run_as", "variant_of"]
DATASETS_COLUMNS = ["dataset", "description", "family", "task", "standin", "n_train", "n_val",
                    "n_test", "split_note", "provenance_status", "n_files", "n_files_verified",
                    "provenance_files", "provenance_note", "trivial_baseline"]
BASELINES_COLUMNS = ["dataset", "baseline", "metric", "value", "higher_is_better"]
ABLATION_COLUMNS = ["dataset", "axis", "variant", "base", "value", "is_base", "metric", "n",
                    "mean", "std", "ci_low", "ci_high", "n_pairs", "mean_diff_vs_base",
                    "p_vs_base", "p_vs_base_holm", "holm_m", "sd_diff", "mdd80", "holm_alpha", "mdd80_holm",
                    "higher_is_better", "standin", "note"]
GATES_COLUMNS = ["dataset", "method", "seed", "epoch", "selector", "layer", "sublayer",
                 "entropy", "w_dyt", "w_ln", "frozen", "val_metric", "val_metric_name",
                 # the weight of every choice by its name, as JSON ({"dyt": .., "ln": .., "rms": ..});
                 # empty for histories written before gates were named by their choices
                 "choice_weights"]
HISTORY_COLUMNS = ["dataset", "method", "seed", "epoch", "train_loss", "val_loss", "val_metric",
                   "val_metric_name", "lr", "epoch_time_s", "frozen", "mean_entropy",
                   "mean_w_dyt"]
FREEZE_COLUMNS = ["dataset", "method", "seed", "enabled", "t_freeze", "eps_h", "froze", "epoch",
                  "entropy_at_decision"]
CORRUPTION_COLUMNS = ["dataset", "method", "seed", "corruption", "severity", "accuracy",
                      "corruption_set", "standin", "corruption_generated"]


SELECTOR_RE = re.compile(r"^block(\d+)(?:\.(\w+))?$")  # block3.attn; block3: one gate per block

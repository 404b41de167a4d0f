"""One training run and its evaluation: training with checkpoints and the freeze rule (train),
the task's loss, batches and evaluation (tasks), the optimizer, checkpoints, distillation, the
run-folder lock, the device; evaluation (evaluate, eval_cache), export and cost.
"""

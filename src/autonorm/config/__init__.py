"""The workflow config: one run's config (run_config), the ablation variants (variants), reading
and checking a whole config (workflow), each importing only those before it.
"""

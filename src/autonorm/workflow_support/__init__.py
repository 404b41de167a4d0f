"""What the Snakefile uses and nothing else does, side by side: the checks before any job
(``checks.check_writable``), what a failed or finished workflow prints (``console``), and
``autonorm-install-profile`` (``profile_install``), which puts a shipped Snakemake profile where
``--profile NAME`` finds it.

Nothing in the package imports this folder: it sits above every other layer (docs/develop.md).
"""

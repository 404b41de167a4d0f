"""Builders the test modules share (docs/develop.md "Testing"): tiny processed datasets and runs,
raw files in each dataset's real format, results folders (hand-written, paper-shaped), a rendered
report, Snakemake as a person runs it. A test module imports from here, never from another test
module; the shared fixtures are in tests/conftest.py."""

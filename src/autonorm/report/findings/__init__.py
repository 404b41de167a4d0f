"""The findings page over every study (``autonorm-report --findings``), in rooms:

* :mod:`.studies`: the studies it reads (records under ``studies/``, or results folders);
* :mod:`.rules`: the verdict rules (regime, the claim as stated, the margin) and the verdict words;
* :mod:`.rows`: a ledger row and the tally (each claim counted once);
* the rows, by the part of the paper they test: :mod:`.main_table`, :mod:`.paper_rows`,
  :mod:`.gate_rows`, :mod:`.routing_rows`, :mod:`.ablation_rows`, :mod:`.cost_rows`;
* :mod:`.figures`: one function per evidence figure;
* :mod:`.page`: the page itself and the command line.

The paper's own words and numbers are in :mod:`autonorm.report.paper`, its gate checks (shared with
the per-study report) in :mod:`autonorm.report.gate_checks`. docs/develop.md says how to add a claim.
"""

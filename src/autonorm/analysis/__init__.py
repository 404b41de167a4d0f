"""The analysis of many runs, by job: collect the run folders, summarise over seeds and test,
tabulate the ablations (autonorm.analysis.aggregate runs them in turn and writes the tables)."""

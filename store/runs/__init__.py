"""Judge runs: judging through a framework's pipeline, storing and listing runs,
activation checked against the gold labels, comparing runs, migrating to a new judge.
"""

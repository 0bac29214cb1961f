"""Trust or escalate: judge verdicts accepted without review, with a stated guarantee."""

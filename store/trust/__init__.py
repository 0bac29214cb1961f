"""Trust rules in the database: their calibration on a plan's gold labels, the verdicts they
accept, and clearing them."""

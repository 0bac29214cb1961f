"""The score cache: every framework's scores per report and per system, in both variants,
recomputed in full (counted by SQL where a framework allows) or after each decision.
"""

"""Estimates from review plans: designs, PPI++ corrections, rank significance, sample sizes.

Pure statistics on arrays and on a framework's own scoring functions; the store assembles the
arrays from the database (``store.plans.design``, ``store.plans.estimates``). See docs/estimates.md.
"""

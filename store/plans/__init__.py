"""Review plans and what they support: drawing a plan with recorded inclusion
probabilities, corrected estimates with intervals, and simulated review for checks.
"""

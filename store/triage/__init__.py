"""What to review first: suspicion flags on verdicts, the impact of the next decision on a
report's score, and how many known judge errors a review order reaches.
"""

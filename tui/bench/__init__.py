"""`gavel bench`: every DESIGN.md §5 figure beside a baseline measured in the same run, the
review-order recall, and the optional hub and peer-tool comparisons.
"""

"""Review actions that change scores: a decision and its rescoring, decisions from a file,
ground-truth expansion proposals, and merging another reviewer's log.
"""

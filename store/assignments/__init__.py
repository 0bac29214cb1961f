"""Who reviews what: handing subjects or reports to reviewers (``assign`` events in the review
log, signed, merged and synced like decisions), and each reviewer's and the team's progress.
"""

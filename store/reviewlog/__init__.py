"""The human layer: the append-only review log and what it is about (subjects), who signed
each event (identities), and where reviewers disagree (conflicts).
"""

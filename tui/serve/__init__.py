"""``gavel serve``: the workstation in a browser (textual-serve), every session authenticated
and run as its reviewer, with that reviewer's signing key."""

"""Persistence on SQLite: everything Gavel keeps, in subpackages by concern.

From the bottom up (import-linter holds the order, pyproject.toml):

- ``sqlite``: transactions, the write lock's holder note, change notices, search indexes;
- ``reviewlog``: the append-only review log, subjects, signing identities, conflicts;
- ``scores``: the score cache, its full and incremental recompute;
- ``triage``: suspicion flags, impact, review-order recall;
- ``views``: read models for the screens and the command line;
- ``reviews``: decisions with their scores, decisions from files, proposals, log merges;
- ``runs``, ``imports``, ``plans``, ``hub``, ``exports``: judge runs, importing benchmark
  runs, review plans and estimates, the PostgreSQL hub, ground-truth exports;
- ``db``: opening a database and migrating its schema (which rebuilds derived state);
- ``backend``: the workstation's reader connections and its one writer thread.
"""

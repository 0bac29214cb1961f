"""SQLite mechanics every part of the store shares: explicit transactions, who holds the
write lock, noticing other processes' commits, pausing the collector in bulk passes, FTS5.
"""

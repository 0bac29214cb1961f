"""Opening a Gavel database and bringing its schema to the current version; a migration
rebuilds the derived state it changes, so this package sits above the rest of the store.
"""

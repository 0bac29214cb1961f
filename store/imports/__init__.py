"""Importing a benchmark run: the streaming bulk loader (records to rows, one transaction)
and the import of a path with its format, content hash and scores.
"""

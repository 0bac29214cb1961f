"""The workstation's database access: a read connection per thread and one writer thread
that applies every write in keypress order.
"""

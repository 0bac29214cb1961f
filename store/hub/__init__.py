"""The review hub: a PostgreSQL database of signed events (the server side) and syncing a
local database with it.
"""

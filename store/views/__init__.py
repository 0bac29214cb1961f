"""Read models: the rows and dataclasses the screens and the command line show, one call
per screen state, no SQL in the interfaces.
"""

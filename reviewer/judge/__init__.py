"""The LLM judge: prompts, response schemas, an OpenAI-compatible client and a citation fetcher.

Everything here does I/O only through objects a caller hands in (an HTTP transport, a cache, a
page source), so the store and the command line decide where results go and tests can point
the whole pipeline at servers on loopback.
"""

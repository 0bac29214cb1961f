"""The LLM judge: the openai-SDK chat client with Gavel's retries and bounds, the Batch API,
the pipeline interface every benchmark's judge implements, prompt fences, reply repair, the
response cache, costs, and the citation fetcher.

Everything here does I/O only through objects a caller hands in (a base URL and key, a cache, a
page source), so the store and the command line decide where results go and tests can point
the whole pipeline at servers on loopback. The benchmarks' own judges live with the benchmarks
(``reviewer/frameworks/<benchmark>/judge_*.py``); nothing here imports them.
"""

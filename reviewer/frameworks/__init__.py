"""One package per benchmark: its format readers, scoring, verdict scales, proposal shapes,
judge prompts where it has them, and what the screens need to show it — each package's
``BENCHMARK`` is what :mod:`reviewer.registry` lists."""

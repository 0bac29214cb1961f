"""Metadata keys of the native format that scoring code reads (no dependencies, cheap to import).

Kept apart from the pydantic models (:mod:`reviewer.models` re-exports them) so that scoring a
report, which the command line does after every decision, does not import pydantic.
"""

from __future__ import annotations

RUN_CLAIM_KEY = "gavel_judge_run"
"""Metadata key naming the judge run that extracted a claim (claims a run extracts are the
report's working claims once that run is active)."""

TRACE_KEY = "trace"
"""Report metadata key of the solving-trace counts (docs/format.md): how a system searched."""
TRACE_COUNTS = ("search_calls", "web_search", "web_content_mining")
"""The counts a report's ``metadata.trace`` may carry, each a whole number ≥ 0."""

"""The published judge prompt of DeepResearch Bench II (imlrz/DeepResearch-Bench-II,
``run_evaluation.py`` at 9d365ed), verbatim: a ``str.format`` template as the script formats
it (doubled braces are literal), ``paper`` the report text and ``rubric`` the JSON of the task,
one batch of rubric items and the blocked reference (``json.dumps(..., ensure_ascii=False,
indent=2)``). The report is inserted fenced by the caller (:mod:`reviewer.judge.prompting`).
"""

# ruff: noqa: E501

PROMPT = '\nYou will receive an article, a task, and a list of grading rubric items. Your job is to assess whether the article satisfies each rubric item, and provide a THREE-WAY score for EACH rubric item.\n\nScoring rule per rubric item (strict):\n- Score = 1: The article clearly satisfies the rubric item AND the specific supporting sentence(s) do NOT cite any reference listed in "blocked" (match by title/urls). For numerical data, exact values must be explicitly listed and match the rubric.\n- Score = 0: The article does NOT mention this rubric item at all.\n- Score = -1: The article mentions this rubric item, BUT the supporting sentence(s) cite a blocked reference.\n\nFor EACH rubric item, you MUST provide:\n1. "score": 1, 0, or -1\n2. "reason": A brief explanation\n3. "evidence": The specific supporting sentence(s) from the article (empty string if score is 0)\n\nThe input format is:\n<input_format>\n{{\n    "task": "...",\n    "rubric_items": ["rubric item 1", "rubric item 2", ...],\n    "blocked": {{\n        "title": "...",\n        "authors": ["...", "..."],\n        "urls": ["...", "..."]\n    }}\n}}\n</input_format>\n\nYour output MUST strictly follow this JSON format (no extra keys, and the rubric item text MUST match the input EXACTLY):\n<output_format>\n{{\n    "results": [\n        {{\n            "rubric_item": "rubric item 1",\n            "score": 1 or 0 or -1,\n            "reason": "brief explanation",\n            "evidence": "supporting sentence(s) from the article"\n        }},\n        {{\n            "rubric_item": "rubric item 2",\n            "score": 1 or 0 or -1,\n            "reason": "brief explanation",\n            "evidence": "supporting sentence(s) from the article"\n        }},\n        ...\n    ]\n}}\n</output_format>\n\nCRITICAL: You MUST return results for ALL rubric items in the input, and the "rubric_item" text MUST match the input text EXACTLY (character-level match).\n\n<passage>\n{paper}\n</passage>\n<task_and_rubric>\n{rubric}\n</task_and_rubric>\nNow, please begin your generation\n'
"""``PROMPT_TEMPLATE``: the three-way rubric judge (fields ``paper``, ``rubric``)."""

CHUNK_SIZE = 50
"""Rubric items per call: the script's ``CHUNK_SIZE`` default."""

MAX_PAPER_CHARS = 150_000
"""Report characters kept in a prompt: the script's ``MAX_PAPER_CHARS`` default."""

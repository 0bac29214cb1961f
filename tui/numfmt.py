"""Numbers as a reviewer reads them: stored values keep every digit, screens do not.

(Not ``tui/numbers.py``: run as a script, ``tui/bench/ui_child.py`` puts ``tui/`` first on the path,
where that name would shadow the standard library's ``numbers``.)

A continuous verdict is stored ``repr``-exact (a RACE value 0.39290240811153354) so that it
survives round trips; on screen four significant digits say all a reviewer can use.
"""

from __future__ import annotations


def short_value(raw: str | None) -> str:
    """A stored verdict value for display: 0.39290240811153354 → 0.3929; codes unchanged."""
    if raw is None:
        return "—"
    try:
        number = float(raw)
    except ValueError:
        return raw
    return raw if len(raw) <= 6 else f"{number:.4g}"


def fmt_score(value: float | None, digits: int) -> str:
    """A metric at its declared precision; whole levels (UserPref 3) without decimals."""
    if value is None:
        return "n/a"
    if digits == 0 or (digits <= 2 and float(value).is_integer()):
        return str(round(value))
    return f"{value:.{digits}f}"

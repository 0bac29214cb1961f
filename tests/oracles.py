"""The test-only oracle libraries (scipy, ppi-python), imported when a test first uses them.

Collecting the suite imports every test module in every worker; importing scipy.stats and
ppi-python there, for the few tests that compare with them, made collection several times
slower than the tests need.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """A module imported on its first attribute access."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    __test__ = False  # pytest looks at a test module's names while collecting it

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__"):  # an introspection, not a use
            raise AttributeError(attribute)
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attribute)


stats = LazyModule("scipy.stats")
ppi_py = LazyModule("ppi_py")

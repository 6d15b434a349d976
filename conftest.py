"""Settings shared by every test: tests/, and the lifecycle fuzzers in fuzz/.

Hypothesis profiles, chosen with ``HYPOTHESIS_PROFILE`` (default ``ci``):

* ``ci``: a quick pass that keeps the whole suite, fuzzers included, well under a minute;
* ``deep``: thousands of examples and longer runs, for hunting bugs
  (``HYPOTHESIS_PROFILE=deep python -m pytest fuzz``); the per-test timeout is
  lifted;
* ``dev``: fewer examples than ``ci``, for a fast edit-test loop.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")

settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "deep",
    max_examples=3000,
    stateful_step_count=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.load_profile(PROFILE)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if PROFILE == "deep":
        for item in items:
            item.add_marker(pytest.mark.timeout(0))

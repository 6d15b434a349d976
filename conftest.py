"""Settings shared by every test: tests/, and the lifecycle fuzzers in fuzz/.

Hypothesis profiles, chosen with ``HYPOTHESIS_PROFILE`` (default ``ci``):

* ``ci``: a quick pass that keeps the whole suite, fuzzers included, well under a minute;
* ``deep``: thousands of examples and longer runs, for hunting bugs
  (``HYPOTHESIS_PROFILE=deep python -m pytest fuzz``); the per-test timeout is
  lifted;
* ``dev``: fewer examples than ``ci``, for a fast edit-test loop.

Every skip says why. pytest-trio runs an async test in a nursery, so a ``pytest.skip(why)``
there reaches it inside an exception group, and it skips again with no reason: the summary
said only ``_pytest/python.py:187: Skipped``. :func:`pytest_runtest_makereport` puts the
reason (and the line that skipped) back, and fails a test that skips without one.
"""

from __future__ import annotations

import os
from collections.abc import Generator

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


#: What a skip's report says when the skip gave no reason (``pytest.skip()``, a bare
#: ``@pytest.mark.skip``), stripped.
_NO_REASON = ("", "Skipped", "Skipped:", "Skipped: unconditional skip")


def _skip_in_a_group(exc: BaseException) -> pytest.skip.Exception | None:
    """The one skip of the exception group that ``exc`` was raised while handling (how
    pytest-trio re-raises a skip from a test's nursery), if there is one."""
    group = exc.__context__
    if not isinstance(group, BaseExceptionGroup):
        return None
    leaves: list[BaseException] = []
    pending: list[BaseException] = [group]
    while pending:
        inner = pending.pop()
        if isinstance(inner, BaseExceptionGroup):
            pending.extend(inner.exceptions)
        else:
            leaves.append(inner)
    if len(leaves) == 1 and isinstance(leaves[0], pytest.skip.Exception):
        return leaves[0]
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if not report.skipped or call.excinfo is None or not isinstance(report.longrepr, tuple):
        return report
    path, lineno, message = report.longrepr
    if message.strip() not in _NO_REASON:
        return report
    skip = _skip_in_a_group(call.excinfo.value)
    if skip is not None:
        # Where the test skipped: the last frame of the skip's traceback that pytest does
        # not hide (pytest.skip() itself is hidden).
        info = pytest.ExceptionInfo.from_exception(skip)
        shown = [entry for entry in info.traceback if not entry.ishidden(info)]
        if shown:
            path, lineno = str(shown[-1].path), shown[-1].lineno + 1
        if skip.msg:
            report.longrepr = (path, lineno, f"Skipped: {skip.msg}")
            return report
    report.outcome = "failed"
    where = f"{os.path.relpath(path, item.config.rootpath)}:{lineno}"
    report.longrepr = f"skipped without saying why, at {where}: give the skip a reason"
    return report

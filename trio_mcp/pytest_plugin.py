"""A pytest plugin for fuzzing MCP servers in a test suite: the ``mcp_fuzz`` fixture.

Enable it with ``pytest_plugins = ["trio_mcp.pytest_plugin"]`` in a ``conftest.py``.
"""

from ._fuzz._pytest import (
    Fuzzer as Fuzzer,
    mcp_fuzz as mcp_fuzz,
    pytest_addoption as pytest_addoption,
)

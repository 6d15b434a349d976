"""A pytest plugin for fuzzing MCP servers in a test suite: the ``mcp_fuzz`` fixture.

pytest loads it by itself wherever trio_mcp is installed (a ``pytest11`` entry point named
after this module, so that listing it in ``pytest_plugins`` as well does no harm);
``-p no:trio_mcp.pytest_plugin`` turns it off. Importing it loads nothing of the fuzzer
until a test asks for the fixture.
"""

from ._fuzz._pytest import (
    Fuzzer as Fuzzer,
    mcp_fuzz as mcp_fuzz,
    pytest_addoption as pytest_addoption,
)

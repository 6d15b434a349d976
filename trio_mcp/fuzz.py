"""The fuzzer: Hypothesis state machines that drive any MCP server (ours or anyone's) over
a real transport (a child process's stdio, or a URL) and check what it answers against the
requirements of the spec. :func:`fuzz` runs it from Trio code; the ``trio-mcp fuzz``
command and the ``mcp_fuzz`` pytest fixture (:mod:`trio_mcp.pytest_plugin`) run the same.

Needs the ``fuzz`` extra (``pip install 'trio-mcp[fuzz]'``).
"""

from ._fuzz._identities import (
    Identity as Identity,
    IdentityError as IdentityError,
    load_identities as load_identities,
    parse_identity_options as parse_identity_options,
)
from ._fuzz._invariants import (
    CHECK_CLASSES as CHECK_CLASSES,
    SECURITY_CLASSES as SECURITY_CLASSES,
    CheckClass as CheckClass,
)
from ._fuzz._replay import (
    ReplayResult as ReplayResult,
    replay_reproduction as replay_reproduction,
)
from ._fuzz._report import (
    FuzzFailure as FuzzFailure,
    FuzzReport as FuzzReport,
)
from ._fuzz._runner import (
    FuzzError as FuzzError,
    fuzz as fuzz,
)
from ._fuzz._sarif import (
    sarif_log as sarif_log,
)
from ._fuzz._settings import (
    DEFAULT_CROSSTALK_CLIENTS as DEFAULT_CROSSTALK_CLIENTS,
    DEFAULT_LEAK_MEMORY_BOUND as DEFAULT_LEAK_MEMORY_BOUND,
    DEFAULT_LEAK_REQUESTS as DEFAULT_LEAK_REQUESTS,
    DEFAULT_MAX_BODY as DEFAULT_MAX_BODY,
    DEFAULT_TIME_BUDGET as DEFAULT_TIME_BUDGET,
    FuzzOptions as FuzzOptions,
    FuzzSettings as FuzzSettings,
)
from ._fuzz._target import (
    HttpTarget as HttpTarget,
    StdioTarget as StdioTarget,
)

"""Helpers for testing code that uses trio_mcp (and for testing trio_mcp itself).

Memory pairs, ``connect`` and ``check_transport`` need nothing besides trio_mcp; the
Hypothesis strategies (``json_values``, ``strategy_for``, ...) load on first use and need
Hypothesis (the ``testing`` extra).

The fuzzer of other servers is :mod:`trio_mcp.fuzz`; the memory transport these helpers
build on is :mod:`trio_mcp.transports`' (``memory_stream_pair``, ``MemoryMessageStream``).
"""

from typing import TYPE_CHECKING

from . import _lazy
from ._testing._check_transport import (
    PairMaker as PairMaker,
    check_transport as check_transport,
)
from ._testing._connect import connect as connect
from ._testing._pairs import (
    SessionPair as SessionPair,
    memory_session_pair as memory_session_pair,
)

# What __getattr__ below loads on first use: on_first_use reads these statements.
# isort: off
if TYPE_CHECKING:
    from ._testing._strategies import (
        content_blocks as content_blocks,
        elicitation_schemas as elicitation_schemas,
        input_requests as input_requests,
    )
    from ._testing._strategies import (
        input_responses as input_responses,
        json_objects as json_objects,
        json_values as json_values,
    )
    from ._testing._strategies import (
        meta_objects as meta_objects,
        primitive_schemas as primitive_schemas,
        progress_tokens as progress_tokens,
    )
    from ._testing._strategies import (
        protocol_versions as protocol_versions,
        request_ids as request_ids,
        resource_contents as resource_contents,
    )
    from ._testing._strategies import (
        sampling_content_blocks as sampling_content_blocks,
        strategy_for as strategy_for,
        uris as uris,
    )
# isort: on

if not TYPE_CHECKING:
    __getattr__ = _lazy.on_first_use(globals())

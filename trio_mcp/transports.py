"""Transports: the :class:`MessageStream` interface and its implementations."""

from ._transports._memory import (
    MemoryMessageStream as MemoryMessageStream,
    memory_stream_pair as memory_stream_pair,
)
from ._transports._stream import (
    MessageStream as MessageStream,
    Received as Received,
)

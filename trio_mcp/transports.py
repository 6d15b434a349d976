"""Transports: the :class:`MessageStream` interface and its implementations."""

from ._transports._lines import (
    DEFAULT_MAX_MESSAGE_SIZE as DEFAULT_MAX_MESSAGE_SIZE,
)
from ._transports._lines import (
    DEFAULT_SEND_BUFFER as DEFAULT_SEND_BUFFER,
)
from ._transports._lines import (
    LineMessageStream as LineMessageStream,
)
from ._transports._lines import (
    connect_line_stream as connect_line_stream,
)
from ._transports._lines import (
    open_line_stream as open_line_stream,
)
from ._transports._memory import (
    MemoryMessageStream as MemoryMessageStream,
)
from ._transports._memory import (
    memory_stream_pair as memory_stream_pair,
)
from ._transports._stream import (
    MessageStream as MessageStream,
)
from ._transports._stream import (
    Received as Received,
)

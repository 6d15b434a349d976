"""Transports: the :class:`MessageStream` interface and its implementations."""

from ._transports._lines import (
    DEFAULT_MAX_MESSAGE_SIZE as DEFAULT_MAX_MESSAGE_SIZE,
    DEFAULT_SEND_BUFFER as DEFAULT_SEND_BUFFER,
    LineMessageStream as LineMessageStream,
    LineStreamOptions as LineStreamOptions,
    connect_line_stream as connect_line_stream,
    open_line_stream as open_line_stream,
)
from ._transports._memory import (
    MemoryMessageStream as MemoryMessageStream,
    memory_stream_pair as memory_stream_pair,
)
from ._transports._process import (
    INHERITED_ENVIRONMENT as INHERITED_ENVIRONMENT,
    ProcessMessageStream as ProcessMessageStream,
    connect_process_stream as connect_process_stream,
    default_environment as default_environment,
    open_process_stream as open_process_stream,
)
from ._transports._process_options import ProcessOptions as ProcessOptions
from ._transports._stderr import (
    DEFAULT_STDERR_RATE as DEFAULT_STDERR_RATE,
    DEFAULT_STDERR_TAIL_LINES as DEFAULT_STDERR_TAIL_LINES,
    STDERR_DROP_PAUSE as STDERR_DROP_PAUSE,
    StderrStatistics as StderrStatistics,
)
from ._transports._stdio_server import (
    StdioServerStreamOptions as StdioServerStreamOptions,
    connect_stdio_server_stream as connect_stdio_server_stream,
    open_stdio_server_stream as open_stdio_server_stream,
)
from ._transports._stream import (
    MessageStream as MessageStream,
    MessageTooLarge as MessageTooLarge,
    Received as Received,
)

"""The sans-IO protocol core: lifecycle tables, the connection state machine, the modern
request envelope and era detection. Nothing here does I/O or imports Trio."""

from ._protocol._connection import Connection as Connection
from ._protocol._envelope import (
    CLIENT_CAPABILITIES as CLIENT_CAPABILITIES,
    CLIENT_INFO as CLIENT_INFO,
    LOG_LEVEL as LOG_LEVEL,
    PROGRESS_TOKEN as PROGRESS_TOKEN,
    PROTOCOL_VERSION as PROTOCOL_VERSION,
    SERVER_INFO as SERVER_INFO,
    SUBSCRIPTION_ID as SUBSCRIPTION_ID,
    Envelope as Envelope,
    declares_modern_version as declares_modern_version,
    read_envelope as read_envelope,
    write_envelope as write_envelope,
)
from ._protocol._era import (
    EraVerdict as EraVerdict,
    judge_probe as judge_probe,
)
from ._protocol._events import (
    CancelRequested as CancelRequested,
    Dispatch as Dispatch,
    Dropped as Dropped,
    InboundRequest as InboundRequest,
    NotificationReceived as NotificationReceived,
    OutboundRequest as OutboundRequest,
    PeerCancelled as PeerCancelled,
    ProgressReceived as ProgressReceived,
    ReceiveEvent as ReceiveEvent,
    Reply as Reply,
    ResponseReceived as ResponseReceived,
    Statistics as Statistics,
)
from ._protocol._lifecycle import (
    ACCEPTED as ACCEPTED,
    SENDABLE as SENDABLE,
    TRANSITIONS as TRANSITIONS,
    Event as Event,
    Phase as Phase,
    Side as Side,
    accepts as accepts,
    may_send as may_send,
    mermaid as mermaid,
    next_phase as next_phase,
)
from ._versions import (
    FIRST_MODERN_VERSION as FIRST_MODERN_VERSION,
    LATEST_LEGACY_VERSION as LATEST_LEGACY_VERSION,
    LATEST_VERSION as LATEST_VERSION,
    LEGACY_VERSIONS as LEGACY_VERSIONS,
    MODERN_VERSIONS as MODERN_VERSIONS,
    SUPPORTED_VERSIONS as SUPPORTED_VERSIONS,
    Era as Era,
    allows_batches as allows_batches,
    era_of as era_of,
)

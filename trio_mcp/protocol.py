"""The sans-IO protocol core: lifecycle tables, the connection state machine, the modern
request envelope and era detection. Nothing here does I/O or imports Trio."""

from ._protocol._connection import Connection as Connection
from ._protocol._envelope import (
    CLIENT_CAPABILITIES as CLIENT_CAPABILITIES,
)
from ._protocol._envelope import (
    CLIENT_INFO as CLIENT_INFO,
)
from ._protocol._envelope import (
    LOG_LEVEL as LOG_LEVEL,
)
from ._protocol._envelope import (
    PROGRESS_TOKEN as PROGRESS_TOKEN,
)
from ._protocol._envelope import (
    PROTOCOL_VERSION as PROTOCOL_VERSION,
)
from ._protocol._envelope import (
    SERVER_INFO as SERVER_INFO,
)
from ._protocol._envelope import (
    SUBSCRIPTION_ID as SUBSCRIPTION_ID,
)
from ._protocol._envelope import (
    Envelope as Envelope,
)
from ._protocol._envelope import (
    declares_modern_version as declares_modern_version,
)
from ._protocol._envelope import (
    read_envelope as read_envelope,
)
from ._protocol._envelope import (
    write_envelope as write_envelope,
)
from ._protocol._era import (
    EraCache as EraCache,
)
from ._protocol._era import (
    EraVerdict as EraVerdict,
)
from ._protocol._era import (
    judge_probe as judge_probe,
)
from ._protocol._events import (
    CancelRequested as CancelRequested,
)
from ._protocol._events import (
    Dispatch as Dispatch,
)
from ._protocol._events import (
    Dropped as Dropped,
)
from ._protocol._events import (
    InboundRequest as InboundRequest,
)
from ._protocol._events import (
    NotificationReceived as NotificationReceived,
)
from ._protocol._events import (
    OutboundRequest as OutboundRequest,
)
from ._protocol._events import (
    PeerCancelled as PeerCancelled,
)
from ._protocol._events import (
    ProgressReceived as ProgressReceived,
)
from ._protocol._events import (
    ReceiveEvent as ReceiveEvent,
)
from ._protocol._events import (
    Reply as Reply,
)
from ._protocol._events import (
    ResponseReceived as ResponseReceived,
)
from ._protocol._events import (
    Statistics as Statistics,
)
from ._protocol._lifecycle import (
    ACCEPTED as ACCEPTED,
)
from ._protocol._lifecycle import (
    SENDABLE as SENDABLE,
)
from ._protocol._lifecycle import (
    TRANSITIONS as TRANSITIONS,
)
from ._protocol._lifecycle import (
    Event as Event,
)
from ._protocol._lifecycle import (
    Phase as Phase,
)
from ._protocol._lifecycle import (
    Role as Role,
)
from ._protocol._lifecycle import (
    accepts as accepts,
)
from ._protocol._lifecycle import (
    may_send as may_send,
)
from ._protocol._lifecycle import (
    mermaid as mermaid,
)
from ._protocol._lifecycle import (
    next_phase as next_phase,
)
from ._versions import (
    FIRST_MODERN_VERSION as FIRST_MODERN_VERSION,
)
from ._versions import (
    LATEST_LEGACY_VERSION as LATEST_LEGACY_VERSION,
)
from ._versions import (
    LATEST_VERSION as LATEST_VERSION,
)
from ._versions import (
    LEGACY_VERSIONS as LEGACY_VERSIONS,
)
from ._versions import (
    MODERN_VERSIONS as MODERN_VERSIONS,
)
from ._versions import (
    SUPPORTED_VERSIONS as SUPPORTED_VERSIONS,
)
from ._versions import (
    Era as Era,
)
from ._versions import (
    allows_batches as allows_batches,
)
from ._versions import (
    era_of as era_of,
)

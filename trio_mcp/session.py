"""The Trio session engine: runs a protocol connection over a message stream."""

from ._session._engine import (
    HANDBACK_DELAY as HANDBACK_DELAY,
    LATER as LATER,
    Admission as Admission,
    Call as Call,
    ImmediateHandler as ImmediateHandler,
    NotificationHandler as NotificationHandler,
    ProgressCallback as ProgressCallback,
    RequestHandler as RequestHandler,
    Session as Session,
    connect_session as connect_session,
    open_session as open_session,
)
from ._session._options import (
    SessionOptions as SessionOptions,
    SessionSettings as SessionSettings,
)
from ._session._waiter import PROGRESS_BUFFER as PROGRESS_BUFFER

"""The Trio session engine: runs a protocol connection over a message stream."""

from ._session._call import Call as Call
from ._session._engine import (
    ImmediateHandler as ImmediateHandler,
    NotificationHandler as NotificationHandler,
    RequestHandler as RequestHandler,
    Session as Session,
    connect_session as connect_session,
    open_session as open_session,
)
from ._session._inbound import (
    LATER as LATER,
    Admission as Admission,
)
from ._session._options import (
    SessionOptions as SessionOptions,
    SessionSettings as SessionSettings,
)
from ._session._outbound import ProgressCallback as ProgressCallback
from ._session._reader import HANDBACK_DELAY as HANDBACK_DELAY
from ._session._waiter import PROGRESS_BUFFER as PROGRESS_BUFFER

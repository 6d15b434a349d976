"""The Trio session engine: runs a protocol connection over a message stream."""

from ._session._engine import (
    Call as Call,
)
from ._session._engine import (
    NotificationHandler as NotificationHandler,
)
from ._session._engine import (
    ProgressCallback as ProgressCallback,
)
from ._session._engine import (
    RequestHandler as RequestHandler,
)
from ._session._engine import (
    Session as Session,
)
from ._session._engine import (
    connect_session as connect_session,
)
from ._session._engine import (
    open_session as open_session,
)
from ._session._waiter import PROGRESS_BUFFER as PROGRESS_BUFFER

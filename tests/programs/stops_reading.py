"""Never reads its stdin (SIGTERM stops it): the client's sends must block, not pile up."""

import _common

_common.announce()
_common.sleep_forever()

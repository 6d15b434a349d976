"""Well behaved: echoes every line, exits as soon as stdin ends."""

import _common

_common.announce()
_common.echo_until_eof()

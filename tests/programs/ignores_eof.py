"""Echoes, but goes on running when stdin ends (SIGTERM still stops it)."""

import _common

_common.announce()
_common.echo_until_eof()
_common.sleep_forever()

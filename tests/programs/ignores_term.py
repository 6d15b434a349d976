"""Ignores both the end of stdin and SIGTERM: only SIGKILL stops it."""

import signal

import _common

signal.signal(signal.SIGTERM, signal.SIG_IGN)
_common.announce()
_common.echo_until_eof()
_common.sleep_forever()

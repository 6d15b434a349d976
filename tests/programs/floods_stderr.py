"""Writes megabytes to stderr (far more than a pipe holds) before it answers anything, with
one very long line among them; then echoes and exits when stdin ends. Against a client that
does not drain stderr it would block for ever."""

import sys

import _common

_common.announce()
err = sys.stderr.buffer
for n in range(20_000):
    err.write(b"noise %06d %s\n" % (n, b"." * 90))
err.write(b"L" * 100_000 + b"\n")
err.write(b"flood done\n")
err.flush()
_common.echo_until_eof()

"""Starts a grandchild that shares its stdio and ignores both the end of stdin and SIGTERM
(think of an ``npx`` wrapper's ``node``). The peer itself ignores the end of stdin but dies
on SIGTERM, so the grandchild is left over when the peer is gone."""

import _common

grandchild = _common.spawn_child(ignore_term=True, inherit_stdio=True)
_common.announce(grandchild=grandchild)
_common.echo_until_eof()
_common.sleep_forever()

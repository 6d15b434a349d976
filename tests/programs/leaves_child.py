"""Well behaved itself (exits when stdin ends) but leaves a helper process running behind
it, which a client that only waits for its child would never notice."""

import _common

helper = _common.spawn_child(ignore_term=False, inherit_stdio=False)
_common.announce(helper=helper)
_common.echo_until_eof()

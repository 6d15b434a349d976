"""The shared state of a fleet of workers that serve as one server (see :mod:`trio_mcp.fleet`):
``_state`` is the backend's configuration, ``_keys`` the ``requestState`` keys kept in Redis,
``_relay`` the change notifications carried between workers, ``_fleet`` what runs them for a
served app."""

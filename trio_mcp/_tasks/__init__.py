"""The ``io.modelcontextprotocol/tasks`` extension: task records and the stores that keep
them (memory, SQLite, Redis)."""

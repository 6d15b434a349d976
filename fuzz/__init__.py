"""Our own Hypothesis fuzzers of the JSON-RPC lifecycle (the sans-IO core and the session
engine), a suite of their own: ``python -m pytest fuzz``. See README.md here."""

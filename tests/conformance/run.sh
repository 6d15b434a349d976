#!/usr/bin/env bash
# Run the official MCP conformance suite against trio_mcp.
#
#   tests/conformance/run.sh server    # the fixture server, spec versions 2025-11-25 and 2026-07-28
#   tests/conformance/run.sh client    # the fixture client (auth/* skipped)
#   tests/conformance/run.sh all       # both (what CI runs)
#
# Options are run.py's (--spec-version, --scenario, --jobs, --timeout, -o DIR, -v).
# PYTHON must be an interpreter with trio_mcp's dependencies (default: python3).
# The harness is installed with npm into $TRIO_MCP_CONFORMANCE_HOME
# (default ~/.cache/trio-mcp-conformance) on first use.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "${PYTHON:-python3}" "$here/run.py" "$@"

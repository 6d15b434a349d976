"""The Skills extension (SEP-2640, ``io.modelcontextprotocol/skills``): both sides.

``_format`` is what both sides agree on (names, frontmatter, digests, limits);
``_catalog`` builds skills from files; ``_serving`` answers the extension's methods
on a :class:`~trio_mcp.Server`; ``_fetching`` lists, gets and verifies skills from a
:class:`~trio_mcp.Client`. The public names are in :mod:`trio_mcp.skills`.
"""

"""The MCP server and host hooks (issue 25, docs/mcp.md).

- ``agent-memory mcp``: the five memory tools over the Model Context Protocol, on stdio (identity
  from the launch configuration) or streamable HTTP (identity from an API key);
- ``agent-memory keys``: create, list and revoke those keys (model keys and host keys);
- ``agent-memory hook EVENT``: a host's hook (Claude Code's shape) reports its conversation, which
  becomes a memory session whose end runs extraction over the real transcript.

Importing this package loads nothing of the MCP SDK: only :mod:`.protocol`, :mod:`.stdio`,
:mod:`.http_sessions` and :mod:`.http_app` need it (the ``mcp`` extra), so the admin app and the
key and hook commands work without it.
"""

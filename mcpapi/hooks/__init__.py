"""Command hooks: a team's checks, described per plugin in han-config.json, run as MCP tools."""

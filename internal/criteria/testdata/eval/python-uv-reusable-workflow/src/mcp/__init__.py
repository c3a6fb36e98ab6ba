"""Model Context Protocol SDK."""

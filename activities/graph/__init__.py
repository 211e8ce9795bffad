"""The knowledge graph's activities, rendering and tool (docs/people.md, Knowledge graph)."""

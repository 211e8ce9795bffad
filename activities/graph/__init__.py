"""The knowledge graph: extraction, rendering and its context source (docs/people.md).

Its tool, ``query_graph``, is still among the built-ins (``activities.tools.builtin.graph``).
"""

"""Image generation: the render activities and the context source noting renders (spec §4.6)."""

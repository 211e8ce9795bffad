"""Live voice on the worker's side: the transport adapter that dials, and the place_call tool."""

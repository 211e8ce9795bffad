"""Live voice under ``persyn serve``: the OpenAI-compatible endpoint a voice transport calls."""

"""Residue: the synthesis pass at each conversation's end, and its standing block in context."""

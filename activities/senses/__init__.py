"""The senses: pictures captioned and recordings transcribed, as text for the turn (§4 step 1)."""

"""Observations (§4.4): reconciling extracted facts with what the agent already believes."""

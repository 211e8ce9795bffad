"""Observations (§4.4): reconciling extracted facts with what the agent already believes.

``source`` is their context source, ``dossier`` the summary of one person's facts.
"""

"""Telegram's inbound side: updates read by long polling become the agent's inbound events.

``python -m teamchat.telegram`` (or ``persyn telegram run``) runs the poller; the stack's
supervisor starts it when ``[telegram]`` is configured (``registration.py``, listed in
:mod:`teamchat.registry`). See docs/channels-telegram.md.
"""

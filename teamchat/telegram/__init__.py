"""Telegram's inbound side: updates read by long polling become the agent's inbound events.

``python -m teamchat.telegram`` (or ``persyn telegram run``) runs the poller; the stack's
supervisor starts it when ``[telegram]`` is configured (its registration in
:mod:`workers.channel_processes`). See docs/channels-telegram.md.
"""

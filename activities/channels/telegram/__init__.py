"""The Telegram channel's outbound side: the bot client, the adapter and its error mapping.

The inbound side (the long-polling process) is :mod:`teamchat.telegram`; see
docs/channels-telegram.md.
"""

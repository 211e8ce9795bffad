"""Team-chat channels: processes that read a chat service and hand its messages to an agent.

Each service's inbound side lives here (``teamchat.telegram``); its outbound side is a channel
adapter in ``activities/channels/``, which the worker's delivery uses.
"""

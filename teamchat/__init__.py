"""Inbound channels: processes that read a chat service and hand its messages to an agent.

Each service's inbound side is a folder here (``teamchat.telegram``) and one registration in
:mod:`workers.channel_processes`, through which the stack's supervisor runs it, ``persyn down``
stops it and ``persyn status`` reports it. Its outbound side is a channel adapter in
``activities/channels/``, which the worker's delivery uses.
"""

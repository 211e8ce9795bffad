"""The chaos soak: agents talking while the worker, Temporal and PostgreSQL are killed.

:mod:`systemtests.soak.report` is the command and renders the figures; ``run`` drives the
traffic and the faults on ``stack``, ``load`` and ``hostile`` are the traffic, ``script`` the
scripted model's words, ``checks`` and ``retention`` the invariants.
"""

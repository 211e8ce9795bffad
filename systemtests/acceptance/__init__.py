"""The §9 acceptance week: one agent, a compressed week, eleven behaviours judged.

:mod:`systemtests.acceptance.run` lists the behaviours and runs the week; ``world`` is its
private stack, ``week`` the shared vocabulary and verdicts, ``recall`` and ``conduct`` the
behaviours, ``script`` the scripted model's words and ``checks`` the reading of the evidence.
"""

"""Skills: folders of procedural know-how the agent loads by progressive disclosure.

``format`` reads and writes ``SKILL.md``, ``library`` keeps each agent's library (supplied
skills copied in, protected ones restored), ``source`` is the catalogue in the prompt, ``tools``
the skill tools, and ``wiring`` builds both (the feature owns its source, tools and wiring).
"""

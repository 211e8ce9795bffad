"""Skills: folders of procedural know-how the agent loads by progressive disclosure.

``format`` reads and writes ``SKILL.md``, ``library`` keeps each agent's library (supplied
skills copied in, protected ones restored), ``wiring`` builds the tools and the context source.
"""

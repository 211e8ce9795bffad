"""Tools the agent can call: the registry, the built-ins and the activity that runs a call."""

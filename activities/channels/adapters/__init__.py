"""Channel adapters: how an outbox message reaches the people on a channel (spec §3, §4.5)."""

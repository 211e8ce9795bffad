"""The agent's emotional state (spec §4.9): classify after each exchange, decay, let it matter."""

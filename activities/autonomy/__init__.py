"""Self-initiated cognition: firings of reminders and heartbeats, self-assessment, goals, facts."""

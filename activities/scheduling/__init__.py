"""Temporal Schedules for reminders and heartbeats, kept in step with their durable records."""

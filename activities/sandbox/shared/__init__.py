"""Shared workspaces: the sandbox mounts of each member, and the attribution of its changes."""

"""Guardrails over interaction history (spec §4.10): rules, detectors, evaluation, actions."""

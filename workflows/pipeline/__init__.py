"""The steps of ``ActivationWorkflow``, one module each (workflow-side code, deterministic).

Each step is an async function called from inside the activation workflow; it schedules the
activities it needs and returns a small typed value. Keeping them apart lets each capability
(memory, deliberation, tools) grow in its own module without touching the others.
"""

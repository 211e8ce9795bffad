"""Client-side use cases shared by every channel: the CLI now, web and team-chat channels next.

Each function takes keyword-only arguments and returns typed values; none prints. Callers parse
their own input and present the result, so a second channel never copies a sequence of steps.
"""

"""``persyn console``: the operator's full-screen seat, a Textual client of the use cases.

One module per part of the screen: the app and its keys (``app``), the transcript and its
bubbles (``transcript``), the composer (``composer``), the side panel (``side_panel``), one
turn told live (``turn``), the channel's unprompted messages and the link's health (``feed``),
the directory, dialog and trace screens, the approval prompt (``approvals``), and the
connection to the deployment every one of them reads through (``session``).
"""

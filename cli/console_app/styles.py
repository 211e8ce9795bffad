"""How the console looks: Textual CSS for its screens and bubbles."""

CSS = """
#title { height: 1; background: $primary; color: $text; padding: 0 1; }
#main { width: 1fr; }
#transcript { height: 1fr; padding: 0 1; }
#link { height: auto; color: $warning; padding: 0 1; }
#link.ok { display: none; }
Composer { height: auto; max-height: 10; min-height: 3; }
#side { width: 38; padding: 0 1; border-left: solid $primary; }
.you { color: $text-muted; margin-top: 1; }
.unprompted { color: $success; margin-top: 1; }
.notice { color: $text-muted; }
.error { color: $error; }
.turn { height: auto; }
.turn:focus { background: $boost; }
.turn .head { color: $accent; }
.turn .draft { color: $text-muted; }
.turn .revising { text-style: italic; }
.turn .silent { color: $text-muted; text-style: italic; }
.turn .tools { color: $secondary; display: none; }
.approval { height: auto; border: round $warning; }
.approval:focus { background: $boost; }
#directory { width: 40%; }
"""

"""The composer, pinned under the transcript: multi-line text, Enter sends, history, paste.

Enter sends; Ctrl+J (or Alt+Enter, where the terminal tells them apart) starts a new line;
pasted text keeps its lines. Up on the first line and Down on the last walk through what was
sent before. Sending does not clear the text: the app clears it once the message is on its
way, so a refusal or a stack that is away loses nothing typed.
"""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.widgets import TextArea

NEWLINE_KEYS = {"ctrl+j", "alt+enter", "shift+enter"}


class Composer(TextArea):
    """Where the operator writes."""

    class Submitted(Message):
        """The operator pressed Enter on ``text``."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus")
        self.sent_texts: list[str] = []
        self._back = 0
        self._unsent = ""

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            if self.text.strip():
                self.post_message(self.Submitted(self.text))
            return
        if event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        if event.key == "up" and self.cursor_location[0] == 0 and self._walk(1):
            event.stop()
            event.prevent_default()
            return
        last_row = self.document.line_count - 1
        if event.key == "down" and self.cursor_location[0] == last_row and self._walk(-1):
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

    def _walk(self, step: int) -> bool:
        """Show an older (``step`` 1) or newer (-1) sent text; whether there was one."""
        back = self._back + step
        if back < 0 or back > len(self.sent_texts):
            return False
        if self._back == 0:
            self._unsent = self.text
        self._back = back
        self.load_text(self._unsent if back == 0 else self.sent_texts[-back])
        self.move_cursor(self.document.end)
        return True

    def sent(self, text: str) -> None:
        """``text`` is on its way: remember it and clear the composer."""
        if not self.sent_texts or self.sent_texts[-1] != text:
            self.sent_texts.append(text)
        self._back = 0
        self._unsent = ""
        self.load_text("")

    def restore(self, text: str) -> None:
        """Put back ``text`` that could not be sent, unless something new was typed since."""
        if not self.text.strip():
            self.load_text(text)
            self.move_cursor(self.document.end)

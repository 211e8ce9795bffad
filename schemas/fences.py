"""The context fence's tag, and the rule that its markup never leaves the platform.

A prompt sets untrusted text apart between ``<material ...>`` and ``</material>``
(``activities.context.fencing``). A model may echo that markup in what it writes (a small one
did: ``<material source="quick_facts,"`` opened its reply). The markup means nothing to the
person reading, and it would come back in a later prompt as text that looks like a fence, so
every message the agent sends has it removed (:func:`without_fence_tags`) before it is
recorded and queued. What the tags held stays: the model may quote its own memory.
"""

from __future__ import annotations

import re

TAG = "material"
"""The fence's tag: ``<material ...>`` opens a block, ``</material>`` closes it."""

_TAG_MARKUP = re.compile(rf"<\s*/?\s*{TAG}\b[^<>\n]*>?", re.IGNORECASE)
"""An opening or closing tag with whatever attributes follow on its line, closed by ``>`` or
not (an echo is often cut short)."""


def without_fence_tags(text: str) -> str:
    """``text`` with every fence tag removed; unchanged when it holds none.

    A line left empty by the removal goes too. If nothing would be left, the text is returned
    with the tags made inert instead (their ``<`` as ``[``), so a reply is never emptied.
    """
    if _TAG_MARKUP.search(text) is None:
        return text
    lines = []
    for line in text.split("\n"):
        kept = _TAG_MARKUP.sub("", line)
        if kept.strip() or not line.strip():  # drop the lines that were only markup
            lines.append(kept.rstrip() if kept != line else line)
    cleaned = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    if cleaned:
        return cleaned
    return _TAG_MARKUP.sub(lambda match: "[" + match.group(0)[1:], text)

"""Whether a reply is substantive: worth a counter-perspective critique (spec §1.3).

Short acknowledgements and greetings are not critiqued: two critics and a refinement for "Good
to hear from you" buy nothing. Length is a weak proxy, so a reply of any length that speaks of
the past (what was said, agreed, remembered) counts as substantive: that is exactly where the
provenance gate earns its keep.
"""

from __future__ import annotations

import re

_SPEAKS_OF_THE_PAST = re.compile(
    r"\b(remember|recall|recollect|forgot|last (time|week|month|year|night)|yesterday|ago|"
    r"earlier|previously|before|promised|agreed|we (talked|discussed|met|spoke|decided|said)|"
    r"you (told|said|mentioned|asked|wanted)|i (told|said|mentioned|promised))\b",
    re.IGNORECASE,
)


def is_substantive(text: str, *, degraded: bool, min_words: int) -> bool:
    """Whether ``text`` gets critiqued: not the fallback, long enough or about the past."""
    if degraded or not text.strip():
        return False
    return len(text.split()) >= min_words or bool(_SPEAKS_OF_THE_PAST.search(text))

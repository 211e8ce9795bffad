r"""One normalisation for every detector and the fence: what a text says, not how it is spelled.

A card number with zero-width spaces between its groups, ``Ignore previous instructions`` in
fullwidth letters or with a Cyrillic ``o`` and ``e``, ``</mat\u200berial>``: each reads to a model
as the plain text, and each slipped past a detector that matched the characters as written.
So every detector (:mod:`~activities.guardrails.injection`,
:mod:`~activities.guardrails.sensitive`, the hostility score, an operator's phrases) and the
fence's neutraliser (:mod:`activities.context.fencing`) read text through :func:`normalise`:

1. NFKC: fullwidth, circled, superscript and other compatibility forms become the plain ones
   (fullwidth ``4111`` is ``4111``, fullwidth ``SYSTEM:`` is ``SYSTEM:``, a no-break space is
   a space).
2. Format characters (category Cf: zero-width spaces and joiners, soft hyphens, bidirectional
   controls, tags) and the other default-ignorable code points are removed, as are control
   characters: none of them shows.
3. Whitespace runs collapse to one space, or to one line break when the run holds one (so a
   pattern anchored at a line's start still is).
4. Confusables fold to their skeleton (Unicode TS #39, from ICU's spoof checker): each
   character outside ASCII becomes the ASCII its skeleton is, once its case is folded, and
   combining marks are dropped (``ignore`` spelled with Cyrillic letters, and ``i\u0301gnore``,
   are ``ignore``). ASCII itself is left as it is: TS #39 folds ``m`` to ``rn`` and ``0`` to
   ``O``, which is right for telling two names apart and wrong for reading a card number.

The result is for matching, never for showing: it drops what a reader would not see and keeps
what they would. :func:`normalised` also says, for each character it returns, which character
of the original it came from, so the fence can disarm a delimiter in the text as written.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from icu import SpoofChecker  # type: ignore[import-untyped]

LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
"""Characters that end a line; a whitespace run holding one collapses to ``\\n``."""

# Default-ignorable code points outside category Cf (Unicode's DerivedCoreProperties): the
# combining grapheme joiner, Hangul fillers, Khmer inherent vowels, variation selectors, and
# the unassigned ranges reserved as ignorable.
_IGNORABLE = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
_SPECIAL = re.compile(r"[^\t\n\x20-\x7e]")
"""What :func:`_fold` must look at: everything but printable ASCII, tabs and line feeds."""
_VISIBLE_RUN = re.compile(r"[\x21-\x7e]+|.", re.DOTALL)
_BREAK_RUN = re.compile(r"[ \t]*\n\s*")
_SPACE_RUN = re.compile(r"[ \t]{2,}|\t")

_checker = SpoofChecker()


@dataclass(frozen=True)
class Normalised:
    """A text as the detectors read it, traced back to the text as written.

    Attributes:
        text: The normalised text.
        origin: For each character of ``text``, the index in the original of the character it
            came from (a collapsed whitespace run: its first character).
    """

    text: str
    origin: tuple[int, ...]


def ignorable(char: str) -> bool:
    """Whether ``char`` shows nothing: a format, control or other default-ignorable character."""
    if char.isspace():
        return False
    category = unicodedata.category(char)
    if category in ("Cf", "Cc"):
        return True
    point = ord(char)
    return any(low <= point <= high for low, high in _IGNORABLE)


@lru_cache(maxsize=8192)
def _skeleton(char: str) -> str:
    """The ASCII a non-ASCII character reads as, or the character itself."""
    base = "".join(c for c in unicodedata.normalize("NFD", char) if unicodedata.category(c) != "Mn")
    if not base:
        return ""  # a combining mark on its own: it only decorates its neighbour
    if base.isascii():
        return base
    for candidate in (base.casefold(), base):
        folded: str = _checker.getSkeleton(0, candidate)
        folded = "".join(
            c for c in unicodedata.normalize("NFD", folded) if unicodedata.category(c) != "Mn"
        )
        if folded and folded.isascii() and folded.isprintable():
            return folded
    return char


@lru_cache(maxsize=8192)
def _fold(char: str) -> str:
    """One character normalised on its own (steps 1, 2 and 4); may be empty.

    Whitespace comes out as one space or line feed, for the caller to collapse.
    """
    out: list[str] = []
    for part in unicodedata.normalize("NFKC", char):
        if part.isspace():
            out.append("\n" if part in LINE_BREAKS else " ")
        elif ignorable(part):
            continue
        elif part.isascii():
            out.append(part)
        else:
            out.append(_skeleton(part))
    return "".join(out)


def normalise(text: str) -> str:
    """``text`` as every detector reads it (see the module's docstring)."""
    if _SPECIAL.search(text) is not None:
        # One fold per distinct character, then one pass in C: a long text repeats its letters.
        special = _SPECIAL.findall("".join(set(text)))
        text = text.translate({ord(char): _fold(char) for char in special})
    if "\n" in text:
        text = _BREAK_RUN.sub("\n", text)
    if "  " in text or "\t" in text:
        text = _SPACE_RUN.sub(" ", text)
    return text


def normalised(text: str) -> Normalised:
    """``text`` normalised, with the original position of every character it holds.

    Gives the same text as :func:`normalise`, more slowly: call it when positions matter.
    """
    chars: list[str] = []
    origin: list[int] = []
    space_at = -1  # where the pending whitespace run began, or -1
    line_break = False
    for match in _VISIBLE_RUN.finditer(text):
        index, token = match.start(), match.group(0)
        if len(token) > 1 or "!" <= token <= "~":  # visible ASCII: as it is
            if space_at >= 0:
                chars.append("\n" if line_break else " ")
                origin.append(space_at)
                space_at, line_break = -1, False
            chars.append(token)
            origin.extend(range(index, match.end()))
            continue
        for part in _fold(token):
            if part.isspace():
                if space_at < 0:
                    space_at = index
                line_break = line_break or part == "\n"
                continue
            if space_at >= 0:
                chars.append("\n" if line_break else " ")
                origin.append(space_at)
                space_at, line_break = -1, False
            chars.append(part)
            origin.append(index)
    if space_at >= 0:
        chars.append("\n" if line_break else " ")
        origin.append(space_at)
    return Normalised(text="".join(chars), origin=tuple(origin))

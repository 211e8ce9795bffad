"""The ``read_url`` tool: a page's main text, extracted by trafilatura.

Extraction (boilerplate removal, markdown output) is trafilatura's job, not ours; plain text
bodies pass through as they are.
"""

from __future__ import annotations

import asyncio

import trafilatura
from pydantic import Field

from activities.tools.registry import Tool, ToolError, ToolInput, ToolRun
from activities.tools.web.fetch import FetchError, Page, UrlRefusedError, fetch_page
from schemas.web import ReadUrlResult, WebSettings


class ReadUrlInput(ToolInput):
    """Input of ``read_url``."""

    url: str = Field(max_length=2000, description="An absolute http or https URL.")


def _decode(page: Page) -> str:
    return page.body.decode("utf-8", errors="replace")


def extract(page: Page) -> tuple[str | None, str]:
    """The page's title and main text (markdown for HTML)."""
    raw = _decode(page)
    if "html" not in page.content_type and "xml" not in page.content_type:
        return None, raw
    text = trafilatura.extract(raw, output_format="markdown", include_links=True, favor_recall=True)
    metadata = trafilatura.extract_metadata(raw)
    title = metadata.title if metadata is not None else None
    return title, text or ""


class ReadUrl(Tool):
    """Read a web page within the configured size and time caps."""

    name = "read_url"
    description = (
        "Read a web page and return its main text as markdown (navigation and boilerplate "
        "removed). Public addresses only, unless the operator allows their own network."
    )
    input_model = ReadUrlInput
    output_model = ReadUrlResult

    def __init__(self, settings: WebSettings):
        self._settings = settings

    async def run(self, call: ToolRun, args: ReadUrlInput) -> ReadUrlResult:
        """Fetch, then extract on a thread (parsing a large page takes a while)."""
        try:
            page = await fetch_page(args.url, self._settings)
        except (UrlRefusedError, FetchError) as err:
            raise ToolError(str(err)) from None
        title, text = await asyncio.to_thread(extract, page)
        if not text.strip():
            raise ToolError(f"{page.url} has no readable text")
        cut = len(text) > self._settings.max_chars
        note = _note(page, cut, self._settings)
        return ReadUrlResult(
            url=page.url,
            title=title,
            text=text[: self._settings.max_chars],
            truncated=note is not None,
            note=note,
        )


def _note(page: Page, text_cut: bool, settings: WebSettings) -> str | None:
    """Which caps cut the result, in words the model can act on; ``None`` when none did."""
    notes = []
    if page.truncated:
        unpacked = f" ({page.encoding}-compressed, counted unpacked)" if page.encoding else ""
        notes.append(
            f"the page is larger than {settings.max_bytes:,} bytes{unpacked} (web.max_bytes): "
            "only its start was read"
        )
    if text_cut:
        notes.append(f"the text was cut at {settings.max_chars:,} characters (web.max_chars)")
    return "; ".join(notes) or None

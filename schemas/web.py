"""The web on the wire: its settings and what the web tools return.

Three tool groups, each behind its own switch (``docs/tools.md``, The web): ``read_url``
reads a page through an extraction library and refuses non-global addresses unless allowed;
provider-executed web search is advertised to providers that run it; ``lookup_reference``
searches a locally hosted archive of documents with full-text search.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from schemas.approvals import ApprovalWhen


class WebSettings(BaseModel):
    """The web tools (``PERSYN_WEB__*``, ``[web]`` in persyn.toml)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    read_url: bool = Field(default=True, description="Offer read_url (pages from the web).")
    allow_private: bool = Field(
        default=False,
        description="Let read_url reach loopback, private, link-local and other non-global "
        "addresses (the operator's own network). Off: such URLs are refused.",
    )
    max_bytes: int = Field(
        default=2_000_000, ge=1024, le=50_000_000, description="read_url stops reading here."
    )
    timeout_seconds: float = Field(
        default=15.0, gt=0, le=120, description="read_url's limit for the whole fetch."
    )
    max_redirects: int = Field(default=5, ge=0, le=20)
    ca_bundle: Path | None = Field(
        default=None,
        description="A PEM file of certificate authorities read_url trusts instead of the "
        "default bundle (e.g. your own CA for an internal site). Certificates are always "
        "verified; there is no switch to turn that off.",
    )
    max_chars: int = Field(
        default=12_000, ge=200, le=200_000, description="read_url cuts the extracted text here."
    )
    search: bool = Field(
        default=False,
        description="Advertise web search run by the model provider (Anthropic's server tool) "
        "to providers that offer it.",
    )
    search_max_uses: int = Field(default=3, ge=1, le=20, description="Searches per reply.")
    reference_dir: Path | None = Field(
        default=None,
        description="Folder of documents (markdown, text, html) lookup_reference searches; "
        "unset: the tool is absent.",
    )
    reference_zim: Path | None = Field(
        default=None,
        description="A ZIM file (e.g. an offline Wikipedia) lookup_reference also searches.",
    )
    reference_max_file_bytes: int = Field(
        default=5_000_000, ge=1024, le=200_000_000, description="A larger document is skipped."
    )


class ReadUrlResult(BaseModel):
    """What ``read_url`` returns: the page's main text, as markdown."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str = Field(description="The final URL, after redirects.")
    title: str | None = None
    text: str
    truncated: bool = Field(description="The body or the text was cut at a cap.")
    note: str | None = Field(
        default=None, description="What was cut and at which cap, when something was."
    )


class ReferenceHit(BaseModel):
    """One document ``lookup_reference`` found."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str = Field(description="The document, relative to the archive.")
    title: str
    excerpt: str


class ReferenceResult(BaseModel):
    """What ``lookup_reference`` returns, best match first."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    hits: list[ReferenceHit]


class ToolAvailability(BaseModel):
    """Whether a tool is offered, and why not (``persyn tools list``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    source: str = Field(description="built-in, provider, mcp:<server>, skill or sandbox.")
    available: bool
    reason: str = ""
    approval: ApprovalWhen = Field(
        default=ApprovalWhen.NEVER,
        description="When the agent's calls of it wait for a person's approval "
        "(docs/approvals.md): always, first contact, with network, or never.",
    )

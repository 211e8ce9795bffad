"""The web tools, each group behind its own setting (``docs/tools.md``, The web).

:func:`build_web` gives the registry its platform tools and provider tools; :func:`availability`
says, for ``persyn tools list``, which are offered and why any is not.
"""

from __future__ import annotations

import importlib.util
import logging
from dataclasses import dataclass, field

from activities.gateway.providers.openai_tools import WEB_SEARCH_OPTIONS
from activities.tools.registry import Tool
from schemas.models import ProviderName, ToolExecutor, ToolSpec
from schemas.settings import Settings
from schemas.web import ToolAvailability

WEB_SEARCH = "web_search"
OPENAI_WEB_SEARCH = "openai_web_search"
_ANTHROPIC_SEARCH_TYPE = "web_search_20250305"

log = logging.getLogger(__name__)


@dataclass
class WebTools:
    """What the web contributes to the registry."""

    tools: list[Tool] = field(default_factory=list)
    provider_tools: list[ToolSpec] = field(default_factory=list)


def web_search_specs(max_uses: int) -> list[ToolSpec]:
    """Web search as each provider runs it.

    Anthropic's is a server tool. OpenAI's Chat Completions (what the OpenAI adapter speaks)
    has no server tools; its dedicated search models take a ``web_search_options`` request
    option instead, which the adapter sends only to them.
    """
    description = "Search the web (run by the model provider, results returned inline)."
    return [
        ToolSpec(
            name=WEB_SEARCH,
            description=description,
            executor=ToolExecutor.PROVIDER,
            provider=ProviderName.ANTHROPIC,
            provider_type=_ANTHROPIC_SEARCH_TYPE,
            provider_config={"max_uses": max_uses},
        ),
        ToolSpec(
            name=OPENAI_WEB_SEARCH,
            description=description,
            executor=ToolExecutor.PROVIDER,
            provider=ProviderName.OPENAI,
            provider_type=WEB_SEARCH_OPTIONS,
            provider_config={"search_context_size": "medium"},
        ),
    ]


def availability(settings: Settings) -> list[ToolAvailability]:
    """Each web tool, whether it is offered, and why not."""
    web = settings.web
    extractor = _missing("trafilatura")
    read_reason = "off (PERSYN_WEB__READ_URL=false)" if not web.read_url else extractor
    out = [
        ToolAvailability(
            name="read_url", source="built-in", available=not read_reason, reason=read_reason
        ),
        ToolAvailability(
            name=WEB_SEARCH,
            source="provider",
            available=web.search,
            reason="Anthropic models only" if web.search else "off (PERSYN_WEB__SEARCH)",
        ),
        ToolAvailability(
            name=OPENAI_WEB_SEARCH,
            source="provider",
            available=web.search,
            reason="OpenAI search models only" if web.search else "off (PERSYN_WEB__SEARCH)",
        ),
    ]
    if web.reference_dir is None and web.reference_zim is None:
        reason = "no archive configured (PERSYN_WEB__REFERENCE_DIR or __REFERENCE_ZIM)"
    elif web.reference_dir is not None and not web.reference_dir.is_dir():
        reason = f"archive folder {web.reference_dir} does not exist"
    elif web.reference_zim is not None and not web.reference_zim.is_file():
        reason = f"ZIM file {web.reference_zim} does not exist"
    else:
        reason = extractor or (_missing("libzim") if web.reference_zim is not None else "")
    out.append(
        ToolAvailability(
            name="lookup_reference", source="built-in", available=not reason, reason=reason
        )
    )
    return out


def _missing(package: str) -> str:
    """Why a tool needing ``package`` is absent when it is not installed, else nothing."""
    if importlib.util.find_spec(package) is None:
        return f"{package} is not installed (pip install {package})"
    return ""


def build_web(settings: Settings) -> WebTools:
    """The web tools the settings switch on; an unusable one is left out with its reason."""
    web = settings.web
    built = WebTools()
    for row in availability(settings):
        if not row.available:
            log.info("%s absent: %s", row.name, row.reason)
        elif row.name == "read_url":
            # Imported only when offered: trafilatura and its parsers are heavy.
            from activities.tools.web.read_url import ReadUrl

            built.tools.append(ReadUrl(web))
        elif row.name == "lookup_reference":
            built.tools.append(_lookup_reference(settings))
        elif row.name in (WEB_SEARCH, OPENAI_WEB_SEARCH):
            built.provider_tools += [
                spec for spec in web_search_specs(web.search_max_uses) if spec.name == row.name
            ]
    return built


def _lookup_reference(settings: Settings) -> Tool:
    from activities.tools.web.reference import Archive, LookupReference, ReferenceArchive

    web = settings.web
    archives: list[Archive] = []
    if web.reference_dir is not None:
        archives.append(
            ReferenceArchive(web.reference_dir, max_file_bytes=web.reference_max_file_bytes)
        )
    if web.reference_zim is not None:
        from activities.tools.web.zim import ZimArchive

        archives.append(ZimArchive(web.reference_zim))
    return LookupReference(*archives)

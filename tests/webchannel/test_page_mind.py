"""The web page says which mind serves, as the CLI does (``usecases.mind``)."""

from __future__ import annotations

from pathlib import Path

from schemas.settings import Settings
from usecases.mind import describe
from webchannel.app import render_page


def test_the_page_names_the_tiny_model_and_the_ways_to_a_full_agent(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, provider="local")
    page = render_page(settings)

    assert "<!--mind-->" not in page
    assert "mind: SmolLM2-135M, the built-in tiny model" in page
    assert "  - a key: set ANTHROPIC_API_KEY or OPENAI_API_KEY, then persyn up" in page
    # Each line of the CLI's description is on the page, in the same order.
    positions = [page.index(line.replace("'", "&#x27;")) for line in describe(settings)]
    assert positions == sorted(positions)


def test_a_hosted_mind_is_one_line_and_escaped(tmp_path: Path) -> None:
    settings = Settings(
        home=tmp_path, provider="openai-compatible", openai_base_url="http://h/v1?a=<b>&c"
    )
    page = render_page(settings)

    assert "http://h/v1?a=&lt;b&gt;&amp;c" in page
    assert "<b>&c" not in page

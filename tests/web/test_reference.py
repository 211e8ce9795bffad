"""lookup_reference over a small archive the test builds: markdown, text and HTML, by relevance."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from activities.tools.registry import ToolError
from activities.tools.web.reference import LookupReference, ReferenceArchive
from schemas.web import ReferenceResult
from tests.web.conftest import call


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    root = tmp_path / "archive"
    (root / "geo").mkdir(parents=True)
    (root / "geo" / "tides.md").write_text(
        "# Tides\n\nThe tidal range at Mont-Saint-Michel reaches fourteen metres.\n"
    )
    (root / "volcano.txt").write_text("Etna is an active stratovolcano on Sicily.\n")
    (root / "bridge.html").write_text(
        "<html><head><title>Millau Viaduct</title></head><body><article><p>"
        + "The Millau Viaduct is a cable-stayed bridge over the Tarn valley. " * 5
        + "</p></article></body></html>"
    )
    (root / "picture.png").write_bytes(b"\x89PNG not a document")
    return root


async def test_documents_are_found_by_their_words_with_an_excerpt(archive: Path) -> None:
    tool = LookupReference(ReferenceArchive(archive))

    result: ReferenceResult = await call(tool, query="tidal range")
    assert [(h.path, h.title) for h in result.hits] == [("geo/tides.md", "Tides")]
    assert "**tidal**" in result.hits[0].excerpt

    html: ReferenceResult = await call(tool, query="Tarn valley")
    assert [h.title for h in html.hits] == ["Millau Viaduct"]

    assert (await call(tool, query="stratovolcano")).hits[0].path == "volcano.txt"
    assert (await call(tool, query="quantum chromodynamics")).hits == []


async def test_a_new_document_is_indexed_on_the_next_search(archive: Path) -> None:
    tool = LookupReference(ReferenceArchive(archive))
    assert (await call(tool, query="fjord")).hits == []

    added = archive / "fjord.md"
    added.write_text("# Fjords\n\nSognefjord is the longest fjord in Norway.\n")
    os.utime(added, ns=(1, 1))

    assert [h.path for h in (await call(tool, query="fjord")).hits] == ["fjord.md"]


async def test_query_syntax_is_read_as_plain_words(archive: Path) -> None:
    tool = LookupReference(ReferenceArchive(archive))

    result: ReferenceResult = await call(tool, query='Etna" OR NEAR(* "sicily')
    assert result.hits == []  # no crash on FTS5 operators; the words are simply not all there
    assert (await call(tool, query="Etna Sicily")).hits[0].path == "volcano.txt"


async def test_a_missing_archive_is_said_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="not there"):
        await call(LookupReference(ReferenceArchive(tmp_path / "gone")), query="x")

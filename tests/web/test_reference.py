"""lookup_reference over a small archive the test builds: markdown, text and HTML, by relevance."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from libzim.writer import Creator, Hint, Item, StringProvider

from activities.tools.registry import ToolError
from activities.tools.web.reference import LookupReference, ReferenceArchive
from activities.tools.web.zim import ZimArchive
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


class _Page(Item):  # type: ignore[misc]  # libzim ships no types
    def __init__(self, path: str, title: str, text: str):
        super().__init__()
        self.path, self.title, self.text = path, title, text

    def get_path(self) -> str:
        return self.path

    def get_title(self) -> str:
        return self.title

    def get_mimetype(self) -> str:
        return "text/html"

    def get_contentprovider(self) -> StringProvider:
        html = f"<html><head><title>{self.title}</title></head><body><article><p>{self.text}"
        return StringProvider(html + "</p></article></body></html>")

    def get_hints(self) -> dict[Hint, bool]:
        return {Hint.FRONT_ARTICLE: True}


@pytest.fixture
def zim(tmp_path: Path) -> Path:
    path = tmp_path / "reference.zim"
    with Creator(str(path)).config_indexing(True, "eng") as creator:
        creator.set_mainpath("tides")
        creator.add_item(_Page("tides", "Tides", "Spring tides at Mont-Saint-Michel. " * 6))
        creator.add_item(_Page("etna", "Etna", "Etna is an active stratovolcano on Sicily. " * 6))
        creator.add_metadata("Title", "Test reference")
    return path


async def test_a_zim_file_is_searched_with_its_own_full_text_index(
    zim: Path, archive: Path
) -> None:
    tool = LookupReference(ReferenceArchive(archive), ZimArchive(zim))

    result: ReferenceResult = await call(tool, query="stratovolcano")
    assert [(h.path, h.title) for h in result.hits] == [
        ("volcano.txt", "volcano"),
        ("reference.zim:etna", "Etna"),
    ]
    assert "Sicily" in result.hits[1].excerpt


async def test_a_file_that_is_not_zim_is_said_in_one_line(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.zim"
    bogus.write_bytes(b"not a zim file at all")
    with pytest.raises(ToolError, match=r"bogus\.zim is not a readable ZIM file"):
        await call(LookupReference(ZimArchive(bogus)), query="x")

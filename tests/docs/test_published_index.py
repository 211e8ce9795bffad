"""``index.json`` tells an integrator everything it addresses and how answers come back."""

from __future__ import annotations

from contract.catalog import INDEX_FILE, SEALED_ENCODING, documents
from temporal.codec import ENCODING


def test_the_public_index_names_every_workflow_its_handlers_serve() -> None:
    files = documents(public=True)
    index = files[INDEX_FILE]
    listed = {w["type"] for w in index["workflows"]}
    assert {h["workflow"] for h in index["handlers"]} <= listed
    assert "ConversationWorkflow" in listed  # its `window` query is public
    for entry in [*index["workflows"], *index["handlers"]]:
        for field in ("input", "result"):
            if entry[field] is not None:
                assert f"{entry[field]}.json" in files, (entry, field)


def test_the_index_says_answers_come_back_sealed() -> None:
    for public in (True, False):
        index = documents(public=public)[INDEX_FILE]
        assert index["payload_encoding"] == "json/plain"
        codec = index["payload_codec"]
        assert codec["encoding"] == SEALED_ENCODING == ENCODING.decode()
        assert {"/decode", "/encode"} <= set(codec["routes"])
        assert "sealed" in codec["description"]

"""Persyn's payload converter hands an untyped payload that is not JSON to its receiver raw,
and still fails typed decoding loudly."""

from __future__ import annotations

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.common import RawValue

from schemas.events import ChannelRef
from temporal.payload_converter import TolerantPayloadConverter, tolerant_data_converter


def payload(data: bytes, encoding: bytes = b"json/plain") -> Payload:
    return Payload(metadata={"encoding": encoding}, data=data)


@pytest.mark.parametrize(
    "bad",
    [payload(b""), payload(b"not json"), payload(b"{}", b"binary/plain"), payload(b"x", b"x/y")],
)
def test_an_untyped_payload_that_is_not_json_comes_back_raw(bad: Payload) -> None:
    good = payload(b'{"a": 1}')
    values = tolerant_data_converter.payload_converter.from_payloads([good, bad])
    assert values[0] == {"a": 1}
    assert isinstance(values[1], RawValue) and values[1].payload == bad


def test_json_null_and_none_still_decode() -> None:
    converter = TolerantPayloadConverter()
    none = converter.to_payloads([None])
    assert converter.from_payloads([payload(b"null"), *none]) == [None, None]


def test_typed_decoding_still_fails_loudly() -> None:
    with pytest.raises(Exception, match=r"could not be converted|validation error"):
        TolerantPayloadConverter().from_payloads([payload(b"not json")], [ChannelRef])

"""Any stored channel key reads back as a channel or fails as a value error (the sweep's need).

The delivery sweep marks a row whose key names no channel as failed and goes on; it relies on
``channel_ref`` failing only with ``ValueError``, whatever a row holds.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from activities.channels.starting import channel_ref
from schemas.events import ChannelRef


@given(
    key=st.one_of(
        st.text(max_size=60),
        st.builds(lambda a, b: f"{a}:{b}", st.text(max_size=20), st.text(max_size=20)),
    )
)
def test_any_key_is_a_channel_or_a_value_error(key: str) -> None:
    try:
        channel = channel_ref(key)
    except ValueError:
        return
    assert isinstance(channel, ChannelRef) and channel.key == key

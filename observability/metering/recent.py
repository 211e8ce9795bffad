"""A bounded memory of recently seen record IDs, so a re-delivered record is counted once."""

from __future__ import annotations

from collections import OrderedDict


class RecentIds:
    """The last ``capacity`` IDs seen; older ones are forgotten (memory stays bounded).

    The ledger de-duplicates for ever by primary key; in-process meters only need to absorb
    the redeliveries that happen close together (a retried hand-off, a re-shipped batch).
    """

    def __init__(self, capacity: int = 50_000) -> None:
        self._capacity = capacity
        self._ids: OrderedDict[str, None] = OrderedDict()

    def first_time(self, record_id: str) -> bool:
        """Remember ``record_id``; ``False`` if it was already seen."""
        if record_id in self._ids:
            self._ids.move_to_end(record_id)
            return False
        self._ids[record_id] = None
        if len(self._ids) > self._capacity:
            self._ids.popitem(last=False)
        return True

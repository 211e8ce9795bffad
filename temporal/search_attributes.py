"""Registration of Persyn's custom search attributes (idempotent)."""

from __future__ import annotations

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.client import Client
from temporalio.common import SearchAttributeIndexedValueType
from temporalio.service import RPCError, RPCStatusCode

from contract.names import SEARCH_ATTRIBUTES


async def register(client: Client) -> list[str]:
    """Add any of Persyn's search attributes the namespace lacks; returns the names added."""
    try:
        listing = await client.operator_service.list_search_attributes(
            ListSearchAttributesRequest(namespace=client.namespace)
        )
        present = set(listing.custom_attributes)
    except RPCError as err:
        # The time-skipping test server can add search attributes but cannot list them.
        if err.status is not RPCStatusCode.UNIMPLEMENTED:
            raise
        present = set()
    missing = {
        key.name: IndexedValueType.ValueType(
            SearchAttributeIndexedValueType(key.indexed_value_type)
        )
        for key in SEARCH_ATTRIBUTES
        if key.name not in present
    }
    if missing:
        await client.operator_service.add_search_attributes(
            AddSearchAttributesRequest(namespace=client.namespace, search_attributes=missing)
        )
    return sorted(missing)

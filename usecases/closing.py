"""Close a conversation now: the client asks for a new one (the console's Ctrl+N).

The conversation workflow takes ``end_conversation`` (signed, like every internal signal),
answers the inputs already queued, forms its memory and ends; the agent's next input on that
channel opens a new conversation. A conversation already closed is left as it is.
"""

from __future__ import annotations

from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from contract import names
from schemas.guardrails import EndConversationRequest


async def close_conversation(client: Client, conversation_id: str, *, reason: str) -> bool:
    """Ask ``conversation_id`` to close after what is queued; whether it was still open."""
    handle = client.get_workflow_handle(names.conversation_workflow_id(conversation_id))
    try:
        await handle.signal(names.END_CONVERSATION, EndConversationRequest(reason=reason))
    except RPCError as err:
        if err.status is RPCStatusCode.NOT_FOUND:  # closed already: nothing to do
            return False
        raise
    return True

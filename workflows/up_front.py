"""A long-lived run asks its patches before its first local activity, so a query cannot move them.

``workflow.patched`` answers from the markers in the workflow task being replayed. A query that
reaches a run while its task waits on a local activity can make the worker complete that task
with the activity's result and nothing of what the code did after it: that code runs in the
next task, and a patch it asks is recorded there. On replay the result resolves in the first
task, the code after it runs there too, the patch is looked for in the wrong task and found
missing, and the run fails for good, live as well as on replay, once its cache is gone
("Non-deprecated patch marker encountered", or an activity result decoded as the wrong type).

The agent's inbox and a conversation are queried (integrators poll markers, operators ask for
the status), and each begins with a local activity. So each asks every patch it uses first,
before any command, where no local activity can come between: ``patched`` remembers the answer
for the rest of the run, wherever the code asks again. The gate is a patch itself: a run
recorded before it does not find its marker and asks each patch where it always did.
"""

from __future__ import annotations

from collections.abc import Iterable

from temporalio import workflow

from schemas.conversation import ConversationInput


def conversation_patched(data: ConversationInput, patch: str) -> bool:
    """``workflow.patched`` in a conversation, without asking where the run already knows.

    A run that asked every patch up front, or continued one that did, takes each: its input's
    state says so.
    """
    return (data.state is not None and data.state.asked_up_front) or workflow.patched(patch)


def ask(gate: str, patches: Iterable[str]) -> bool:
    """Ask ``patches`` now, in a run that has ``gate``'s marker; whether it has.

    Every run started since has it. A run that has it may also rely on the other part of the
    cure: values a child's ID is made from are fixed by the history, never ``workflow.now()``
    read after a local activity.
    """
    if not workflow.patched(gate):
        return False
    for patch in patches:
        workflow.patched(patch)
    return True

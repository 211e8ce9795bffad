"""All tables, imported together so ``SQLModel.metadata`` knows every one."""

from store.tables.agents import (
    Agent,
    Channel,
    ContactAddressRow,
    ContactFoldRow,
    Identity,
    Person,
)
from store.tables.approvals import ApprovalRow  # noqa: F401  (registers it)
from store.tables.autonomy import (  # noqa: F401  (registers them)
    AutonomyLogRow,
    GoalRequestRow,
    GoalRow,
    HeartbeatRow,
    PromptExtensionRow,
    QuickFactRow,
    ReminderRow,
    ToolCallRow,
)
from store.tables.codec_keys import CodecKeyRow  # noqa: F401  (registers it)
from store.tables.deliberation import ParkedConclusionRow, SpeakDecisionRow  # noqa: F401
from store.tables.delivery import PacingOverrideRow  # noqa: F401  (registers it)
from store.tables.dialog import Conversation, DialogSearchStats, DialogSearchTerm, DialogTurnRow
from store.tables.emotion import EmotionReadingRow  # noqa: F401  (registers it)
from store.tables.graph import GraphEdgeRow, GraphNodeRow  # noqa: F401  (registers them)
from store.tables.guardrails import (  # noqa: F401  (registers them)
    GuardrailCooldownRow,
    GuardrailFiringRow,
)
from store.tables.ledger import UsageDailyRow, UsageRow
from store.tables.memory import MemoryRecord
from store.tables.memory_audit import MemoryAudit, MemoryFormation  # noqa: F401  (registers them)
from store.tables.notes import NoteRow  # noqa: F401  (registers it)
from store.tables.observations import ObservationRow  # noqa: F401  (registers it)
from store.tables.residue import ResidueItemRow  # noqa: F401  (registers it)
from store.tables.runtime import (
    ActivationRow,
    DraftRow,  # noqa: F401  (registers it)
    MarkerRow,
    OutboxRow,
    PromptRow,
)
from store.tables.telegram import (  # noqa: F401  (registers them)
    TelegramInboundRow,
    TelegramOffsetRow,
    TelegramSentRow,
)
from store.tables.voice import DialIntentRow  # noqa: F401  (registers it)
from store.tables.web_tokens import WebEventRow, WebTokenRow  # noqa: F401  (registers them)
from store.tables.workspaces import (  # noqa: F401  (registers them)
    WorkspaceChangeRow,
    WorkspaceMemberRow,
    WorkspaceRow,
)

__all__ = [
    "ActivationRow",
    "Agent",
    "Channel",
    "ContactAddressRow",
    "ContactFoldRow",
    "Conversation",
    "DialogSearchStats",
    "DialogSearchTerm",
    "DialogTurnRow",
    "Identity",
    "MarkerRow",
    "MemoryRecord",
    "OutboxRow",
    "Person",
    "PromptRow",
    "UsageDailyRow",
    "UsageRow",
]

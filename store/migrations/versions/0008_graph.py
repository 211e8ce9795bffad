"""Knowledge graph: the entities in the agent's life and how they relate, with history.

Nodes are entities (a person, a place, an organisation, a thing) named once per agent and
type; ``name_key`` is the name normalised the way input text is, so mentions are matched by
an index lookup. Edges are relations learned from a conversation. A contradicted edge is
invalidated (``invalidated_at``, ``invalidated_by``: the edge that replaced it), never
deleted, so the graph answers "as of" any time. At most one active edge holds each
(source, type, target), which makes re-extracting the same exchange a no-op.

Revision ID: 0008_graph
Revises: 0002
"""

from alembic import op

revision = "0008_graph"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the node and edge tables."""
    op.execute(
        """
        CREATE TABLE graph_nodes (
            id varchar(26) PRIMARY KEY,
            agent varchar(32) NOT NULL REFERENCES agents (handle) ON DELETE CASCADE,
            type varchar(64) NOT NULL,
            name text NOT NULL,
            name_key text NOT NULL,
            attributes jsonb NOT NULL DEFAULT '{}',
            person_id varchar(26) REFERENCES people (id) ON DELETE SET NULL,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            CONSTRAINT uq_graph_node UNIQUE (agent, type, name_key)
        )
        """
    )
    op.execute("CREATE INDEX ix_graph_nodes_name ON graph_nodes (agent, name_key)")
    op.execute("CREATE INDEX ix_graph_nodes_person ON graph_nodes (person_id)")
    op.execute(
        """
        CREATE TABLE graph_edges (
            id varchar(26) PRIMARY KEY,
            agent varchar(32) NOT NULL REFERENCES agents (handle) ON DELETE CASCADE,
            type varchar(64) NOT NULL,
            source_id varchar(26) NOT NULL REFERENCES graph_nodes (id) ON DELETE CASCADE,
            target_id varchar(26) NOT NULL REFERENCES graph_nodes (id) ON DELETE CASCADE,
            conversation_id varchar(26),
            valid_from timestamptz NOT NULL,
            invalidated_at timestamptz,
            invalidated_by varchar(26)
        )
        """
    )
    op.execute(
        "CREATE UNIQUE INDEX uq_graph_edges_active ON graph_edges (source_id, type, target_id)"
        " WHERE invalidated_at IS NULL"
    )
    op.execute("CREATE INDEX ix_graph_edges_source ON graph_edges (source_id)")
    op.execute("CREATE INDEX ix_graph_edges_target ON graph_edges (target_id)")


def downgrade() -> None:
    """Drop the graph."""
    op.execute("DROP TABLE graph_edges")
    op.execute("DROP TABLE graph_nodes")

"""Contact directory: typed addresses per person, and an audit of operator folds.

A person's identities (service + channel + speaker id) stay the lookup key channels resolve
senders by; addresses are what an operator records beside them (an email, a phone) with a
type label. A name the operator gives is kept when a channel later supplies another.
Each fold the operator makes is kept: who, when, from whom, into whom.

Revision ID: 0008_contacts
Revises: 0002
"""

from alembic import op

revision = "0008_contacts"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create contact_addresses and contact_folds; mark names the operator set."""
    op.execute("ALTER TABLE people ADD COLUMN name_curated boolean NOT NULL DEFAULT false")
    op.execute(
        """
        CREATE TABLE contact_addresses (
            id varchar(26) PRIMARY KEY,
            agent varchar(32) NOT NULL,
            person_id varchar(26) NOT NULL REFERENCES people(id) ON DELETE CASCADE,
            kind varchar(32) NOT NULL,
            address text NOT NULL,
            created_at timestamptz NOT NULL,
            CONSTRAINT uq_contact_address UNIQUE (agent, person_id, kind, address)
        )
        """
    )
    op.execute("CREATE INDEX ix_contact_addresses_person ON contact_addresses (person_id)")
    op.execute(
        """
        CREATE TABLE contact_folds (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            agent varchar(32) NOT NULL,
            folded varchar(26) NOT NULL,
            survivor varchar(26) NOT NULL,
            name text NOT NULL,
            folded_by text NOT NULL,
            folded_at timestamptz NOT NULL,
            moved jsonb NOT NULL
        )
        """
    )
    op.execute("CREATE INDEX ix_contact_folds_agent ON contact_folds (agent, folded_at)")


def downgrade() -> None:
    """Drop the contact directory's tables."""
    op.execute("DROP TABLE contact_folds")
    op.execute("DROP TABLE contact_addresses")
    op.execute("ALTER TABLE people DROP COLUMN name_curated")

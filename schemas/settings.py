"""The one settings object: environment (``PERSYN_*``) over ``$PERSYN_HOME/persyn.toml``.

Reach it through :func:`get_settings`; nothing builds it at import time. Secrets are
``SecretStr`` so they never print. Workflow code must not import this module (the linter
enforces it): workflows receive what they need in their inputs.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import quote

from pydantic import (
    AliasChoices,
    Field,
    PrivateAttr,
    SecretStr,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from schemas.approvals import ApprovalSettings
from schemas.autonomy import AutonomySettings
from schemas.deliberation import DeliberationSettings
from schemas.delivery import DeliverySettings, PacingSettings
from schemas.detected_server import DetectedServer, read_detected
from schemas.emotion import EmotionSettings
from schemas.graph import GraphSettings
from schemas.guardrails import GuardrailSettings
from schemas.images import ImageSettings
from schemas.mcp import McpSettings
from schemas.memory import MemorySettings
from schemas.models import CallPlan, ModelBinding, ProviderName, TaskType
from schemas.notes import NoteSettings
from schemas.observations import ObservationSettings
from schemas.residue import ResidueSettings
from schemas.sandbox import SandboxSettings
from schemas.senses import SensesSettings
from schemas.skills import SkillSettings
from schemas.telegram import TelegramSettings
from schemas.voice import VoiceSettings
from schemas.web import WebSettings

ProviderChoice = Literal["auto", "anthropic", "openai", "openai-compatible", "local", "scripted"]
MeterName = Literal["ledger", "prometheus", "event-log"]
TraceExporterName = Literal["file", "otlp"]
ContentPolicy = Literal["full", "metadata"]
_DEFAULT_METERS: list[MeterName] = ["ledger"]


def embedded_database_dsn(port: int, password_file: Path) -> str:
    """SQLAlchemy URL of an embedded PostgreSQL on ``port``, its password in ``password_file``.

    The URL names the libpq password file rather than holding the secret (``store.embedded``).
    """
    passfile = quote(str(password_file), safe="/")
    return f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres?passfile={passfile}"


def default_home() -> Path:
    """``$PERSYN_HOME``, or ``~/.persyn``."""
    return Path(os.environ.get("PERSYN_HOME", Path.home() / ".persyn")).expanduser()


class Settings(BaseSettings):
    """Everything configurable about a Persyn deployment (see README, Configuration)."""

    model_config = SettingsConfigDict(
        env_prefix="PERSYN_", env_nested_delimiter="__", extra="ignore", frozen=True
    )

    home: Path = Field(default_factory=default_home, description="Data, logs and pid files.")
    _detected: DetectedServer | None = PrivateAttr(default=None)
    embedded: bool | None = Field(
        default=None,
        description="Start the embedded Temporal dev server and PostgreSQL; by default unless "
        "PERSYN_DATABASE_URL names an existing database.",
    )

    # Temporal
    temporal_address: str = "127.0.0.1:7233"
    temporal_namespace: str = "default"
    temporal_api_key: SecretStr | None = None
    temporal_tls: bool = False
    temporal_tls_cert: Path | None = None
    temporal_tls_key: Path | None = None
    temporal_tls_ca: Path | None = None
    temporal_ui_port: int = 8233
    internal_key: SecretStr | None = Field(
        default=None,
        description="Base64 of the 32-byte key that signs messages to internal handlers "
        "(temporal/internal_key.py). Every process of one deployment needs the same key; "
        "unset, it is read from internal_key_file.",
    )
    internal_key_file: Path | None = Field(
        default=None,
        description="Where the internal key is kept when PERSYN_INTERNAL_KEY is unset, made on "
        "first use. Default: home/keys/internal.key.",
    )
    task_queue: str = "persyn"
    # Longer than `persyn up` waits for Temporal to open its port plus the worker to serve:
    # a worker that gave up first would fail a start that was only slow (a loaded machine
    # restarting Temporal on its persisted history took over 30 s).
    worker_startup_wait_seconds: float = Field(
        default=120.0,
        ge=0,
        allow_inf_nan=False,
        description="How long a starting worker waits for PostgreSQL and Temporal to answer.",
    )
    worker_workflow_tasks: int = Field(
        default=8,
        ge=2,
        le=1000,
        description="Workflow tasks one worker runs at once. Workflow code shares one "
        "interpreter lock, so a restarted worker replaying every open run at once finishes "
        "none within the task timeout; a few at a time finish in turn.",
    )
    workflow_sandbox: bool = Field(
        default=True,
        description="Run workflow code in the determinism sandbox (off saves CPU per task).",
    )
    worker_liveness_seconds: float = Field(
        default=2.0,
        gt=0,
        allow_inf_nan=False,
        description="How often a worker renews its liveness beacon (stale after three).",
    )
    worker_standby: bool = Field(
        default=True,
        description="Keep a spare worker imported and waiting beside the worker, promoted the "
        "moment it dies (workers/standby.py): a restart then skips seconds of imports.",
    )
    worker_standby_delay_seconds: float = Field(
        # Past the 30 s a recovery is allowed: the spare's imports (about 4 s of CPU) would
        # otherwise take a core from the new worker's replay of every open run.
        default=45.0,
        ge=0,
        allow_inf_nan=False,
        description="How long a (new) worker serves before its spare starts, so the spare's "
        "imports do not compete with a recovery.",
    )
    supervisor_backoff_seconds: float = Field(
        default=1.0,
        gt=0,
        allow_inf_nan=False,
        description="First delay before the stack restarts a worker or model server that died; "
        "it doubles with each quick failure.",
    )
    supervisor_backoff_max_seconds: float = Field(
        default=60.0,
        gt=0,
        allow_inf_nan=False,
        description="Longest delay between restarts.",
    )

    # PostgreSQL
    database_url: SecretStr | None = None
    postgres_port: int = 55432
    postgres_shared_buffers: str = Field(
        default="256MB",
        pattern=r"^[0-9]+(kB|MB|GB)$",
        description="Page cache of the embedded PostgreSQL (applies at its next start).",
    )

    # Models
    provider: ProviderChoice = "auto"
    anthropic_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("PERSYN_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY")
    )
    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("PERSYN_OPENAI_API_KEY", "OPENAI_API_KEY")
    )
    openai_base_url: str | None = Field(
        default=None, description="An OpenAI-compatible endpoint (vLLM, llama.cpp server, ...)."
    )
    openai_compatible_model: str = "default"
    openai_compatible_context_window: int = 8192
    local_servers: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: [
            "http://127.0.0.1:11434",  # Ollama
            "http://127.0.0.1:1234",  # LM Studio
            "http://127.0.0.1:8080",  # llama.cpp's server
            "http://127.0.0.1:8000",  # vLLM
        ],
        description="Where `persyn up` looks for a model server already running, with "
        "PERSYN_PROVIDER=auto and no key (comma-separated; empty: never look).",
    )
    openai_compatible_structured: Literal["auto", "json_schema", "json_object", "prompt"] = Field(
        default="auto",
        description="How the OpenAI-compatible server is asked for a reply held to a schema: "
        "json_schema (OpenAI's form; vLLM, LM Studio, Ollama, llama-server), json_object "
        "(llama-cpp-python's server), prompt (the schema in the instructions), or auto: "
        "json_schema first, stepping down when the server refuses the form.",
    )
    anthropic_base_url: str | None = None
    model_timeout_seconds: float = Field(default=120.0, gt=0)
    models: dict[TaskType, ModelBinding] = Field(
        default_factory=dict, description="Per-task overrides of the provider's default bindings."
    )
    scripted_script: Path | None = Field(
        default=None, description="Replies of the scripted test provider (JSON); tests only."
    )
    local_model_path: Path | None = Field(
        default=None, description="A GGUF file; defaults to the SmolLM2 file of the local extra."
    )
    local_context_window: int = 8192
    call_plans: dict[ProviderName, CallPlan] = Field(
        default_factory=dict,
        description="Replaces a provider's call plan whole: which stages run, how long each "
        "may be, sampling, schema limits (docs/models.md).",
    )
    local_model_port: int = Field(
        default=8091,
        ge=1,
        le=65535,
        description="Port of the local model server (llama.cpp, OpenAI API) the stack runs.",
    )
    local_model_threads: int | None = Field(
        default=None,
        ge=1,
        description="CPU threads the local model server reads prompts and generates with; "
        "default: llama.cpp's own (every core to read a prompt, half of them to generate).",
    )
    local_model_cache_mib: int = Field(
        default=256,
        ge=0,
        le=65536,
        description="Memory the local model server keeps evaluated prompts in, so a reply after "
        "a background call reads only what changed since the last reply (0: no cache).",
    )
    local_model_chat_format: str | None = Field(
        default=None,
        description="llama.cpp chat format of the local model; default: 'gemma' for a Gemma "
        "GGUF, else 'chatml' (SmolLM2).",
    )

    # Memory
    memory: MemorySettings = Field(default_factory=MemorySettings)
    graph: GraphSettings = Field(default_factory=GraphSettings)
    observations: ObservationSettings = Field(default_factory=ObservationSettings)
    notes: NoteSettings = Field(default_factory=NoteSettings)
    residue: ResidueSettings = Field(default_factory=ResidueSettings)
    embedding_dimensions: int = Field(
        default=384, gt=0, le=4096, description="Vector size of the configured encoder."
    )
    encoder: Literal["local", "openai-compatible", "none"] = Field(
        default="local",
        description="Text encoder: in-process all-MiniLM-L6-v2, a self-hosted service speaking "
        "the OpenAI embeddings API, or none (search stays lexical).",
    )
    encoder_base_url: str | None = Field(
        default=None, description="Base URL of the encoding service (ends before /embeddings)."
    )
    encoder_model: str = Field(
        default="all-MiniLM-L6-v2", description="Model name sent to the encoding service."
    )
    encoder_api_key: SecretStr | None = Field(
        default=None, description="Bearer token of the encoding service, if it wants one."
    )
    encoder_threads: int = Field(
        default=1,
        ge=1,
        le=256,
        description="CPU threads one local inference may use. One by default: the texts are "
        "short, and spread over two cores the same work took about half as much CPU time "
        "again (bench/encoder_throughput.py), time the database and Temporal need.",
    )

    # Tools, reminders, goals and the heartbeat; see docs/autonomy.md
    autonomy: AutonomySettings = Field(default_factory=AutonomySettings)

    # Critique, refinement and the decision to speak; see docs/deliberation.md
    deliberation: DeliberationSettings = Field(default_factory=DeliberationSettings)

    # Emotional state after each exchange, its decay and its say in declining; docs/emotion.md
    emotion: EmotionSettings = Field(default_factory=EmotionSettings)

    # Guardrails over interaction history: rules file and supervisor webhook; docs/guardrails.md
    guardrails: GuardrailSettings = Field(default_factory=GuardrailSettings)

    # Which tool calls wait for a person's approval, and how long; see docs/approvals.md
    approvals: ApprovalSettings = Field(default_factory=ApprovalSettings)

    # Tool servers over MCP ([mcp] in persyn.toml); see docs/tools.md
    mcp: McpSettings = Field(default_factory=McpSettings)

    # Sandboxed code execution: engine, isolation and limits; see docs/tools.md
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)

    # Skills: supplied and self-authored procedures; see docs/tools.md
    skills: SkillSettings = Field(default_factory=SkillSettings)

    # The web: read_url, provider web search, offline reference; see docs/tools.md
    web: WebSettings = Field(default_factory=WebSettings)

    # Image generation through an OpenAI-compatible endpoint; see docs/tools.md
    images: ImageSettings = Field(default_factory=ImageSettings)

    # Pictures and recordings people send, perceived as text; see docs/channels.md
    senses: SensesSettings = Field(default_factory=SensesSettings)

    # Live voice calls through a voice transport; see docs/channels.md, "Live voice"
    voice: VoiceSettings = Field(default_factory=VoiceSettings)

    # The Telegram channel: a bot that speaks for one agent; see docs/channels-telegram.md
    telegram: TelegramSettings = Field(default_factory=TelegramSettings)

    # Observability (Appendices C and D); see docs/observability.md
    # Outbound delivery and pacing of agent-to-agent channels; see docs/channels.md
    delivery: DeliverySettings = Field(default_factory=DeliverySettings)
    pacing: PacingSettings = Field(default_factory=PacingSettings)

    meters: Annotated[list[MeterName], NoDecode] = Field(
        default_factory=lambda: _DEFAULT_METERS.copy(),
        description="Metering adapters fed by the usage records, e.g. 'ledger,prometheus'.",
    )
    metrics_host: str = Field(default="127.0.0.1", description="Where Prometheus scrapes.")
    metrics_port: int = Field(default=9464, ge=0, le=65535, description="0 picks a free port.")
    event_log_path: Path | None = Field(
        default=None,
        description="One JSON usage record per line; '-' is stdout. Default: home/usage/.",
    )
    price_table_path: Path | None = Field(
        default=None, description="Operator-maintained prices (TOML). Default: home/prices.toml."
    )
    tracing_exporters: Annotated[list[TraceExporterName], NoDecode] = Field(
        default_factory=list,
        description="Span exporters, e.g. 'file,otlp'; empty: tracing off. The embedded stack "
        "defaults to 'file'.",
    )
    tracing_endpoint: str = Field(
        default="http://127.0.0.1:4318/v1/traces", description="OTLP/HTTP traces endpoint."
    )
    tracing_file: Path | None = Field(
        default=None, description="Span file of the file exporter. Default: home/traces/."
    )
    tracing_content: ContentPolicy = Field(
        default="metadata",
        description="'full' records prompts, replies and tool arguments on spans; 'metadata' "
        "records stage, model, tokens and timing only.",
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Environment first, then ``$PERSYN_HOME/persyn.toml``, then defaults."""
        toml = TomlConfigSettingsSource(settings_cls, toml_file=default_home() / "persyn.toml")
        return (init_settings, env_settings, toml, file_secret_settings)

    @field_validator("meters", "tracing_exporters", "local_servers", mode="before")
    @classmethod
    def _split_names(cls, value: object) -> object:
        # The environment gives "ledger,prometheus" (or a JSON list); TOML gives a list.
        if isinstance(value, str):
            if value.lstrip().startswith("["):
                return json.loads(value)
            return [name.strip() for name in value.split(",") if name.strip()]
        return value

    @model_validator(mode="after")
    def _use_detected_server(self) -> Settings:
        # Only where nothing was chosen: a provider named, a key or a base URL all win.
        unchosen = self.provider == "auto" and self.openai_base_url is None
        if not unchosen or self.anthropic_api_key or self.openai_api_key:
            return self
        found = read_detected(self.home)
        if found is not None:
            object.__setattr__(self, "openai_base_url", found.base_url)
            object.__setattr__(self, "openai_compatible_model", found.model)
            object.__setattr__(self, "openai_compatible_context_window", found.context_window)
            self._detected = found
        return self

    @property
    def detected(self) -> DetectedServer | None:
        """The model server ``persyn up`` found and these settings use, if any."""
        return self._detected

    @model_validator(mode="after")
    def _decide_embedded(self) -> Settings:
        if self.embedded is None:
            object.__setattr__(self, "embedded", self.database_url is None)
        if self.embedded and "tracing_exporters" not in self.model_fields_set:
            # The embedded stack traces to its span file, so `persyn trace` works out of the box.
            object.__setattr__(self, "tracing_exporters", ["file"])
        return self

    @property
    def run_dir(self) -> Path:
        """Pid files and the stack description."""
        return self.home / "run"

    @property
    def log_dir(self) -> Path:
        """Component logs."""
        return self.home / "logs"

    @property
    def postgres_password_file(self) -> Path:
        """The embedded PostgreSQL's password (libpq password file, ``0600``)."""
        return self.home / "postgres.pgpass"

    @property
    def usage_event_log(self) -> Path:
        """Where the event-log meter writes (``-`` means stdout)."""
        return self.event_log_path or self.home / "usage" / "usage.jsonl"

    @property
    def price_table(self) -> Path:
        """The operator's price table (absent: every record is counted, none costed)."""
        return self.price_table_path or self.home / "prices.toml"

    @property
    def span_file(self) -> Path:
        """Where the file span exporter writes and ``persyn trace`` reads."""
        return self.tracing_file or self.home / "traces" / "spans.jsonl"

    @property
    def ui_url(self) -> str:
        """The Temporal Web UI of the embedded stack."""
        host = self.temporal_address.rsplit(":", 1)[0]
        return f"http://{host}:{self.temporal_ui_port}"

    def database_dsn(self) -> str:
        """SQLAlchemy URL of the database (embedded unless ``PERSYN_DATABASE_URL`` is set)."""
        if self.database_url is not None:
            url = self.database_url.get_secret_value()
            if url.startswith("postgresql://"):
                url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
            return url
        return embedded_database_dsn(self.postgres_port, self.postgres_password_file)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process's settings, built on first use."""
    return Settings()

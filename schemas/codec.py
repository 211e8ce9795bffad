"""Settings of the payload codec that encrypts what workflow history carries.

Kept apart from :class:`schemas.settings.Settings` so the codec's secrets are read only by the
processes that encrypt or decrypt. Reach them through :func:`get_codec_settings`; nothing builds
them at import time.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class CodecSettings(BaseSettings):
    """``PERSYN_CODEC_*``: whether payloads are encrypted, with which master key, served where."""

    model_config = SettingsConfigDict(env_prefix="PERSYN_CODEC_", extra="ignore", frozen=True)

    enabled: bool = Field(
        default=True, description="Encrypt workflow payloads with per-agent keys."
    )
    master_key: SecretStr | None = Field(
        default=None,
        description="Base64 of 32 bytes that wrap every agent's data key. Default: the key "
        "file. Every process of one deployment needs the same master key.",
    )
    master_key_file: Path | None = Field(
        default=None,
        description="Where the master key is kept when it is not given: created on first use "
        "(mode 0600). Default: codec-master.key under the Persyn home.",
    )
    port: int = Field(
        default=8234, ge=1, le=65535, description="Port of the codec endpoint `persyn up` runs."
    )
    host: str = Field(
        default="127.0.0.1",
        description="Address the codec endpoint listens on. Keep the loopback default unless "
        "a container publishes it (docker-compose.yml): whoever reaches it reads every agent.",
    )
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host header values the endpoint answers besides 127.0.0.1, localhost and "
        "[::1] at its port (a name a proxy or a compose network reaches it by). Any other Host "
        "is refused, so a page rebinding its own domain to 127.0.0.1 reads nothing.",
    )
    ui_origins: list[str] = Field(
        default_factory=list,
        description="Browser origins of the Web UI allowed to call the endpoint (CORS), "
        "besides the embedded stack's own UI.",
    )
    token: SecretStr | None = Field(
        default=None,
        description="When set, every encode and decode must carry `Authorization: Bearer "
        "<token>` (the Web UI sends it through its codec settings, the temporal CLI with "
        "--codec-auth).",
    )
    key_cache_seconds: float = Field(
        default=1.0,
        ge=0,
        le=60,
        allow_inf_nan=False,
        description="How long a process trusts a data key after PostgreSQL last said it was "
        "not shredded; a shred waits this long before it returns, so when it returns no "
        "process opens the agent's payloads any more. Give every process the same value. "
        "0 asks on every use (about 80 queries per message); the codec endpoint always does.",
    )


@lru_cache(maxsize=1)
def get_codec_settings() -> CodecSettings:
    """The process's codec settings, built on first use."""
    return CodecSettings()

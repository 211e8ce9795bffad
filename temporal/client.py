"""One ``connect()`` for every Temporal client: sealed pydantic payloads, the interceptors."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from temporalio.client import Client, Interceptor, TLSConfig
from temporalio.converter import DataConverter
from temporalio.service import RPCError

from observability import tracing
from observability.interceptor import TurnTracingInterceptor
from schemas.codec import get_codec_settings
from schemas.settings import Settings
from temporal.attribution_interceptor import AttributionInterceptor
from temporal.codec import AgentPayloadCodec, SealingDataConverter
from temporal.internal_auth import InternalAuthInterceptor
from temporal.internal_key import internal_key
from temporal.keyring import MASTER_KEY_FILE, Keyring, keyring_for, master_key
from temporal.payload_converter import tolerant_data_converter


class TemporalUnavailableError(RuntimeError):
    """No Temporal server answered at the configured address."""


def interceptors(
    extra: Sequence[Interceptor] = (), *, internal: bytes | None = None
) -> list[Interceptor]:
    """The interceptors every client uses (attribution, internal messages, then any extras).

    Each is also a worker interceptor, so workers and replayers built from the client inherit
    them (``workers/replay.py``).

    Args:
        extra: Appended after the standard ones.
        internal: The deployment's internal key (:func:`connect` always gives it). Without
            one, internal messages are neither signed nor checked: only for Temporal's
            time-skipping test server, which drops the headers of signals that a workflow
            or a signal-with-start sends.
    """
    auth = [] if internal is None else [InternalAuthInterceptor(internal)]
    return [AttributionInterceptor(), *auth, *extra]


def keyring(settings: Settings, *, cache_seconds: float | None = None) -> Keyring:
    """This process's keyring for the deployment ``settings`` describe.

    Args:
        settings: The deployment (its database holds the keys, its home the master key).
        cache_seconds: Overrides ``PERSYN_CODEC_KEY_CACHE_SECONDS`` (the codec endpoint: 0).
    """
    codec = get_codec_settings()
    configured = codec.master_key.get_secret_value() if codec.master_key else None
    path = codec.master_key_file or settings.home / MASTER_KEY_FILE
    return keyring_for(
        settings.database_dsn(),
        master_key(path, configured),
        cache_seconds=codec.key_cache_seconds if cache_seconds is None else cache_seconds,
    )


def data_converter(settings: Settings, *, codec: bool | None = None) -> DataConverter:
    """The pydantic converter, with the payload codec unless it is off.

    Untyped payloads that are not JSON reach the handlers raw, to be refused there by name
    (``temporal/payload_converter.py``).

    Args:
        settings: The deployment (its database holds the keys, its home the master key).
        codec: Overrides ``PERSYN_CODEC_ENABLED``.
    """
    if not (get_codec_settings().enabled if codec is None else codec):
        return tolerant_data_converter
    return sealing(AgentPayloadCodec(keyring(settings)))


def sealing(codec: AgentPayloadCodec) -> DataConverter:
    """The pydantic converter with ``codec``."""
    return SealingDataConverter(
        payload_converter_class=tolerant_data_converter.payload_converter_class,
        failure_converter_class=tolerant_data_converter.failure_converter_class,
        payload_codec=codec,
    )


def _tls(settings: Settings) -> TLSConfig | bool:
    if settings.temporal_tls_cert or settings.temporal_tls_ca:
        return TLSConfig(
            client_cert=settings.temporal_tls_cert.read_bytes()
            if settings.temporal_tls_cert
            else None,
            client_private_key=(
                settings.temporal_tls_key.read_bytes() if settings.temporal_tls_key else None
            ),
            server_root_ca_cert=settings.temporal_tls_ca.read_bytes()
            if settings.temporal_tls_ca
            else None,
        )
    # An API key (Temporal Cloud) implies TLS.
    return settings.temporal_tls or settings.temporal_api_key is not None


async def connect(
    settings: Settings,
    *,
    address: str | None = None,
    extra_interceptors: Sequence[Interceptor] = (),
    ready_within: float = 0.0,
    codec: bool | None = None,
    lazy: bool = False,
) -> Client:
    """Connect to Temporal with the pydantic converter, the payload codec and the interceptors.

    Args:
        settings: Where and how to connect.
        address: Overrides ``settings.temporal_address`` (tests, benchmarks).
        extra_interceptors: Appended after the standard ones (tracing).
        ready_within: Seconds to keep trying while nothing answers: a server that was just
            started opens its port before its frontend serves, and under load the gap shows.
        codec: Encrypt payloads with per-agent keys; by default as ``PERSYN_CODEC_ENABLED``
            says (on unless set to false).
        lazy: Reach the server only on the first call: a replayer configured from the client
            needs none.

    Raises:
        TemporalUnavailableError: Nothing answered; the message says what to start.
    """
    deadline = time.monotonic() + ready_within
    converter = data_converter(settings, codec=codec)
    key = internal_key(settings)
    while True:
        try:
            return await _connect(
                settings, address, extra_interceptors, converter, key=key, lazy=lazy
            )
        except TemporalUnavailableError:
            if time.monotonic() >= deadline:
                raise
            await asyncio.sleep(0.1)


async def _connect(
    settings: Settings,
    address: str | None,
    extra_interceptors: Sequence[Interceptor],
    converter: DataConverter,
    *,
    key: bytes,
    lazy: bool = False,
) -> Client:
    target = address or settings.temporal_address
    # Observability hook: with tracing on, every worker built from this client traces turns.
    traced = tracing.setup(settings)
    if traced is not None:
        extra_interceptors = [TurnTracingInterceptor(traced), *extra_interceptors]
    try:
        return await Client.connect(
            target,
            namespace=settings.temporal_namespace,
            api_key=(
                settings.temporal_api_key.get_secret_value() if settings.temporal_api_key else None
            ),
            tls=_tls(settings),
            data_converter=converter,
            interceptors=interceptors(extra_interceptors, internal=key),
            lazy=lazy,
        )
    except (RuntimeError, RPCError) as err:
        raise TemporalUnavailableError(
            f"cannot reach Temporal at {target}: run `persyn up`, or set PERSYN_TEMPORAL_ADDRESS"
        ) from err

"""Choose the encoder named in settings; its dependencies load only when it is used."""

from __future__ import annotations

from activities.memory.encoder import Encoder
from schemas.settings import Settings


class EncoderConfigError(ValueError):
    """The encoder settings contradict each other; the message says which setting to fix."""


def build_encoder(settings: Settings) -> Encoder:
    """The encoder ``settings.encoder`` names.

    Nothing is loaded or connected here: the local model loads on first use and the service
    is first contacted on the first request, so building never fails on an absent service.

    Raises:
        EncoderConfigError: A required setting is missing, or the dimensionality disagrees
            with the chosen model.
    """
    if settings.encoder == "none":
        from activities.memory.encoders.null import NullEncoder

        return NullEncoder(dimensions=settings.embedding_dimensions)
    if settings.encoder == "openai-compatible":
        from activities.memory.encoders.service import ServiceEncoder

        if not settings.encoder_base_url:
            raise EncoderConfigError(
                "encoder is 'openai-compatible' but PERSYN_ENCODER_BASE_URL is not set: "
                "set it to the service's API root (e.g. http://127.0.0.1:8080/v1)"
            )
        key = settings.encoder_api_key.get_secret_value() if settings.encoder_api_key else None
        return ServiceEncoder(
            base_url=settings.encoder_base_url,
            model=settings.encoder_model,
            dimensions=settings.embedding_dimensions,
            api_key=key,
        )
    from activities.memory.encoders.local import DIMENSIONS, LocalEncoder

    if settings.embedding_dimensions != DIMENSIONS:
        raise EncoderConfigError(
            f"the local encoder gives {DIMENSIONS}-dimensional vectors but "
            f"PERSYN_EMBEDDING_DIMENSIONS is {settings.embedding_dimensions}: set it to "
            f"{DIMENSIONS}, then run `persyn memory reindex`"
        )
    return LocalEncoder(threads=settings.encoder_threads)

"""Encoder implementations (spec §6), chosen by name from settings with :func:`build_encoder`."""

from activities.memory.encoders.factory import EncoderConfigError, build_encoder

__all__ = ["EncoderConfigError", "build_encoder"]

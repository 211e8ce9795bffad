"""Observability in one place: the tracer, its interceptor, the span file and the meters.

- :mod:`observability.tracing`: tracer setup from settings, one trace per activation, tool spans;
- :mod:`observability.interceptor`: Temporal's tracing interceptor, shaped to that trace;
- :mod:`observability.model_call`: the model-call span the gateway opens;
- :mod:`observability.span_file`: the OTLP/JSON span file, its exporter and its reader;
- :mod:`observability.span_redaction`: forgotten or expired content out of the span file;
- :mod:`observability.metering`: usage records, prices and the meters they fan out to.

Every part is a side effect that fails soft: a broken tracer or meter never fails a call.
"""

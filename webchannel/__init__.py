"""The web channel: an HTTP service (``persyn serve``) for integrators without a Temporal client.

``app`` builds the FastAPI application, ``routes`` holds the ``/v1`` endpoints, ``auth`` the
bearer tokens, ``body`` the checks every request body passes before anything is stored,
``sse`` the server-sent-events encoding, and ``static/`` the operator's chat page.
"""

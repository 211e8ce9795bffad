"""An uploaded file's bytes from a request body: raw, or the ``file`` part of a multipart form.

Pure: the body is already read (and capped) by the route. A form that cannot be parsed, or has
no ``file`` part, is refused with a line saying what to send.
"""

from __future__ import annotations

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header

FIELD = b"file"
"""The form field a file is sent in."""


class UploadError(ValueError):
    """A body that holds no file; the message says what to send."""


def uploaded_file(content_type: str | None, body: bytes) -> bytes:
    """The file in ``body``: the ``file`` part of a multipart form, else the body itself.

    Raises:
        UploadError: An empty body, or a multipart form without a readable ``file`` part.
    """
    try:
        kind, params = parse_options_header(content_type or "")
    except (UnicodeError, ValueError):  # a header no browser sends: the body is the file
        kind, params = b"", {}
    if kind == b"multipart/form-data":
        boundary = params.get(b"boundary")
        if not boundary:
            raise UploadError("the multipart form names no boundary: send it as a browser does")
        found = _file_part(boundary, body)
    else:
        found = body
    if not found:
        raise UploadError("the upload is empty: send a picture or a recording")
    return found


def _file_part(boundary: bytes, body: bytes) -> bytes:
    parts: list[tuple[dict[bytes, bytes], bytes]] = []
    headers: dict[bytes, bytes] = {}
    field, value, data = bytearray(), bytearray(), bytearray()

    def begin() -> None:
        headers.clear()
        data.clear()

    def header_field(chunk: bytes, start: int, end: int) -> None:
        field.extend(chunk[start:end])

    def header_value(chunk: bytes, start: int, end: int) -> None:
        value.extend(chunk[start:end])

    def header_end() -> None:
        headers[bytes(field).lower()] = bytes(value)
        field.clear()
        value.clear()

    def part_data(chunk: bytes, start: int, end: int) -> None:
        data.extend(chunk[start:end])

    def part_end() -> None:
        parts.append((dict(headers), bytes(data)))

    parser = MultipartParser(
        boundary,
        {
            "on_part_begin": begin,
            "on_header_field": header_field,
            "on_header_value": header_value,
            "on_header_end": header_end,
            "on_part_data": part_data,
            "on_part_end": part_end,
        },
    )
    try:
        parser.write(body)
        parser.finalize()
    except (MultipartParseError, ValueError):
        raise UploadError(
            "the multipart form cannot be read: send the file in a 'file' field"
        ) from None
    for part_headers, part in parts:
        try:
            _, disposition = parse_options_header(part_headers.get(b"content-disposition", b""))
        except (UnicodeError, ValueError):
            continue
        if disposition.get(b"name") == FIELD:
            return part
    raise UploadError("the multipart form has no 'file' field: send the file in one")

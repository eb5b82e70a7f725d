"""Stop a multipart upload as soon as it is too large, before the body is buffered or written.

``DATA_UPLOAD_MAX_MEMORY_SIZE`` (``DJANGO_MAX_BODY_BYTES``) does not count the files of a multipart
request, so without this handler a 40 MB file was read into a temporary file and accepted. First in
``FILE_UPLOAD_HANDLERS``: a request whose ``Content-Length`` exceeds ``UPLOAD_MAX_BYTES`` is refused
before anything is read, and the files of one request are counted as their chunks stream in (in case
the length is unknown) and refused before the next handler stores the chunk that crosses the limit.

The error is :class:`UploadTooLarge`, a ``RequestDataTooBig``: Django answers 400 (``handler400``;
JSON under ``/api/``) and the API's exception handler answers 413 in its JSON format.
"""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.files.uploadhandler import FileUploadHandler


class UploadTooLarge(RequestDataTooBig):
    pass


def _message(limit: int) -> str:
    return f"Upload too large: the files of one request may total at most {limit:,} bytes (UPLOAD_MAX_BYTES)."


class UploadLimitHandler(FileUploadHandler):
    """Passes chunks on unchanged; raises :class:`UploadTooLarge` once the request is over the limit."""

    def __init__(self, request=None):
        super().__init__(request)
        self.limit = settings.UPLOAD_MAX_BYTES
        self.received = 0

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        if content_length and content_length > self.limit:
            raise UploadTooLarge(_message(self.limit))

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)
        if self.received > self.limit:
            raise UploadTooLarge(_message(self.limit))
        return raw_data

    def file_complete(self, file_size):
        return None

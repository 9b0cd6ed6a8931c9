"""Images in an answer: a screenshot pasted on the dashboard or sent to the JSON API, checked before anything is kept.

The type is read from the bytes themselves (a PNG, JPEG, WebP or GIF signature), never taken on trust from a
file name or a declared type: what is kept is served back to browsers, and an "image" that is really HTML or
SVG would be a script on this site's origin. An error names the field (`images`, `images[1].data`) and the
answer is not kept, so nothing of it is written.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile

from questions.kinds import InvalidAnswer

TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")
NAMES = {"image/png": "PNG", "image/jpeg": "JPEG", "image/webp": "WebP", "image/gif": "GIF"}


@dataclass(frozen=True)
class Image:
    mime_type: str
    data: bytes


def sniff(data: bytes) -> str | None:
    """The image type the bytes begin like, or None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    return None


def _limits() -> tuple[int, int]:
    return settings.HOOKBRIDGE_MAX_IMAGES, settings.HOOKBRIDGE_MAX_IMAGE_BYTES


def _megabytes(size: int) -> str:
    return f"{size / 1024 / 1024:.0f} MB"


def check_count(count: int, field: str = "images") -> None:
    most, _ = _limits()
    if count > most:
        raise InvalidAnswer(field, f"At most {most} images go with an answer; {count} were attached.")


def checked(data: bytes, field: str, declared: str | None = None) -> Image:
    """One image's bytes, checked: a known type (matching the declared one, if any) and not too large."""
    _, largest = _limits()
    if len(data) > largest:
        raise InvalidAnswer(field, f"An image may be at most {_megabytes(largest)}; this one is {len(data):,} bytes.")
    found = sniff(data)
    if found is None:
        raise InvalidAnswer(field, "This is not a PNG, JPEG, WebP or GIF image.")
    if declared is not None and declared != found:
        raise InvalidAnswer(field, f"The data is a {NAMES[found]} image, not {declared}.")
    return Image(found, data)


def from_uploads(files: Iterable[UploadedFile[Any]]) -> list[Image]:
    """Images attached to the dashboard's answer form (its `images` file field)."""
    files = list(files)
    check_count(len(files))
    _, largest = _limits()
    images = []
    for upload in files:
        if (upload.size or 0) > largest:
            raise InvalidAnswer(
                "images", f"An image may be at most {_megabytes(largest)}; one is {upload.size:,} bytes."
            )
        images.append(checked(upload.read(largest + 1), "images"))
    return images


def from_json(value: Any) -> list[Image]:
    """`"images": [{"mimeType": "image/png", "data": "<base64>"}]` of the JSON API."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidAnswer("images", 'must be a list of {"mimeType": ..., "data": "<base64>"} objects')
    check_count(len(value))
    images = []
    for index, item in enumerate(value):
        where = f"images[{index}]"
        if not isinstance(item, dict) or set(item) - {"mimeType", "data"}:
            raise InvalidAnswer(where, 'must be an object with "mimeType" and "data" only')
        declared, encoded = item.get("mimeType"), item.get("data")
        if declared not in TYPES:
            raise InvalidAnswer(f"{where}.mimeType", f"must be one of {', '.join(TYPES)}")
        if not isinstance(encoded, str) or not encoded:
            raise InvalidAnswer(f"{where}.data", "must be the image's bytes in base64")
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise InvalidAnswer(f"{where}.data", "is not valid base64") from None
        images.append(checked(data, f"{where}.data", declared))
    return images


def answer_body_limit() -> int:
    """The largest answer request: the usual body, and the most images there may be, in base64."""
    most, largest = _limits()
    return settings.HOOKBRIDGE_MAX_BODY_BYTES + most * (largest * 4 // 3 + 4)

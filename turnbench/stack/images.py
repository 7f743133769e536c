"""The images of the docker stack: the pinned official ones unless an option or TURNBENCH_OPENSEARCH_IMAGE /
TURNBENCH_POSTGRES_IMAGE names others (the local builds of compose/images/, ``turnbench-local/...``, or any
registry's), checked as Docker image references before anything starts; and what runinfo.json records of the
image a container ran: the name asked for and the id it resolved to."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from turnbench import settings
from turnbench.errors import BadInput
from turnbench.stack import pins

IMAGE_ENV = {service: s.name for service, s in settings.IMAGES.items()}
PINNED_IMAGES = {"opensearch": pins.OPENSEARCH_IMAGE, "postgres": pins.POSTGRES_IMAGE}
LOCAL_IMAGES = {"opensearch": pins.LOCAL_OPENSEARCH_IMAGE, "postgres": pins.LOCAL_POSTGRES_IMAGE}
IMAGE_OPTIONS = {"opensearch": "--opensearch-image", "postgres": "--postgres-image"}

# A Docker image reference (distribution/reference's grammar: [registry[:port]/]path[:tag][@digest]) or an id.
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_REFERENCE = re.compile(
    rf"(?:(?:[A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z0-9]|[A-Za-z0-9])(?::[0-9]+)?/)?{_COMPONENT}(?:/{_COMPONENT})*"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[0-9a-f]{64})?"
)
_IMAGE_ID = re.compile(r"sha256:[0-9a-f]{64}")


def image_reference(value: str, what: str) -> str:
    """``value`` when it is a Docker image reference or id, else BadInput naming ``what`` (an option or variable)."""
    if len(value) > 255 or not (_REFERENCE.fullmatch(value) or _IMAGE_ID.fullmatch(value)):
        raise BadInput(f"{what}: {value[:80]!r} is not a Docker image reference (e.g. {pins.LOCAL_OPENSEARCH_IMAGE})")
    return value


def chosen_images(opensearch_image: str | None = None, postgres_image: str | None = None) -> dict[str, str]:
    """The image of each service: the option, else its environment variable, else the pinned official image."""
    given = {"opensearch": opensearch_image, "postgres": postgres_image}
    out = {}
    for service in ("opensearch", "postgres"):
        value, what = given[service], IMAGE_OPTIONS[service]
        if value is None and settings.text(settings.IMAGES[service]):
            value, what = settings.IMAGES[service].raw(), IMAGE_ENV[service]
        out[service] = image_reference(value, what) if value is not None else PINNED_IMAGES[service]
    return out


def image_facts(attrs: Mapping[str, Any]) -> dict[str, str]:
    """The image a container was created from: the name asked for and the id it resolved to."""
    return {"name": str(attrs.get("Config", {}).get("Image", "")), "id": str(attrs.get("Image", ""))}

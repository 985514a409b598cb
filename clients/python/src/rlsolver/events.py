"""Server-sent events (the WHATWG `text/event-stream` format) as the job streams send them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, Iterator


@dataclass(frozen=True)
class Event:
    """One event: its name (`state`, `progress`, `evaluation`, `incumbent`) and its JSON data."""

    event: str
    data: Any


def parse(lines: Iterable[str]) -> Iterator[Event]:
    """Events from a stream's lines: fields accumulate until a blank line dispatches them;
    comment lines (`:`) are keep-alives."""
    name, data = "message", []
    for line in lines:
        line = line.rstrip("\r\n")
        if not line:
            if data:
                text = "\n".join(data)
                try:
                    value: Any = json.loads(text)
                except ValueError:
                    value = text
                yield Event(name, value)
            name, data = "message", []
            continue
        if line.startswith(":"):
            continue
        key, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if key == "event":
            name = value
        elif key == "data":
            data.append(value)

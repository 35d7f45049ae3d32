"""Edits of the TOML files the tests and benchmarks change (servers' server.toml, clients'
compute.toml and cluster.toml), through tomlkit: the key set or removed in its table, comments
and the rest of the file as they were."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import tomlkit
from tomlkit.container import Container


@contextmanager
def editing(path: Path | str) -> Iterator[Container]:
    """The parsed document, written back when the block ends without an error."""
    path = Path(path)
    document = tomlkit.parse(path.read_text())
    yield document
    path.write_text(tomlkit.dumps(document))


def _table(document: Container, path: Path | str, table: str | None) -> Container:
    if table is None:
        return document
    if table not in document:
        raise KeyError(f"{path} has no [{table}] table")
    return document[table]


def set_value(path: Path | str, name: str, value, table: str | None = None) -> None:
    """`name` = value at the top of the file (before any table) or in [table]."""
    with editing(path) as document:
        _table(document, path, table)[name] = value


def remove_value(path: Path | str, name: str, table: str | None = None) -> None:
    """`name` removed from the top of the file or from [table], where it is set."""
    with editing(path) as document:
        place = _table(document, path, table)
        if name in place:
            del place[name]


def value(path: Path | str, name: str, table: str | None = None):
    """The value of `name` (a KeyError naming the file when it is not set)."""
    document = tomlkit.parse(Path(path).read_text())
    place = _table(document, path, table)
    if name not in place:
        raise KeyError(f"{path} sets no {name}" + (f" in [{table}]" if table else ""))
    return place[name].unwrap() if hasattr(place[name], "unwrap") else place[name]

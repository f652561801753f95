"""python -m bench.experiments.promptrules PICKLE: rules for which prompt lines to show, judged offline.

Reads what `python -m bench.experiments.promptlines` kept (each dev question's
and off-topic prompt's search results, with their verdicts, the question's
words each holds and their idf, and which hold evidence) and replays the
prompt hook's line selection under each rule: lines taken in search's order,
a prompt and its reply one line, at most five. Printed per rule: the share of
evidence turns the lines carry (an estimate of continuity's "injected" without
the boot), lines a prompt, the share of lines holding evidence, and the share of
off-topic prompts answered. The rule brain.prompt_context follows is
"subject": the verdict's floor, short lines that lack two words of the
question rarer than every word they hold left out, long turns below the floor
that lack none let in (docs/benchmarks.md, "Issue 52").
"""

import collections
import pickle
import sys

rows = pickle.load(open(sys.argv[1], "rb"))  # noqa: SIM115
FLOOR = 0.025


def lines_for(hits, terms, keep, n_max=5):
    seen = set()
    out = []
    for i, h in enumerate(hits):
        if len(out) >= n_max:
            break
        if not keep(h, hits[:i], hits, terms):
            continue
        key = h["answer_id"] or h["id"]
        if key in seen:
            continue
        seen.add(key)
        seen.add(h["id"])
        out.append(h)
    return out


def base(h, before, hits, terms):
    return h["verdict"] >= FLOOR


def idf(terms, held):
    return [terms[i][2] for i in held]


def rarest_rule(slack):
    def keep(h, before, hits, terms):
        if h["verdict"] < FLOOR:
            return False
        if not terms:
            return True
        held = set(h["held"])
        r = max([terms[i][2] for i in held], default=0)
        m = max([terms[i][2] for i in range(len(terms)) if i not in held], default=0)
        return m <= r * slack

    return keep


def dominance(strict_idf=True, pool="before"):
    def keep(h, before, hits, terms):
        if h["verdict"] < FLOOR:
            return False
        held = set(h["held"])
        r = max([terms[i][2] for i in held], default=0)
        others = before if pool == "before" else [x for x in hits if x is not h]
        for a in others:
            if pool == "before" and a["verdict"] < FLOOR:
                continue
            ha = set(a["held"])
            if ha > held:
                extra = max(terms[i][2] for i in ha - held)
                if not strict_idf or extra > r:
                    return False
        return True

    return keep


def evaluate(name, keep):
    tot = collections.defaultdict(lambda: [0, 0, 0, 0, 0])  # evid, n_q, lines, evidlines, offanswered
    for r in rows:
        hits, terms = r["asked"]["hits"], r["asked"]["terms"]
        ls = lines_for(hits, terms, keep)
        ev = set().union(*[set(map(tuple, h["evidence"])) for h in ls]) if ls else set()
        n = r["evidence_turns"]
        for t in (r["type"], "overall"):
            x = tot[t]
            x[0] += len(ev) / n
            x[1] += 1
            x[2] += len(ls)
            x[3] += sum(bool(h["evidence"]) for h in ls)
            x[4] += sum(bool(lines_for(o["hits"], o["terms"], keep)) for o in r["offtopic"]) / len(
                r["offtopic"]
            )
    o = tot["overall"]
    print(
        f"{name:28s} injected~{o[0] / o[1]:.3f} lines {o[2] / o[1]:.2f}"
        f" evid-lines {o[3] / max(o[2], 1):.3f} off {o[4] / o[1]:.3f}  "
        + " ".join(f"{t[:6]}={v[0] / v[1]:.2f}" for t, v in sorted(tot.items()) if t != "overall")
    )


actual = sum(r["result"]["injected"] for r in rows) / len(rows)
print(
    "questions",
    len(rows),
    "actual injected",
    round(actual, 3),
    "turn@10",
    round(sum(r["result"]["search_turn@10"] for r in rows) / len(rows), 3),
)
evaluate("verdict floor (today)", base)
evaluate("no floor", lambda h, b, hs, t: True)
for s in (1.0, 1.1, 1.25, 1.5):
    evaluate(f"rarest slack {s}", rarest_rule(s))
evaluate("dominance (earlier lines)", dominance())
evaluate("dominance (any candidate)", dominance(pool="any"))
evaluate("dominance any, no idf cond", dominance(strict_idf=False, pool="any"))


def short_rule(slack, maxlen=159):
    inner = rarest_rule(slack)

    def keep(h, before, hits, terms):
        if h["verdict"] < FLOOR:
            return False
        if len(h["text"]) >= maxlen:
            return True
        return inner(h, before, hits, terms)

    return keep


for s in (1.1, 1.25):
    evaluate(f"short-only slack {s}", short_rule(s))
    evaluate(f"short<100 slack {s}", short_rule(s, 100))


def or_rule(slack):
    inner = rarest_rule(slack)

    def keep(h, before, hits, terms):
        if not any(x["verdict"] >= FLOOR for x in hits):
            return False
        return h["verdict"] >= FLOOR or inner({**h, "verdict": 1}, before, hits, terms)

    return keep


for s in (1.0, 1.1):
    evaluate(f"floor OR subject {s}", or_rule(s))
print("---")


def combo(slack, words, admit_slack=None):
    subj = rarest_rule(slack)
    adm = rarest_rule(admit_slack) if admit_slack else None

    def keep(h, before, hits, terms):
        if not any(x["verdict"] >= FLOOR for x in hits):
            return False
        holds = subj({**h, "verdict": 1}, before, hits, terms)
        short = len(h["text"]) < 159 and len(h["text"].split()) <= words
        if short and not holds:
            return False
        if h["verdict"] >= FLOOR:
            return True
        return adm is not None and adm({**h, "verdict": 1}, before, hits, terms)

    return keep


for w in (12, 16, 20, 25):
    evaluate(f"short<={w}w slack1.1", combo(1.1, w))
    evaluate(f"short<={w}w +admit1.1", combo(1.1, w, 1.1))
print("--- admission variants")


def combo2(slack, words, admit_slack, vmin):
    subj = rarest_rule(slack)
    adm = rarest_rule(admit_slack)

    def keep(h, before, hits, terms):
        if not any(x["verdict"] >= FLOOR for x in hits):
            return False
        holds = subj({**h, "verdict": 1}, before, hits, terms)
        short = len(h["text"]) < 159 and len(h["text"].split()) <= words
        if short and not holds:
            return False
        if h["verdict"] >= FLOOR:
            return True
        return h["verdict"] >= vmin and adm({**h, "verdict": 1}, before, hits, terms)

    return keep


for a in (1.0, 1.1):
    for v in (0.0, 0.005, 0.01):
        evaluate(f"admit{a} v>={v}", combo2(1.1, 20, a, v))
print("--- the rule brain.prompt_context follows")


def subject(words=20, slack=1.1):
    """As brain.prompt_context judges lines (without its test that a word is stated by a
    memory that is not a question: the pickle does not say which words only questions hold)."""

    def lacked(h, terms):
        held = set(h["held"])
        top = max([terms[i][2] for i in held], default=0)
        return sum(1 for i in range(len(terms)) if i not in held and terms[i][2] > top * slack)

    def keep(h, before, hits, terms):
        if not any(x["verdict"] >= FLOOR for x in hits):
            return False
        short = len(h["text"]) < 159 and len(h["text"].split()) <= words
        if h["verdict"] >= FLOOR:
            return not short or lacked(h, terms) < 2
        return lacked(h, terms) < 1

    return keep


evaluate("subject (prompt_context)", subject())

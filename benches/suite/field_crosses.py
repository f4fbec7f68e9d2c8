"""Crosses of hashed categorical fields, side by side in one run: linear, the known cross given
by hand (``interactions``), all field pairs, default apple and field-level apple (issue 20).

eat-rate (``polars_poly.synthetic.eat_rate``): only the A x B cross predicts;
``eat_rate_unseen``: the same with 20% of the (animal, food) pairs held out of training and
present in the test rows (issue 58). click-like (``polars_poly.synthetic.click``): main effects
plus planted field crosses; ``click3``: plus a pure cross of three fields (no pair of them
carries anything), ``click3_pairs``: plus a cross of three fields made mostly of its pairs
(issue 58); "given crosses" is then the planted pairs and the triple, and the generating
model's own test logloss is printed. ``click_counts``: click with 5 count columns beside the
fields (lognormal, read in place as one namespace, ``features``), the label redrawn with a
main effect of one count and a slope per value of a planted field on another (a field x
numeric cross, given as ``(field, "features")``). "apple crosses only" (by name) is apple's
field crosses without its monomials or its race of rankings. "ffm" adds a field-aware
factorization over every field (``--ffm-k``, ``--ffm-rate``, ``--ffm-bits``); "ffm known
fields" (by name in ``--models``) over the fields of the known crosses only; "apple + ffm" (by
name) the default apple with the factorization beside it. Each field is hashed into its own
sparse column (``hash_features``, bits 24), one pass, logistic loss, the default
rate; fit time is the in-memory ``fit`` alone (hashing is timed once, apart). Prints test
logloss, AUC, error, the median fit seconds over ``--rounds`` rounds (the models alternate
within each round) and that time over the hand-given crosses' (over all pairs' on click). One
process, one model at a time; the machine's load is printed.

    .venv/bin/python -m benches.suite.field_crosses eat_rate --train 2000000 --test 200000
    .venv/bin/python -m benches.suite.field_crosses click --train 2000000 --test 200000
    .venv/bin/python -m benches.suite.field_crosses click3 --train 2000000 --test 200000
    .venv/bin/python -m benches.suite.field_crosses click_counts --models linear,apple
"""

from __future__ import annotations

import argparse
from functools import partial
from itertools import combinations
from typing import Any

import numpy as np
import polars as pl
import polars_poly as pp
from polars_poly import synthetic
from sklearn.metrics import roc_auc_score

from benches.common import load, seconds, timed

KINDS = ("eat_rate", "eat_rate_unseen", "click", "click3", "click3_pairs", "click_counts")
HELD_OUT = 0.2
# click_counts: numeric count columns beside the fields (lognormal, median e), read in place as
# one namespace, "features"; the first drives a slope per value of a planted field.
COUNTS = [f"n{k}" for k in range(5)]
COUNT_SLOPE = 0.7


def click_options(kind: str) -> dict[str, Any]:
    return {"n_triple_crosses": 1, "triple_pairs": kind == "click3_pairs"} if "3" in kind else {}


def frames(kind: str, n_train: int, n_test: int, seed: int) -> tuple[pl.DataFrame, list[str]]:
    """Training rows then test rows (for click kinds, the test rows' true probability in
    ``p_true``), and the fields."""
    if kind == "eat_rate_unseen":
        train = synthetic.eat_rate(n_train, seed, held_out_pairs=HELD_OUT)
        test = synthetic.eat_rate(
            n_test, seed, held_out_pairs=HELD_OUT, include_held_out=True, offset=n_train
        )
        data = pl.concat([train, test])
    elif kind == "eat_rate":
        data = synthetic.eat_rate(n_train + n_test, seed)
    else:
        data = synthetic.click(n_train + n_test, seed, with_truth=True, **click_options(kind))
    if kind == "click_counts":
        data = with_counts(data, seed)
    fields = [c for c in data.columns if c not in ("label", "p_true", *COUNTS)]
    return data, fields


def counted_field(seed: int) -> str:
    """click_counts' field whose values each have their own slope on the first count: the
    first field of at most 1,000 values outside the planted crosses."""
    planted = synthetic.click_planted(seed)
    crossed = {f for c in planted.field_crosses for f in (c.a, c.b)}
    return next(
        name
        for name, size in zip(planted.fields, planted.cardinalities, strict=True)
        if size <= 1000 and name not in crossed
    )


def with_counts(data: pl.DataFrame, seed: int) -> pl.DataFrame:
    """click's rows with the count columns and their labels redrawn: the planted model's margin
    plus a main effect of the second count and a cross of :func:`counted_field` with the first
    (each of the field's values its own slope, ``COUNT_SLOPE`` times a standard normal, on
    ``log1p`` of the count, centred)."""
    rng = np.random.default_rng(seed + 1)
    counts = rng.lognormal(1.0, 1.0, size=(data.height, len(COUNTS))).round()
    logs = np.log1p(counts)
    codes = data[counted_field(seed)].cast(pl.Categorical).to_physical().to_numpy()
    slopes = COUNT_SLOPE * rng.standard_normal(int(codes.max()) + 1)
    p = data["p_true"].to_numpy()
    margin = np.log(p / (1 - p)) + 0.3 * (logs[:, 1] - logs[:, 1].mean())
    margin += slopes[codes] * (logs[:, 0] - logs[:, 0].mean())
    p_true = 1 / (1 + np.exp(-margin))
    label = np.where(rng.uniform(size=data.height) < p_true, 1.0, -1.0)
    columns = [pl.Series(name, counts[:, k]) for k, name in enumerate(COUNTS)]
    return data.with_columns(pl.Series("label", label), pl.Series("p_true", p_true), *columns)


def known_crosses(kind: str, seed: int) -> list[tuple[str, ...]]:
    """The crosses that generated the data: eat-rate's A x B, click's planted pairs and triples."""
    if not kind.startswith("click"):
        return [("A", "B")]
    planted = synthetic.click_planted(seed, **click_options(kind))
    known: list[tuple[str, ...]] = [(c.a, c.b) for c in planted.field_crosses]
    if kind == "click_counts":
        known.append((counted_field(seed), "features"))  # the counts' namespace
    return known + [tuple(c.fields) for c in planted.triple_crosses]


def hashed(data: pl.DataFrame, fields: list[str], bits: int) -> pl.DataFrame:
    """Each field hashed into its own sparse column; count columns as they are."""
    counts = [c for c in COUNTS if c in data.columns]
    hashes = (pp.hash_features(f, bits=bits).alias(f) for f in fields)
    return data.select("label", *hashes, *counts)


def truth_logloss(data: pl.DataFrame, n_test: int) -> float | None:
    """The generating model's test logloss (click kinds), else None."""
    if "p_true" not in data.columns:
        return None
    test = data.tail(n_test)
    p = test["p_true"].to_numpy()
    y = test["label"].to_numpy() > 0
    return float(-(y * np.log(p) + (~y) * np.log(1 - p)).mean())


def scores(model: Any, test: pl.DataFrame) -> dict[str, float]:
    p = np.clip(model.predict_proba(test.drop("label"))[:, 1], 1e-15, 1 - 1e-15)
    y = test["label"].to_numpy() > 0
    return {
        "logloss": float(-(y * np.log(p) + (~y) * np.log(1 - p)).mean()),
        "auc": float(roc_auc_score(y, p)),
        "error": float(((p > 0.5) != y).mean()),
    }


def data_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments naming the data (`frames`): kind, training and test rows, seed."""
    parser.add_argument("kind", choices=KINDS)
    parser.add_argument("--train", type=int, default=2_000_000)
    parser.add_argument("--test", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    data_arguments(parser)
    parser.add_argument("--bits", type=int, default=24)
    parser.add_argument(
        "--models", default="", help="comma-separated subset of the models (default: all)"
    )
    parser.add_argument("--rounds", type=int, default=1, help="alternating rounds of fits")
    parser.add_argument("--ffm-k", type=int, default=4, help="the factorization's k")
    parser.add_argument("--ffm-rate", type=float, default=0.1, help="its learning_rate")
    parser.add_argument("--ffm-bits", type=int, default=18, help="its table's bits")
    args = parser.parse_args()

    (data, fields), generated = timed(partial(frames, args.kind, args.train, args.test, args.seed))
    features, hashing = timed(partial(hashed, data, fields, args.bits))
    train, test = features.head(args.train), features.tail(args.test)
    print(
        f"{args.kind}: {args.train:,} train + {args.test:,} test rows, {len(fields)} fields; "
        f"generated in {generated:.1f} s, hashed in {hashing:.1f} s; {load()}"
    )

    common = {"loss": "logistic", "bits": args.bits}
    known = known_crosses(args.kind, args.seed)
    models: dict[str, dict[str, Any]] = {
        "linear": {},
        "given crosses": {"interactions": known},
        "all pairs": {"interactions": list(combinations(fields, 2))},
        "apple": {"expansion": "apple"},
        # One ranking, no race between rankings (which on all-categorical fields never forks).
        "apple typical": {"expansion": pp.Apple(ranking="typical")},
        "field apple": {"expansion": pp.FieldApple()},
        # apple's field crosses without its monomials (of count columns, say) or its race.
        "apple crosses only": {"expansion": pp.Apple(ranking="typical", max_degree=1)},
        # A field-aware factorization over every field, and over the known pairs' fields only.
        "ffm": {"ffm": pp.FFM(k=args.ffm_k, learning_rate=args.ffm_rate, bits=args.ffm_bits)},
        "ffm known fields": {
            "ffm": pp.FFM(
                k=args.ffm_k,
                learning_rate=args.ffm_rate,
                bits=args.ffm_bits,
                fields=sorted({f for cross in known for f in cross}),
            )
        },
        "apple + ffm": {
            "expansion": "apple",
            "ffm": pp.FFM(k=args.ffm_k, learning_rate=args.ffm_rate, bits=args.ffm_bits),
        },
    }
    chosen = [m for m in args.models.split(",") if m] or list(models)
    if not args.models:
        chosen.remove("apple typical")  # the default's ranking alone: asked for by name
        chosen.remove("apple crosses only")
    if args.kind.startswith("eat_rate") and not args.models:
        chosen.remove("all pairs")  # 66 crosses of mostly noise: slow and not the question here
    if not args.models:
        # The known fields given, and apple with a factorization: asked for by name.
        chosen.remove("ffm known fields")
        chosen.remove("apple + ffm")
    rows: dict[str, dict[str, Any]] = {}
    times: dict[str, list[float]] = {name: [] for name in chosen}
    for round_ in range(args.rounds):
        for name in chosen:
            model = pp.SGDClassifier(**common, **models[name])
            times[name].append(seconds(partial(model.fit, train, "label")))
            extra = ""
            if name in ("field apple", "apple", "apple typical", "apple crosses only"):
                extra = ", ".join(
                    f"{r['cross']}@{r['added_at']}" for r in model.crosses().iter_rows(named=True)
                )
                if name.startswith("apple"):  # the model the race kept
                    extra = f"[{getattr(model, 'apple_ranking_', '-')}] {extra}"
            rows[name] = {
                "model": name,
                **scores(model, test),
                "fit_s": float(np.median(times[name])),
                "found": extra,
            }
            print(
                f"  round {round_ + 1} {name}: {rows[name]} this fit {times[name][-1]:.2f} s  "
                f"{load()}",
                flush=True,
            )
    table = pl.DataFrame(list(rows.values()))
    # On click the question was all pairs against screening; with a planted triple, the oracle.
    reference = "all pairs" if args.kind == "click" else "given crosses"
    if reference in chosen:
        base = table.filter(pl.col("model") == reference)["fit_s"][0]
        table = table.with_columns(time_ratio=pl.col("fit_s") / base)
    if "linear" in chosen:
        base = table.filter(pl.col("model") == "linear")["fit_s"][0]
        table = table.with_columns(over_linear=pl.col("fit_s") / base)
    with pl.Config(tbl_rows=20, tbl_width_chars=200, fmt_str_lengths=80):
        print(table)
    if args.kind.startswith("click"):
        print("planted field crosses:", known)
        print(f"the generating model's test logloss: {truth_logloss(data, args.test):.4f}")


if __name__ == "__main__":
    main()

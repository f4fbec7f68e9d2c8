"""The difference-of-squares paper's digit experiment at our scale (its Figures 4 and 5).

Protocol: MNIST t10k (``../shared/data/mnist_t10k``) split into the first 8,000 images, the base
of an endless stream of elastically distorted digits (``polars_poly.datasets.DigitStream``,
seed 1, alpha 24, sigma 4, small affine jitter), and the last 2,000 untouched test images.
Linear PA and DoS with ranks 1, 2, 4, 8, 16 (one-vs-one, running aligned average every 2,000
examples) learn the same stream in chunks. Before each chunk is learned, every model predicts
its first ``--probe`` examples (the progressive, predict-then-learn training error on that
sample); at each checkpoint the test error is measured with and without averaging.

Writes ``docs/dos_training_error.png`` (Figure 4: cumulative and moving training error),
``docs/dos_test_error.png`` (Figure 5: test error over time, with and without averaging) and
prints the final table, examples/s per model (training only) and scikit-learn's
``PassiveAggressiveClassifier`` (one-vs-rest, and one-vs-one through ``OneVsOneClassifier``)
on a prefix of the same stream.

Run: ``.venv/bin/python -m benches.suite.dos_digits`` (``--examples 2000000`` by default, the
reference's count; ``--quick`` for 100k).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import polars_poly as pp

from benches.common import DATA, REPO


def error(predicted: np.ndarray, truth: np.ndarray) -> float:
    return float(np.mean(predicted != truth))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=2_000_000)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--chunk", type=int, default=20_000)
    parser.add_argument("--probe", type=int, default=2_000)
    parser.add_argument("--ranks", type=int, nargs="*", default=[1, 2, 4, 8, 16])
    parser.add_argument("--sklearn-examples", type=int, default=200_000)
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images")
    parser.add_argument("--alpha", type=float, default=24.0, help="elastic distortion strength")
    parser.add_argument("--sigma", type=float, default=4.0, help="elastic distortion smoothness")
    args = parser.parse_args()
    total = 100_000 if args.quick else args.examples

    images, labels = pp.datasets.read_mnist(
        DATA / "mnist_t10k" / "t10k-images-idx3-ubyte.gz",
        DATA / "mnist_t10k" / "t10k-labels-idx1-ubyte.gz",
    )
    stream = pp.datasets.DigitStream(
        images[:8000], labels[:8000], seed=1, alpha=args.alpha, sigma=args.sigma
    )
    test_x = images[8000:].reshape(2000, -1).astype(np.float32) / 255.0
    test_features = [pp.from_numpy(test_x)]  # converted once, scored after every chunk
    test_y = labels[8000:]

    models: dict[str, pp.DoSClassifier | pp.PassiveAggressiveClassifier] = {
        "linear PA": pp.PassiveAggressiveClassifier(averaging=2000, progress=False)
    }
    for rank in args.ranks:
        models[f"DoS d={rank}"] = pp.DoSClassifier(rank, averaging=2000, random_state=1)
    classes = np.arange(10)
    seen: list[int] = []
    probe_errors: dict[str, list[float]] = {name: [] for name in models}
    test_errors: dict[str, list[tuple[float, float]]] = {name: [] for name in models}
    train_seconds = dict.fromkeys(models, 0.0)
    generate_seconds = 0.0
    for start in range(0, total, args.chunk):
        started = time.perf_counter()
        x, y = stream.batch(start, min(args.chunk, total - start))
        generate_seconds += time.perf_counter() - started
        for name, model in models.items():
            if start > 0:
                probe_errors[name].append(error(model.predict(x[: args.probe]), y[: args.probe]))
            started = time.perf_counter()
            model.partial_fit(x, y, classes=classes)
            train_seconds[name] += time.perf_counter() - started
            last = error(model.core_.predict(test_features, False), test_y)
            averaged = error(model.core_.predict(test_features, True), test_y)
            test_errors[name].append((last, averaged))
        seen.append(start + len(y))
        print(
            f"{seen[-1]:>8} examples: "
            + ", ".join(f"{n} {100 * test_errors[n][-1][1]:.2f}%" for n in models),
            flush=True,
        )

    print(f"\n{total} streamed examples (generated at {total / generate_seconds:,.0f}/s)")
    print(f"{'model':>10} | test error averaged | last iterate | train err (probe) | ex/s")
    for name in models:
        last, averaged = test_errors[name][-1]
        cumulative = float(np.mean(probe_errors[name])) if probe_errors[name] else float("nan")
        speed = total / train_seconds[name]
        print(
            f"{name:>10} | {100 * averaged:18.2f}% | {100 * last:11.2f}% | "
            f"{100 * cumulative:16.2f}% | {speed:,.0f}"
        )

    if args.sklearn_examples > 0:
        sklearn_table(stream, test_x, test_y, min(args.sklearn_examples, total), args.chunk)
    plot(args.out, seen, probe_errors, test_errors)


def sklearn_table(
    stream: pp.datasets.DigitStream,
    test_x: np.ndarray,
    test_y: np.ndarray,
    total: int,
    chunk: int,
) -> None:
    import warnings

    from sklearn.linear_model import PassiveAggressiveClassifier
    from sklearn.multiclass import OneVsOneClassifier

    # scikit-learn 1.8 deprecates the class (for SGDClassifier(learning_rate="pa1")); same model.
    warnings.filterwarnings("ignore", category=FutureWarning)

    candidates = {
        "sklearn PA one-vs-rest": PassiveAggressiveClassifier(random_state=0),
        "sklearn PA one-vs-one": OneVsOneClassifier(PassiveAggressiveClassifier(random_state=0)),
        "ours linear PA (same prefix)": pp.PassiveAggressiveClassifier(averaging=None),
        "ours linear PA-I C=1 (as sklearn)": pp.PassiveAggressiveClassifier(
            averaging=None, variant="pa1", C=1.0
        ),
    }
    print(f"\nscikit-learn (PA-I, C=1) on the first {total} streamed examples, last iterate:")
    for name, model in candidates.items():
        seconds = 0.0
        for start in range(0, total, chunk):
            x, y = stream.batch(start, min(chunk, total - start))
            started = time.perf_counter()
            model.partial_fit(x, y, classes=np.arange(10))
            seconds += time.perf_counter() - started
        print(
            f"  {name:>30}: test error {100 * error(model.predict(test_x), test_y):.2f}%, "
            f"{total / seconds:,.0f} ex/s"
        )


def plot(
    out: Path,
    seen: list[int],
    probe_errors: dict[str, list[float]],
    test_errors: dict[str, list[tuple[float, float]]],
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    fig, (cumulative, moving) = plt.subplots(1, 2, figsize=(11, 4))
    for name, errors in probe_errors.items():
        steps = np.array(seen[1 : len(errors) + 1])
        values = 100 * np.array(errors)
        if len(values) == 0:  # a single chunk: nothing was probed before learning it
            continue
        cumulative.plot(steps, np.cumsum(values) / np.arange(1, len(values) + 1), label=name)
        window = min(10, len(values))
        moving.plot(steps[window - 1 :], np.convolve(values, np.ones(window) / window, "valid"))
    cumulative.set(xscale="log", yscale="log", xlabel="examples", ylabel="cumulative error (%)")
    moving.set(xscale="log", yscale="log", xlabel="examples", ylabel="moving error (%)")
    cumulative.set_title("Training error (progressive, cumulative)")
    moving.set_title("Training error (moving average of 10 chunks)")
    cumulative.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "dos_training_error.png", dpi=90)
    fig, (plain, averaged) = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for name, pairs in test_errors.items():
        plain.plot(seen, [100 * e[0] for e in pairs], label=name)
        averaged.plot(seen, [100 * e[1] for e in pairs], label=name)
    plain.set(xscale="log", yscale="log", xlabel="examples", ylabel="test error (%)")
    averaged.set(xscale="log", yscale="log", xlabel="examples")
    plain.set_title("Test error, last iterate")
    averaged.set_title("Test error, aligned running average")
    averaged.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "dos_test_error.png", dpi=90)
    print(f"\nplots: {out / 'dos_training_error.png'}, {out / 'dos_test_error.png'}")


if __name__ == "__main__":
    main()

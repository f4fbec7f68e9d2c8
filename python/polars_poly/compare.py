"""The apple paper's comparison (Agarwal et al. 2014, §4 / docs/algorithms.md §6), on our
learners and, side by side, on Vowpal Wabbit's.

Protocol per data set: a seeded 80/20 split; squared loss on every task (classification labels
-1/+1, prediction thresholded at 0); one pass; ``bits = 24``; the learning rate picked per
algorithm from a grid by *progressive validation* loss on the training part (no peeking at the
test part); the reported time is the training time of the picked setting (best of 3 fits).
Algorithms: ``lin``, ``quad`` (all x_i·x_j, i <= j), ``cubic`` (also all degree-3 products),
``apple`` (alpha = 1), ``apple_best`` (alpha from a grid at apple's picked rate, chosen by
progressive loss too) and, optionally, ablations of ours: ``apple_path`` (Vowpal Wabbit's
path-dependent monomial identity), ``apple_max`` (its parent ranking, ``|w|·max|x|``),
``apple_vw`` (both) and ``apple_typical`` (the ``typical`` ranking alone, where the default
races it against ``max_magnitude``). With l, q, c the test errors of lin, quad, cubic:

    rel_err(alg) = (err(alg) - min(l, q, c)) / (max(l, q, c) - min(l, q, c))
    rel_time(alg) = time(alg) / time(lin)

Vowpal Wabbit (``--vw``, needs the ``vowpalwabbit`` package, run in this process through
``vowpalwabbit.Workspace``) trains on the same splits from a cache file: ``lin``, ``quad``
(``-q ff``), ``cubic`` (``-q ff --cubic fff``, the same monomial set as ours) and ``apple``
(``--stage_poly`` with 6 equal epochs: ``--batch_sz`` a sixth of the rows,
``--batch_sz_no_doubling``, ``--sched_exponent`` = alpha). Its time is the time to build the
workspace on the training file (which learns it) minus the time to build the same workspace on a
one-example file (option parsing, table allocation), best of 3 each; like ours it excludes
reading the data into memory (Vowpal Wabbit reads its binary cache).

Also reported: ``error_spread``, the relative spread (max - min) / min of the test error across
the rate grid, i.e. how much tuning the learning rate matters; ``features_per_s``, features
generated (expanded, constant included) per second of training: ours from the learner's
``n_feature_updates_``, Vowpal Wabbit's from its ``total feature number``.

``cubic`` is skipped (reported missing) when its expansion would exceed ``max_cubic_updates``
feature updates per pass; rel_err then uses the baselines that ran.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl
import scipy.sparse as sp

from polars_poly.apple import Apple
from polars_poly.benchdata import Task, list_datasets, load_dataset
from polars_poly.learner import SGDRegressor

ALGORITHMS = ("lin", "quad", "cubic", "apple", "apple_best")
# Optional ablations of ours: apple with Vowpal Wabbit's path-dependent monomial identity, with
# its parent ranking (|w|·max|x|), with both, and with the typical ranking alone.
EXTRA_ALGORITHMS = ("apple_path", "apple_max", "apple_vw", "apple_typical")
DEFAULT_RATES = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
# The learners' default learning rate (Vowpal Wabbit's): error_default is the error there.
DEFAULT_RATE = 0.5
DEFAULT_ALPHAS = (0.125, 0.25, 0.5, 0.75, 1.0)
_EXPANSION = {"lin": "linear", "quad": "quadratic", "cubic": "cubic"}


@dataclass
class Outcome:
    """One algorithm on one data set: test error of the picked setting, its training time, the
    setting, and the test error at every rate tried (for the rate-sensitivity report)."""

    error: float
    seconds: float
    rate: float
    alpha: float | None = None
    progressive: float = math.nan
    errors_by_rate: dict[float, float] = field(default_factory=dict)
    #: Features generated (expanded, constant included) per pass of the picked setting.
    features: float = math.nan


# The measured columns the table printouts show, then every measured column of a row (NaN for a
# run that was skipped).
HEADLINE = ("error", "seconds", "rate", "alpha", "rel_err", "rel_time")
MEASURES = (*HEADLINE, "error_spread", "error_default", "features_per_s")


def split(
    X: sp.csr_array, y: npt.NDArray[np.float64], seed: int
) -> tuple[sp.csr_array, npt.NDArray[np.float64], sp.csr_array, npt.NDArray[np.float64]]:
    """Seeded random 80/20 split."""
    order = np.random.default_rng(seed).permutation(X.shape[0])
    cut = int(round(0.8 * len(order)))
    train, test = order[:cut], order[cut:]
    return X[train], y[train], X[test], y[test]


def test_error(
    prediction: npt.NDArray[np.float64], y: npt.NDArray[np.float64], task: Task
) -> float:
    """0-1 error (prediction thresholded at 0) or mean squared error."""
    if task == "classification":
        return float(np.mean(np.where(prediction > 0, 1.0, -1.0) != y))
    return float(np.mean((prediction - y) ** 2))


def rel_err(error: float, baselines: Sequence[float]) -> float:
    """(error - min) / (max - min) over the baseline errors that exist (NaN: none ran)."""
    present = [b for b in baselines if math.isfinite(b)]
    if not present or not math.isfinite(error):
        return math.nan
    low, high = min(present), max(present)
    if high == low:
        return 0.0 if error == low else math.copysign(math.inf, error - low)
    return (error - low) / (high - low)


def cubic_updates(X: sp.csr_array) -> float:
    """Feature updates of one cubic pass: Σ over rows of C(n+2, 3) + C(n+1, 2) + n + 1."""
    n = np.diff(X.indptr).astype(np.float64)
    return float(np.sum(n * (n + 1) * (n + 2) / 6 + n * (n + 1) / 2 + n + 1))


# ------------------------------------------------------------------------------------ ours


def _grid(
    algorithm: str, rates: Sequence[float], alphas: Sequence[float], apple_rate: float | None
) -> list[tuple[float, float]]:
    """(rate, alpha) settings tried: the rate grid with alpha = 1, or for ``apple_best`` the
    alpha grid at apple's picked rate (5 fits instead of 25)."""
    if algorithm == "apple_best":
        rate = apple_rate if apple_rate is not None else 0.5
        return [(rate, a) for a in alphas]
    return [(r, 1.0) for r in rates]


def _fit_ours(
    algorithm: str,
    rate: float,
    alpha: float,
    X: sp.csr_array,
    y: npt.NDArray[np.float64],
    options: Mapping[str, Any] = MappingProxyType({}),
) -> tuple[SGDRegressor, float]:
    """Fits ours; ``options``: further ``SGDRegressor`` parameters (see :func:`compare`)."""
    # One pass in the rows' order, as Vowpal Wabbit reads its file (the protocol's).
    params: dict[str, Any] = {"bits": 24, "eta0": rate, "progress": False, "shuffle": False}
    params |= options
    if algorithm.startswith("apple"):
        apple = Apple(alpha=alpha)
        if algorithm in ("apple_path", "apple_vw"):
            apple.identity = "path"
        if algorithm in ("apple_max", "apple_vw"):
            apple.ranking = "max_magnitude"
        if algorithm == "apple_typical":
            apple.ranking = "typical"
        model = SGDRegressor(expansion=apple, **params)
    else:
        model = SGDRegressor(expansion=_EXPANSION[algorithm], **params)
    began = time.perf_counter()
    model.fit(X, y)
    return model, time.perf_counter() - began


def run_ours(
    algorithm: str,
    data: tuple[sp.csr_array, npt.NDArray[np.float64], sp.csr_array, npt.NDArray[np.float64]],
    task: Task,
    rates: Sequence[float],
    alphas: Sequence[float],
    apple_rate: float | None = None,
    options: Mapping[str, Any] = MappingProxyType({}),
) -> Outcome:
    """Trains ``algorithm`` at every rate (``apple_best``: every alpha at ``apple_rate``, the
    rate picked for apple), picks the setting with the lowest progressive loss, returns its
    outcome. ``options``: further ``SGDRegressor`` parameters of ours."""
    X, y, Xt, yt = data
    grid = _grid(algorithm, rates, alphas, apple_rate)
    best: Outcome | None = None
    by_rate: dict[float, float] = {}
    for rate, alpha in grid:
        model, seconds = _fit_ours(algorithm, rate, alpha, X, y, options)
        error = test_error(model.predict(Xt), yt, task)
        if algorithm != "apple_best":
            by_rate[rate] = error
        loss = float(model.progressive_loss_)
        if best is None or loss < best.progressive:
            best = Outcome(error, seconds, rate, alpha, loss, features=model.n_feature_updates_)
    assert best is not None
    best.errors_by_rate = by_rate
    # Small data sets train in milliseconds: time the picked setting as the best of 3 fits.
    best.seconds = min(
        [best.seconds]
        + [_fit_ours(algorithm, best.rate, best.alpha or 1.0, X, y, options)[1] for _ in range(2)]
    )
    return best


# ------------------------------------------------------------------------------------ VW


def vw_available() -> bool:
    try:
        import vowpalwabbit  # noqa: F401
    except ImportError:
        return False
    return True


def _write_vw(path: Path, X: sp.csr_array, y: npt.NDArray[np.float64]) -> None:
    with open(path, "w") as out:
        for row in range(X.shape[0]):
            start, end = X.indptr[row], X.indptr[row + 1]
            features = " ".join(
                f"{i}:{v:.9g}" for i, v in zip(X.indices[start:end], X.data[start:end], strict=True)
            )
            out.write(f"{y[row]:.9g} |f {features}\n")


def _vw(args: list[str]) -> tuple[list[str], float, Any]:
    """Runs Vowpal Wabbit in this process (``vowpalwabbit.Workspace``; a ``-d`` file is learned
    while the workspace is built): returns its log, the seconds that took and the workspace
    (call ``finish()`` on it)."""
    import vowpalwabbit

    began = time.perf_counter()
    workspace = vowpalwabbit.Workspace(" ".join(args), enable_logging=True)
    return workspace.get_log(), time.perf_counter() - began, workspace


def _vw_interactions(algorithm: str, n_train: int, alpha: float) -> list[str]:
    if algorithm == "quad":
        return ["-q", "ff"]
    if algorithm == "cubic":
        return ["-q", "ff", "--cubic", "fff"]
    if algorithm.startswith("apple"):
        batch = max(1, math.ceil(n_train / 6))
        return [
            "--stage_poly",
            "--batch_sz",
            str(batch),
            "--batch_sz_no_doubling",
            "--sched_exponent",
            str(alpha),
        ]
    return []


class VowpalWabbit:
    """Vowpal Wabbit on one split, in this process: the text and cache files live in a temporary
    directory."""

    def __init__(
        self,
        data: tuple[sp.csr_array, npt.NDArray[np.float64], sp.csr_array, npt.NDArray[np.float64]],
    ) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="pp-compare-")
        root = Path(self._dir.name)
        X, y, Xt, yt = data
        self.n_train = X.shape[0]
        self.train, self.test, self.one = root / "train.vw", root / "test.vw", root / "one.vw"
        _write_vw(self.train, X, y)
        _write_vw(self.test, Xt, yt)
        _write_vw(self.one, X[:1], y[:1])
        self.cache = root / "train.cache"
        self.model, self.predictions = root / "model.vw", root / "predictions.txt"
        _vw(["-d", str(self.train), "--cache_file", str(self.cache), "--quiet", "--noop"])[
            2
        ].finish()

    def close(self) -> None:
        self._dir.cleanup()

    def _train(self, args: list[str]) -> tuple[float, float, float]:
        """Trains on the cached training part: (seconds, progressive loss, features)."""
        train = ["-d", str(self.train), "--cache_file", str(self.cache)]
        _, seconds, workspace = _vw([*train, *args])
        loss = workspace.get_sum_loss() / max(workspace.get_weighted_examples(), 1e-300)
        workspace.save(str(self.model))
        workspace.finish()
        counted = re.search(r"total feature number = ([0-9]+)", "\n".join(workspace.get_log()))
        return seconds, float(loss), float(counted.group(1)) if counted else math.nan

    def run(
        self,
        algorithm: str,
        task: Task,
        yt: npt.NDArray[np.float64],
        rates: Sequence[float],
        alphas: Sequence[float],
        apple_rate: float | None = None,
    ) -> Outcome:
        def arguments(rate: float, alpha: float) -> list[str]:
            common = ["--loss_function", "squared", "-b", "24", "-l", str(rate)]
            return common + _vw_interactions(algorithm, self.n_train, alpha)

        grid = _grid(algorithm, rates, alphas, apple_rate)
        best: Outcome | None = None
        by_rate: dict[float, float] = {}
        for rate, alpha in grid:
            seconds, loss, features = self._train(arguments(rate, alpha))
            predict = ["-t", "-i", str(self.model), "-d", str(self.test)]
            _vw([*predict, "-p", str(self.predictions), "--quiet"])[2].finish()
            prediction = np.loadtxt(self.predictions, ndmin=1)
            error = test_error(prediction, yt, task)
            if algorithm != "apple_best":
                by_rate[rate] = error
            if best is None or not (loss >= best.progressive):
                best = Outcome(error, seconds, rate, alpha, loss, features=features)
        assert best is not None
        best.errors_by_rate = by_rate
        # Best of 3 for the picked setting, minus the set-up (options, table allocation): the
        # same arguments on a one-example file, best of 3.
        args = arguments(best.rate, best.alpha or 1.0)
        seconds = min([best.seconds] + [self._train(args)[0] for _ in range(2)])
        setup = []
        for _ in range(3):
            _, took, workspace = _vw(["-d", str(self.one), "--quiet", *args])
            workspace.finish()
            setup.append(took)
        best.seconds = max(seconds - min(setup), 1e-4)
        return best


# ------------------------------------------------------------------------------------ driver


def compare(
    datasets: Sequence[str] | None = None,
    data_dir: str | Path | None = None,
    *,
    algorithms: Sequence[str] = ALGORITHMS,
    rates: Sequence[float] = DEFAULT_RATES,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    vw: bool = False,
    vw_algorithms: Sequence[str] | None = None,
    seeds: int | Sequence[int] = 0,
    max_cubic_updates: float = 2e9,
    average_tail: float = 0.0,
    field_scales: bool | str = "auto",
    out_dir: str | Path | None = None,
    log: Any = print,
) -> pl.DataFrame:
    """Runs the comparison (see the module docs) and returns one row per (data set, split seed,
    system, algorithm) with columns ``dataset, seed, task, system, algorithm, n_train, error,
    seconds, rate, alpha, rel_err, rel_time, error_spread, error_default, features_per_s``
    (``error_default``: test error at the default learning rate 0.5 when it is in the grid;
    ``features_per_s``: features generated per second of training, the expansion's throughput).
    ``data_dir=None`` uses the bundled german.numer set. ``vw_algorithms`` limits Vowpal Wabbit to
    some of ``algorithms`` (default: every one it has; ``apple_best`` needs ``apple``).
    ``average_tail`` turns on our learners' tail averaging (``SGDRegressor(average_tail=...)``)
    for every algorithm of ours; Vowpal Wabbit has none. ``field_scales`` is our learners' (its
    'auto' is off on the single feature matrix of every data set here). With ``out_dir`` the
    table is written as CSV (after every data set) and, at the end, the two plots as PNG."""
    unknown = [a for a in algorithms if a not in ALGORITHMS + EXTRA_ALGORITHMS]
    if unknown:
        raise ValueError(
            f"unknown algorithms {unknown}; choose from {ALGORITHMS + EXTRA_ALGORITHMS}"
        )
    if vw and not vw_available():
        raise ImportError("vw=True needs Vowpal Wabbit: pip install vowpalwabbit")
    vw_ran = [a for a in algorithms if a not in EXTRA_ALGORITHMS]
    if vw_algorithms is not None:
        outside = [a for a in vw_algorithms if a not in vw_ran]
        if outside:
            raise ValueError(
                f"vw_algorithms {outside} are not among the algorithms Vowpal Wabbit can run "
                f"here: {vw_ran}"
            )
        if "apple_best" in vw_algorithms and "apple" not in vw_algorithms:
            raise ValueError("vw_algorithms: apple_best searches alpha at apple's rate; add apple")
        vw_ran = [a for a in vw_ran if a in vw_algorithms]
    if datasets is None:
        datasets = list_datasets(data_dir) if data_dir is not None else ["german.numer"]
    out = Path(out_dir) if out_dir is not None else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    ours_options = {"average_tail": average_tail, "field_scales": field_scales}
    for name in datasets:
        X, y, task = load_dataset(name, data_dir)
        for seed in [seeds] if isinstance(seeds, int) else seeds:
            data = split(X, y, seed)
            too_big = cubic_updates(data[0]) > max_cubic_updates
            systems = {
                "ours": _run_system(
                    None, algorithms, data, task, rates, alphas, too_big, ours_options
                )
            }
            if vw:
                runner = VowpalWabbit(data)
                try:
                    systems["vw"] = _run_system(runner, vw_ran, data, task, rates, alphas, too_big)
                finally:
                    runner.close()
            for system, outcomes in systems.items():
                rows.extend(_rows(name, seed, task, system, outcomes, data[0].shape[0]))
            shown = [r for r in rows if r["dataset"] == name and r["seed"] == seed]
            log(
                f"{name:18s} seed {seed} "
                + "  ".join(
                    f"{r['system']}:{r['algorithm']}={r['error']:.4g}/{r['seconds']:.3g}s"
                    for r in shown
                )
            )
        if out is not None:
            pl.DataFrame(rows).write_csv(out / "compare.csv")
    table = pl.DataFrame(rows)
    if out is not None and plots_available():
        plot(table, out)
    return table


def plotted_files(table: pl.DataFrame) -> list[str]:
    """The files :func:`plot` writes for ``table``."""
    runs = table.select("dataset", "seed").n_unique()
    return ["models.png"] if runs == 1 else ["rel_err_time_cdf.png", "tradeoff.png"]


def plots_available() -> bool:
    """Whether matplotlib is installed (the plots are optional: the table is the result)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _run_system(
    runner: VowpalWabbit | None,
    algorithms: Sequence[str],
    data: tuple[sp.csr_array, npt.NDArray[np.float64], sp.csr_array, npt.NDArray[np.float64]],
    task: Task,
    rates: Sequence[float],
    alphas: Sequence[float],
    skip_cubic: bool = False,
    options: Mapping[str, Any] = MappingProxyType({}),
) -> dict[str, Outcome | None]:
    """Every algorithm on one split, ours (``runner=None``) or Vowpal Wabbit's; ``apple_best``
    searches alpha at the rate picked for ``apple``."""
    outcomes: dict[str, Outcome | None] = {}
    for algorithm in algorithms:
        if algorithm == "cubic" and skip_cubic:
            outcomes[algorithm] = None
            continue
        apple = outcomes.get("apple")
        apple_rate = apple.rate if apple is not None else None
        if runner is None:
            outcomes[algorithm] = run_ours(
                algorithm, data, task, rates, alphas, apple_rate, options
            )
        else:
            outcomes[algorithm] = runner.run(algorithm, task, data[3], rates, alphas, apple_rate)
    return outcomes


def _rows(
    name: str,
    seed: int,
    task: Task,
    system: str,
    outcomes: dict[str, Outcome | None],
    n_train: int,
) -> list[dict[str, Any]]:
    """The table rows of one system on one split (rel_err against its own lin/quad/cubic)."""
    baseline = [
        o.error if o is not None else math.nan
        for o in (outcomes.get("lin"), outcomes.get("quad"), outcomes.get("cubic"))
    ]
    lin = outcomes.get("lin")
    rows = []
    for algorithm, outcome in outcomes.items():
        row: dict[str, Any] = {
            "dataset": name,
            "seed": seed,
            "task": task,
            "system": system,
            "algorithm": algorithm,
            "n_train": n_train,
        }
        if outcome is None:
            row.update(dict.fromkeys(MEASURES, math.nan))
        else:
            spread = outcome.errors_by_rate.values()
            row.update(
                error=outcome.error,
                seconds=outcome.seconds,
                rate=outcome.rate,
                alpha=outcome.alpha if algorithm.startswith("apple") else math.nan,
                rel_err=rel_err(outcome.error, baseline),
                rel_time=outcome.seconds / lin.seconds if lin is not None else math.nan,
                error_spread=(max(spread) - min(spread)) / max(min(spread), 1e-12)
                if spread
                else math.nan,
                error_default=outcome.errors_by_rate.get(DEFAULT_RATE, math.nan),
                features_per_s=outcome.features / outcome.seconds,
            )
        rows.append(row)
    return rows


def printable(table: pl.DataFrame, *, with_split: bool = True) -> pl.DataFrame:
    """The columns of the table worth printing (generated features per second in millions)."""
    split = ["dataset", "seed"] if with_split else []
    return table.select(
        *split,
        "system",
        "algorithm",
        *HEADLINE,
        (pl.col("features_per_s") / 1e6).alias("Mfeat/s"),
    )


def summary(table: pl.DataFrame) -> dict[str, Any]:
    """The aggregate numbers of docs/benchmarks.md (see :func:`format_summary`): per system and
    apple variant, on how many (data set, seed) runs rel_err < 0.5 and < 0 and the median rel_time;
    per system and algorithm, the rate sensitivity (median ``error_spread``, runs whose error at
    the default rate is within 10% of the tuned error); ours against Vowpal Wabbit per
    algorithm (runs with an error no worse, runs faster, median speed-up)."""
    out: dict[str, Any] = {}
    for system in table["system"].unique().sort().to_list():
        part = table.filter(pl.col("system") == system)
        for algorithm in part["algorithm"].unique().sort().to_list():
            rows = part.filter(pl.col("algorithm") == algorithm)
            key = f"{system}.{algorithm}"
            spread = rows["error_spread"].drop_nans().drop_nulls()
            if spread.len():
                out[f"{key}.median_error_spread"] = float(spread.median())  # type: ignore[arg-type]
            tuned = rows.drop_nans(["error", "error_default"])
            if tuned.height:
                near = tuned["error_default"] <= tuned["error"] * 1.1 + 1e-12
                out[f"{key}.default_near"] = int(near.sum())
                out[f"{key}.default_n"] = tuned.height
            a = rows.drop_nans("rel_err")
            if algorithm.startswith("apple") and a.height:
                out[f"{key}.n"] = a.height
                out[f"{key}.rel_err<0.5"] = int((a["rel_err"] < 0.5).sum())
                out[f"{key}.rel_err<0"] = int((a["rel_err"] < 0).sum())
                out[f"{key}.median_rel_time"] = float(a["rel_time"].median())  # type: ignore[arg-type]
    if {"ours", "vw"} <= set(table["system"].to_list()):
        wide = table.pivot(
            on="system", index=["dataset", "seed", "algorithm"], values=["error", "seconds"]
        )
        # Runs either system lacks (skipped cubic, ours-only ablations) are left out.
        wide = wide.drop_nulls().drop_nans()
        for algorithm in wide["algorithm"].unique().sort().to_list():
            w = wide.filter(pl.col("algorithm") == algorithm)
            if w.height == 0:
                continue
            out[f"vs_vw.{algorithm}.n"] = w.height
            # (Vowpal Wabbit writes predictions with 6 significant digits.)
            out[f"vs_vw.{algorithm}.error_no_worse"] = int(
                (w["error_ours"] <= w["error_vw"] * (1 + 1e-5) + 1e-12).sum()
            )
            out[f"vs_vw.{algorithm}.faster"] = int((w["seconds_ours"] < w["seconds_vw"]).sum())
            ratio = (w["seconds_vw"] / w["seconds_ours"]).median()
            out[f"vs_vw.{algorithm}.median_speedup"] = float(ratio)  # type: ignore[arg-type]
    return out


def format_summary(table: pl.DataFrame) -> str:
    s = summary(table)
    lines = []
    for system in ("ours", "vw"):
        for algorithm in ALGORITHMS + EXTRA_ALGORITHMS:
            key = f"{system}.{algorithm}"
            if f"{key}.n" in s:
                lines.append(
                    f"{system} {algorithm}: rel_err < 0.5 on {s[key + '.rel_err<0.5']}/"
                    f"{s[key + '.n']}, < 0 on {s[key + '.rel_err<0']}/{s[key + '.n']}, median "
                    f"rel_time {s[key + '.median_rel_time']:.2f}"
                )
    for system in ("ours", "vw"):
        for algorithm in ALGORITHMS + EXTRA_ALGORITHMS:
            key = f"{system}.{algorithm}"
            if f"{key}.median_error_spread" in s and f"{key}.default_n" in s:
                lines.append(
                    f"{system} {algorithm} learning-rate sensitivity: median error spread over "
                    f"the grid {s[key + '.median_error_spread']:.2f}, default rate within 10% of "
                    f"tuned on {s[key + '.default_near']}/{s[key + '.default_n']}"
                )
    for algorithm in ALGORITHMS:
        key = f"vs_vw.{algorithm}"
        if f"{key}.n" in s:
            lines.append(
                f"ours vs VW {algorithm}: error no worse on {s[key + '.error_no_worse']}/"
                f"{s[key + '.n']}, faster on {s[key + '.faster']}/{s[key + '.n']}, median "
                f"speed-up {s[key + '.median_speedup']:.2f}x"
            )
    return "\n".join(lines)


def plot(table: pl.DataFrame, out_dir: Path) -> list[str]:
    """The paper's Figure 2 (CDFs of rel_err and rel_time across data sets) and its trade-off
    scatter, as ``rel_err_time_cdf.png`` and ``tradeoff.png``; for a single run (one data set,
    one split), where a distribution has one point, each model's test error and time as bars
    (``models.png``). Returns the files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # The ablations would crowd the plots: they are in the table.
    table = table.filter(pl.col("algorithm").is_in(ALGORITHMS))
    if table.select("dataset", "seed").n_unique() == 1:
        _plot_models(table, out_dir / "models.png")
        return ["models.png"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for (system, algorithm), part in table.group_by(["system", "algorithm"], maintain_order=True):
        label = f"{system}:{algorithm}"
        for ax, column in zip(axes, ("rel_err", "rel_time"), strict=True):
            values = np.sort(part[column].drop_nans().drop_nulls().to_numpy())
            values = values[np.isfinite(values)]
            if len(values):
                ax.step(values, np.arange(1, len(values) + 1), where="post", label=label)
    axes[0].set_xlabel("relative error")
    axes[0].set_xlim(-1.5, 2.0)
    axes[1].set_xlabel("relative time (vs lin)")
    axes[1].set_xscale("log")
    runs = "data sets" if table["seed"].n_unique() == 1 else "runs (data set x split)"
    for ax in axes:
        ax.set_ylabel(f"number of {runs}")
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out_dir / "rel_err_time_cdf.png", dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4.5))
    for (system, algorithm), part in table.group_by(["system", "algorithm"], maintain_order=True):
        if algorithm == "lin":
            continue
        ok = part.filter(pl.col("rel_err").is_finite() & pl.col("rel_time").is_finite())
        ax.scatter(ok["rel_time"], ok["rel_err"], s=14, label=f"{system}:{algorithm}")
    ax.set_xscale("log")
    ax.set_xlabel("relative time (vs lin)")
    ax.set_ylabel("relative error")
    ax.set_ylim(-2, 3)
    ax.axhline(0, color="grey", lw=0.5)
    ax.axhline(1, color="grey", lw=0.5)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out_dir / "tradeoff.png", dpi=110)
    plt.close(fig)
    return ["rel_err_time_cdf.png", "tradeoff.png"]


def _plot_models(table: pl.DataFrame, path: Path) -> None:
    """Test error and training time of each model of one run, ours and Vowpal Wabbit's side by
    side."""
    import matplotlib.pyplot as plt

    algorithms = list(dict.fromkeys(table["algorithm"].to_list()))
    systems = list(dict.fromkeys(table["system"].to_list()))
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    width = 0.8 / len(systems)
    for s, system in enumerate(systems):
        part = table.filter(pl.col("system") == system)
        values = {a: part.filter(pl.col("algorithm") == a) for a in algorithms}
        x = np.arange(len(algorithms)) + s * width
        for ax, column, scale in zip(axes, ("error", "seconds"), (100.0, 1e3), strict=True):
            heights = [
                float(values[a][column][0]) * scale if values[a].height else np.nan
                for a in algorithms
            ]
            ax.bar(x, heights, width, label="ours" if system == "ours" else "Vowpal Wabbit")
    for ax, label in zip(axes, ("test error (%)", "training time (ms, log)"), strict=True):
        ax.set_xticks(np.arange(len(algorithms)) + 0.4 - width / 2, algorithms)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3, axis="y")
    axes[1].set_yscale("log")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"{table['dataset'][0]}: each model's test error and training time")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def default_data_dir() -> Path | None:
    """``$POLARS_POLY_DATA``, else ``../shared/data`` next to a source checkout, else None."""
    env = os.environ.get("POLARS_POLY_DATA")
    if env:
        return Path(env)
    candidate = Path(__file__).resolve().parents[2].parent / "shared" / "data"
    return candidate if candidate.is_dir() else None

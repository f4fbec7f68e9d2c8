"""Distributed training on Dask: the apple paper's protocol, as short tasks Dask can retry.

``fit(estimator, data, "label", client=client, passes=3)`` trains an :class:`SGDRegressor`,
:class:`SGDClassifier`, :class:`DoSClassifier` or :class:`PassiveAggressiveClassifier` on
shards that live on the cluster (parquet files, LIBSVM or Vowpal Wabbit files, or the
partitions of a Dask DataFrame) and returns a fitted estimator like the single-machine one.
Each pass is a round of short, deterministic tasks:

1. each training task (one per worker by default, each over consecutive shards) trains one
   pass from the round's starting model (the first round: from a fresh model; apple then runs
   its epochs over the task's rows, as each node did in the paper);
2. the task models are averaged (:func:`polars_poly._internal.average_learners`), as a tree of
   ``fan_in`` at a time: weights by examples or per slot by the AdaGrad sums, counters summed,
   and after the first round apple's parent set (and the field crosses apple grows on two or
   more columns) is the union of the tasks' and stays frozen;
   DoS and passive-aggressive models are averaged aligned (boosted to minimum norm and rotated
   onto the average first, the DoS paper's §3.4).

No task keeps state between rounds and every task is deterministic, so a task lost with its
worker is recomputed by Dask elsewhere from the same inputs: the final model equals an
undisturbed run's. Models move between workers as futures (the engine's compact model file),
never through the task graph or the client, until the end. See docs/distributed.md.

Needs ``dask[distributed]`` (and ``pandas`` for Dask DataFrames); this module is imported only
when used.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import os
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import polars as pl

try:
    from dask.sizeof import sizeof
    from distributed import Client, Future, default_client, get_worker, wait
except ImportError as missing:  # an optional extra: say how to get it
    raise ImportError(
        f"polars_poly.dask needs Dask ({missing}): pip install 'polars-poly[dask]'"
    ) from missing

import polars_poly
from polars_poly import _internal, readers
from polars_poly._params import check_options, documented, one_of, option
from polars_poly.dos import _BasePA
from polars_poly.learner import _NAMES, SGDClassifier, SGDRegressor, _BaseSGD
from polars_poly.learner._training import between_batches
from polars_poly.multiclass import OneAgainstAll

LOG = logging.getLogger("polars_poly.dask")

# The estimators this module trains: the online learners and the passive-aggressive family.
Estimator = _BaseSGD | _BasePA

AVERAGING = ("auto", "examples", "adaptive")
_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".svm": "libsvm", ".libsvm": "libsvm"}
_FORMATS |= {".svmlight": "libsvm", ".vw": "vw"}


def _sizeof_estimator(estimator: Estimator) -> int:
    # What Dask counts for memory and transfers: the model file, not the Python wrapper.
    model = getattr(estimator, _model_attribute(estimator), None)
    return 1024 + (model.nbytes if model is not None else 0)


for _family in (_BaseSGD, _BasePA):
    sizeof.register(_family)(_sizeof_estimator)  # type: ignore[no-untyped-call]


# ----------------------------------------------------------------------------- shards


@dataclass(frozen=True)
class Shard:
    """One part of the training data, read by the task that trains on it: a file (``format``
    one of ``parquet``, ``libsvm``, ``vw``, with the reader's ``options``) or a Dask DataFrame
    partition (``format="partition"``; the task receives the partition's pandas DataFrame),
    then passed through ``prepare`` (see :func:`fit`)."""

    name: str
    format: str = "parquet"
    options: dict[str, Any] = field(default_factory=dict)
    prepare: Callable[[pl.LazyFrame], pl.LazyFrame] | None = None

    def frame(self, partition: Any = None) -> pl.LazyFrame:
        """The shard as a LazyFrame (files are scanned lazily, in bounded memory)."""
        frame = self._read(partition)
        if self.prepare is None:
            return frame
        prepared = self.prepare(frame)
        if not isinstance(prepared, pl.LazyFrame):
            raise TypeError(
                f"prepare must return a polars LazyFrame, got {type(prepared).__name__}"
            )
        return prepared

    def _read(self, partition: Any) -> pl.LazyFrame:
        if self.format == "partition":
            return pl.from_pandas(partition).lazy()
        if self.format == "parquet":
            return pl.scan_parquet(self.name)
        if self.format == "libsvm":
            return readers.scan_libsvm(self.name, **self.options)
        if self.format == "vw":
            return readers.scan_vw(self.name, **self.options)
        raise ValueError(f"unknown shard format {self.format!r}")


def shards_of(
    data: Any,
    *,
    format: str | None = None,
    reader_options: dict[str, Any] | None = None,
    client: Client | None = None,
    prepare: Callable[[pl.LazyFrame], pl.LazyFrame] | None = None,
) -> list[tuple[Shard, Future[Any] | None]]:
    """The shards of ``data``, each with the future of its Dask DataFrame partition (``None``
    for files): a directory (its files of a known suffix, sorted), one path or a list of paths
    (``format`` from each suffix unless given), or a Dask DataFrame (one shard per partition,
    computed and kept on the cluster); each read through ``prepare`` (see :func:`fit`)."""
    if prepare is not None and not callable(prepare):
        raise TypeError(f"prepare must be a function of a LazyFrame, got {type(prepare).__name__}")
    if hasattr(data, "to_delayed") and hasattr(data, "npartitions"):
        client = client or default_client()  # type: ignore[no-untyped-call]
        partitions = client.compute(data.to_delayed())
        return [
            (Shard(f"partition {k}", "partition", prepare=prepare), part)
            for k, part in enumerate(partitions)
        ]
    if isinstance(data, str | os.PathLike) and Path(data).is_dir():
        directory = Path(data)
        paths = sorted(
            str(p) for p in directory.iterdir() if p.suffix in _FORMATS or p.suffix == ".gz"
        )
        if not paths:
            raise ValueError(f"{directory} holds no files of a known format ({sorted(_FORMATS)})")
    elif isinstance(data, str | os.PathLike):
        paths = [os.fspath(data)]
    elif (
        isinstance(data, Sequence) and data and all(isinstance(p, str | os.PathLike) for p in data)
    ):
        # Kept as given: a URL (s3://...) is read by the workers, not resolved here.
        paths = [os.fspath(p) for p in data]
    else:
        raise TypeError(
            "data must be a directory, a path or a list of paths (parquet, LIBSVM or Vowpal "
            f"Wabbit files), or a Dask DataFrame; got {type(data).__name__}"
        )
    options = dict(reader_options or {})
    return [(Shard(p, format or _format_of(p), options, prepare), None) for p in paths]


def _format_of(path: str) -> str:
    stem, suffix = os.path.splitext(path)
    if suffix == ".gz":
        suffix = os.path.splitext(stem)[1]
    if suffix not in _FORMATS:
        raise ValueError(
            f"cannot tell the format of {path!r} from its suffix; pass format="
            "'parquet', 'libsvm' or 'vw'"
        )
    return _FORMATS[suffix]


@dataclass(frozen=True)
class ShardInfo:
    """What the first look at a shard finds (on its worker)."""

    rows: int
    schema: dict[str, str]
    labels: list[Any] | None
    version: str


# ----------------------------------------------------------------------------- tasks
# Module-level functions: Dask sends them to workers by reference (polars_poly must be
# installed there, at this version).


def _inspect(
    shard: Shard, y: str, sample_weight: str | None, classifier: bool, partition: Any = None
) -> ShardInfo:
    frame = shard.frame(partition)
    schema = frame.collect_schema()
    for what, name in (("y", y), ("sample_weight", sample_weight)):
        if name is not None and name not in schema:
            raise pl.exceptions.ColumnNotFoundError(
                f"shard {shard.name}: {what}={name!r} is not a column; its columns are "
                f"{schema.names()}"
            )
    aggregates = [pl.len().alias("rows")]
    if classifier:
        aggregates.append(pl.col(y).unique().sort().implode().alias("labels"))
    found = frame.select(aggregates).collect(engine="streaming")
    labels = None
    if classifier:
        labels = [v for v in found["labels"][0].to_list() if v is not None]
    return ShardInfo(
        rows=int(found["rows"][0]),
        schema={name: str(dtype) for name, dtype in schema.items()},
        labels=labels,
        version=polars_poly.__version__,
    )


def _model_attribute(estimator: Estimator) -> str:
    """Where the estimator keeps its engine model."""
    return "core_" if isinstance(estimator, _BasePA) else "_learner"


def _with_model(estimator: Estimator, model: Any) -> Any:
    """A new estimator object sharing ``estimator``'s Python state, holding ``model``
    (``copy.copy`` would pickle the model)."""
    out = object.__new__(type(estimator))
    out.__dict__.update(estimator.__dict__)
    setattr(out, _model_attribute(estimator), model)
    return out


def _training_copy(estimator: Estimator) -> Any:
    """A copy to train: Dask hands every task on a worker the same input object. The engine
    copies the model directly (a deep copy would serialize it and read it back, 8x slower on a
    256 MiB table)."""
    name = _model_attribute(estimator)
    out = object.__new__(type(estimator))
    out.__dict__.update(copy.deepcopy({k: v for k, v in estimator.__dict__.items() if k != name}))
    setattr(out, name, copy.copy(getattr(estimator, name)))
    return out


def _progress(estimator: Estimator) -> tuple[int, float, float]:
    """(examples, Σ loss, Σ weight) learned so far: the progressive loss for the online
    learners, the progressive mistakes per binary step for the passive-aggressive family."""
    if isinstance(estimator, _BasePA):
        examples, steps, _, _, mistakes = estimator.core_.stats()
        return examples, float(mistakes), float(steps)
    examples, loss, weight, _ = estimator._learner.progress
    return examples, loss, weight


class _TaskCancelled(Exception):
    """A training task stopped because the fit that wanted it was interrupted."""


def _raise_if_cancelled() -> None:
    """Raises :class:`_TaskCancelled` once the running task was cancelled (Ctrl-C in the fit):
    the worker marks a running task ``cancelled`` and waits for the function to return."""
    try:
        worker = get_worker()
        key = worker.get_current_task()
    except (ValueError, AttributeError):  # not inside a task (a test calling _train directly)
        return
    task = worker.state.tasks.get(key)
    if task is None or task.state == "cancelled":
        raise _TaskCancelled(f"task {key} was cancelled")


def _learn_pa(estimator: _BasePA, frame: pl.LazyFrame, y: str, classes: list[Any] | None) -> None:
    """One pass of a passive-aggressive classifier over a LazyFrame, in its batches."""
    for chunk in frame.collect_batches(chunk_size=int(estimator.batch_size)):
        _raise_if_cancelled()
        if len(chunk):
            estimator.partial_fit(chunk, y, classes=classes)


def _group_frame(shards: list[Shard], partitions: list[Any]) -> pl.LazyFrame:
    """A task's shards, one after the other, as one LazyFrame (streamed)."""
    frames = [shard.frame(part) for shard, part in zip(shards, partitions, strict=True)]
    return frames[0] if len(frames) == 1 else pl.concat(frames, how="vertical")


def _train(
    start: Estimator | None,
    template: Estimator,
    shards: list[Shard],
    rows: list[int],
    y: str,
    sample_weight: str | None,
    partitions: list[Any],
) -> Estimator:
    """One pass over a group of shards (their ``rows``) from ``start`` (a fresh model from
    ``template`` when None)."""
    began = time.perf_counter()
    frame = _group_frame(shards, partitions)
    stop_when_cancelled = between_batches.set(_raise_if_cancelled)
    try:
        if isinstance(template, _BasePA):
            pa = copy.deepcopy(template) if start is None else _training_copy(start)
            _learn_pa(pa, frame, y, list(template.classes_) if start is None else None)
            estimator: Estimator = pa
        elif start is None:
            estimator = copy.deepcopy(template)
            # apple's epochs over this task's rows (the paper's local first pass). No race
            # between rankings: the shards' models must share one to be averaged.
            estimator._fit_lazy(
                frame, y, sample_weight, run_length=sum(rows), race=False, shard=True
            )
            estimator._finish_fit()
        else:
            estimator = _training_copy(start)
            estimator._continue_lazy(frame, y, sample_weight, shard=True)
    except Exception as err:
        ranges, first = [], 0
        for shard, n in zip(shards, rows, strict=True):
            ranges.append(f"{first}-{first + n - 1}: {shard.name}")
            first += n
        err.add_note("in the shards (rows counted over them, in order) " + "; ".join(ranges))
        raise
    finally:
        between_batches.reset(stop_when_cancelled)
    estimator._task_seconds = [time.perf_counter() - began]
    return estimator


def _groups(n_items: int, n_groups: int) -> list[range]:
    """``n_items`` split into ``n_groups`` contiguous, nearly equal ranges."""
    bounds = [n_items * g // n_groups for g in range(n_groups + 1)]
    return [range(bounds[g], bounds[g + 1]) for g in range(n_groups)]


def _combine(start: Estimator | None, parts: list[Estimator], averaging: str) -> Estimator:
    """The average of ``parts`` (trained shards or partial averages, all from ``start``), as an
    estimator sharing the first part's Python state."""
    merged: Any
    if isinstance(parts[0], _BasePA):
        merged = _internal.average_passive_aggressive(
            None if start is None else start.core_, [p.core_ for p in parts]
        )
    elif isinstance(parts[0]._learner, OneAgainstAll):
        merged = _average_heads(start, parts, averaging)
    else:
        learners = [p._learner for p in parts if isinstance(p._learner, _internal.Learner)]
        first = None if start is None else start._learner
        if len(learners) != len(parts) or not isinstance(first, _internal.Learner | None):
            raise TypeError("the parts to average hold models of different kinds")
        merged = _internal.average_learners(first, learners, averaging)
    out = _with_model(parts[0], merged)
    out._task_seconds = [t for p in parts for t in getattr(p, "_task_seconds", [])]
    result: Estimator = out
    return result


def _average_heads(
    start: Estimator | None, parts: list[Estimator], averaging: str
) -> OneAgainstAll:
    """A multiclass model's average: each class's learner averaged over the parts, and the
    progressive error counts added up as the learners' counters are (the start's, plus what
    each part learned since)."""
    models = [p._learner for p in parts if isinstance(p._learner, OneAgainstAll)]
    first = None if start is None else start._learner
    if len(models) != len(parts) or not isinstance(first, OneAgainstAll | None):
        raise TypeError("the parts to average hold models of different kinds")
    heads = [
        _internal.average_learners(
            None if first is None else first.heads[k], [m.heads[k] for m in models], averaging
        )
        for k in range(len(models[0].heads))
    ]
    base = (0.0, 0.0) if first is None else first.errors
    errors = (
        base[0] + sum(m.errors[0] - base[0] for m in models),
        base[1] + sum(m.errors[1] - base[1] for m in models),
    )
    return OneAgainstAll(heads, errors)


def _average(
    start: Estimator | None, parts: list[Estimator], averaging: str, round_index: int
) -> Estimator:
    """The round's model: the last level of the averages (see the module docs), with the
    round's record."""
    began = time.perf_counter()
    out = _combine(start, parts, averaging)
    averaged = time.perf_counter() - began
    before = (0, 0.0, 0.0) if start is None else _progress(start)
    after = _progress(out)
    examples, weight = after[0] - before[0], after[2] - before[2]
    loss = (after[1] - before[1]) / weight if weight else float("nan")
    model = getattr(out, _model_attribute(out))
    record: dict[str, Any] = {
        "pass": round_index + 1,
        "examples": int(examples),
        "progressive_loss": loss,
        "task_seconds": [float(t) for t in out._task_seconds],
        "average_seconds": averaged,
        "model_bytes": int(model.nbytes),
    }
    out.rounds_ = [*getattr(start, "rounds_", []), record]
    if isinstance(out, _BaseSGD):
        out.pass_loss_ = [*getattr(start, "pass_loss_", []), loss]
        out.holdout_loss_ = []
        out.n_passes_ = round_index + 1
        out._rows_seen = 0
        # history_: a row per pass of the averaged model (not the first shard's curve).
        out._history = list(getattr(start, "_history", [])) if start is not None else []
        out._record_history()
        out._finish_fit()
    return out


def _round_record(model: _BaseSGD) -> dict[str, Any]:
    record: dict[str, Any] = model.rounds_[-1]
    return record


def _worker_version() -> str:
    return str(polars_poly.__version__)


def _outgoing_bytes(dask_worker: Any) -> int:
    return int(getattr(dask_worker, "transfer_outgoing_bytes_total", 0))


# ----------------------------------------------------------------------------- driver


def _check_versions(client: Client) -> None:
    """Every worker must run this polars-poly: the model file and the tasks are this
    version's."""
    local = polars_poly.__version__
    found = client.run(_worker_version, on_error="return")
    wrong = {
        address: ("not importable: " + repr(v)) if isinstance(v, BaseException) else v
        for address, v in found.items()
        if v != local
    }
    if wrong:
        raise RuntimeError(
            f"workers run another polars-poly than this process ({local}): {wrong}; install "
            "the same wheel on every worker (docs/distributed.md)"
        )


def _check_shards(shards: list[Shard], infos: list[ShardInfo]) -> None:
    if not shards:
        raise ValueError("no shards to train on")
    reference = infos[0].schema
    for shard, info in zip(shards, infos, strict=True):
        if info.schema != reference:
            differ = sorted(
                name
                for name in set(reference) | set(info.schema)
                if reference.get(name) != info.schema.get(name)
            )
            raise ValueError(
                f"shard {shard.name} does not have the schema of shard {shards[0].name}: "
                f"columns {differ} differ ({[info.schema.get(n) for n in differ]} vs "
                f"{[reference.get(n) for n in differ]})"
            )


def _classes(infos: list[ShardInfo]) -> Any:
    """Every shard's classes: each task learns with all of them (one against all: a learner
    per class, whether or not its shard holds the class)."""
    import numpy as np

    from polars_poly._input import classes_of

    return classes_of(np.asarray([v for info in infos for v in (info.labels or [])]))


def _pa_classes(infos: list[ShardInfo], estimator: _BasePA, y: str) -> Any:
    """All classes over the shards (the first partial_fit of every task must name them all);
    a sparse input needs the model's width given, as shards may reach different widths."""
    import numpy as np

    classes = np.unique(np.asarray([v for info in infos for v in (info.labels or [])]))
    if len(classes) < 2:
        raise ValueError(f"need at least 2 classes over the shards, got {classes.tolist()!r}")
    features = {k: v for k, v in infos[0].schema.items() if k != y}
    if estimator.n_features is None and any(d.startswith("List(Struct") for d in features.values()):
        raise ValueError(
            f"{type(estimator).__name__} on a sparse column across shards needs n_features "
            "(e.g. 2**bits for hashed columns): each shard may see a different width"
        )
    return classes


def _show_progress(progress: bool | None) -> bool:
    if progress is not None:
        return bool(progress)
    return sys.stderr.isatty()


def fit(
    estimator: Estimator,
    data: Any,
    y: str,
    *,
    sample_weight: str | None = None,
    client: Client | None = None,
    passes: int | None = None,
    averaging: str = "auto",
    format: str | None = None,
    reader_options: dict[str, Any] | None = None,
    partitions: int | None = None,
    fan_in: int = 8,
    progress: bool | None = None,
    prepare: Callable[[pl.LazyFrame], pl.LazyFrame] | None = None,
) -> Any:
    """Trains a copy of ``estimator`` on the shards of ``data`` across a Dask cluster and
    returns it fitted (``estimator`` itself is not changed).

    ``data``: a directory of files, a list of paths (parquet, LIBSVM ``.svm``, Vowpal Wabbit
    ``.vw``; ``format`` overrides the suffix, ``reader_options`` go to the reader) or a Dask
    DataFrame. ``prepare``: a function each task applies to its shard's LazyFrame before
    anything reads it, for example to hash raw string columns into sparse ones
    (``lambda f: f.with_columns(polars_poly.hash_features("A", bits=24).alias("A"))``), so
    that raw data trains without a hashed copy written first; it runs on the workers (Dask
    sends it with the tasks) and must return a LazyFrame. ``y`` and ``sample_weight`` are
    column names. ``passes`` (default: the
    estimator's) rounds of one pass per shard, each ended by an average (``averaging``:
    ``"examples"`` or ``"adaptive"``, see the module docs; ``"auto"``: ``"adaptive"`` for the
    SGD estimators with AdaGrad rates, the default, as Vowpal Wabbit's cluster mode averages
    them, else ``"examples"``). ``partitions``: how many training
    tasks share the shards in each pass (consecutive shards, in order; default: one per worker
    of the cluster at the start, the paper's one partition per node). The task models are
    averaged in a tree, ``fan_in`` at a time (exact for ``"examples"``, see
    ``src/model/average.rs``). ``client``: the Dask client (default: the current one).

    The fitted estimator's ``rounds_`` lists each round's examples, seconds, examples/s,
    progressive loss, each training task's seconds, the last average's seconds, the model's
    bytes and the bytes moved.
    """
    if not isinstance(estimator, _BaseSGD | _BasePA):
        raise TypeError(
            "polars_poly.dask.fit trains an SGDRegressor, SGDClassifier, DoSClassifier or "
            f"PassiveAggressiveClassifier, got {type(estimator).__name__}"
        )
    if averaging not in AVERAGING:
        raise ValueError(f"averaging must be one of {AVERAGING}, got {averaging!r}")
    if not isinstance(y, str) or (sample_weight is not None and not isinstance(sample_weight, str)):
        raise TypeError(
            "y and sample_weight must be column names, read from each shard (arrays train on one "
            f"machine): got y={type(y).__name__}, sample_weight={type(sample_weight).__name__}"
        )
    pa = isinstance(estimator, _BasePA)
    if averaging == "auto":
        # By the AdaGrad sums where there are some: on eat-rate (2M rows, 4 shards, the cross
        # found per shard) 2 passes reached one machine's test logloss, 0.623, against 0.658 by
        # examples (docs/distributed.md).
        averaging = "adaptive" if not pa and estimator.adaptive else "examples"
    if pa and (averaging != "examples" or sample_weight is not None):
        raise ValueError(
            f"{type(estimator).__name__} averages its models aligned, by examples "
            "(averaging='examples'), and takes no sample_weight"
        )
    client = client or default_client()  # type: ignore[no-untyped-call]
    if isinstance(estimator, _BaseSGD):
        estimator._check_params()
        estimator._no_averaging("distributed fit")
        n_passes = int(estimator.passes if passes is None else passes)
    else:
        check_options(estimator)
        n_passes = 1 if passes is None else int(passes)
    if n_passes < 1:
        raise ValueError(f"passes must be >= 1, got {n_passes}")
    if partitions is not None and (isinstance(partitions, bool) or int(partitions) < 1):
        raise ValueError(f"partitions must be an integer >= 1 or None, got {partitions!r}")
    if isinstance(fan_in, bool) or int(fan_in) < 2:
        raise ValueError(f"fan_in must be an integer >= 2, got {fan_in!r}")
    _check_versions(client)

    template = type(estimator)(**copy.deepcopy(estimator.get_params(deep=False)))
    template.set_params(progress=False)
    if not pa:
        template.set_params(passes=1)
    classifier = isinstance(estimator, SGDClassifier | _BasePA)
    parts = shards_of(
        data, format=format, reader_options=reader_options, client=client, prepare=prepare
    )
    shards = [shard for shard, _ in parts]
    inspected = [
        client.submit(_inspect, shard, y, sample_weight, classifier, partition, pure=False)
        for shard, partition in parts
    ]
    # Every shard's look finishes first, so that an error names the first bad shard in order.
    wait(inspected)  # type: ignore[no-untyped-call]
    infos: list[ShardInfo] = [future.result() for future in inspected]
    # Empty shards (a filter's output, a partition with no rows) hold nothing to learn.
    kept = [k for k, info in enumerate(infos) if info.rows > 0]
    if len(kept) < len(shards):
        if not kept:
            raise ValueError(f"every shard is empty (0 rows): {[s.name for s in shards][:10]}")
        empty = [shards[k].name for k in range(len(shards)) if infos[k].rows == 0]
        warnings.warn(
            f"{len(empty)} empty shard(s) skipped (0 rows): {empty[:10]}", UserWarning, stacklevel=2
        )
        parts, shards, infos = (
            [parts[k] for k in kept],
            [shards[k] for k in kept],
            [infos[k] for k in kept],
        )
    _check_shards(shards, infos)
    if pa:
        template.classes_ = _pa_classes(infos, estimator, y)
    elif classifier:
        template.classes_ = _classes(infos)
    # One training task per worker process (the paper's one partition per node), unless asked;
    # task g prefers worker g, but may run elsewhere (a lost worker's task moves on).
    # Asked of the scheduler now: the client's own view (`scheduler_info`) is refreshed in the
    # background and may not list the workers yet.
    workers = sorted(client.nthreads())
    groups = _groups(len(shards), min(partitions or len(workers) or 1, len(shards)))
    # No worker yet (a cluster still starting): one task, run wherever the scheduler puts it
    # (Dask refuses allow_other_workers without workers).
    homes: list[dict[str, Any]] = [
        {"workers": [workers[g % len(workers)]], "allow_other_workers": True} if workers else {}
        for g in range(len(groups))
    ]

    bar = None
    if _show_progress(progress):
        from tqdm.auto import tqdm

        bar = tqdm(total=n_passes, unit="pass", desc=f"{type(estimator).__name__} on Dask")
    current: Future[Any] | None = None
    records = []
    pending: list[Future[Any]] = []
    try:
        for r in range(n_passes):
            began = time.perf_counter()
            moved_before = sum(client.run(_outgoing_bytes).values())
            # Every future of the round is in `pending` from its submission: Ctrl-C at any
            # point cancels all that was asked of the cluster.
            trained = []
            for group, home in zip(groups, homes, strict=True):
                task = client.submit(
                    _train,
                    current,
                    template,
                    [shards[k] for k in group],
                    [infos[k].rows for k in group],
                    y,
                    sample_weight,
                    [parts[k][1] for k in group],
                    pure=False,
                    **home,
                )
                trained.append(task)
                pending.append(task)
            # A tree of averages, fan_in at a time: no task holds more than fan_in + 1 models.
            level = trained
            while len(level) > fan_in:
                level = [
                    client.submit(_combine, current, level[i : i + fan_in], averaging, pure=False)
                    for i in range(0, len(level), fan_in)
                ]
                pending.extend(level)
            merged = client.submit(_average, current, level, averaging, r, pure=False)
            pending.append(merged)
            summary = client.submit(_round_record, merged, pure=False)
            pending.append(summary)
            record = summary.result()
            pending = []
            seconds = time.perf_counter() - began
            record["seconds"] = seconds
            record["examples_per_second"] = record["examples"] / seconds
            record["bytes_moved"] = sum(client.run(_outgoing_bytes).values()) - moved_before
            records.append(record)
            LOG.info(
                "pass %d/%d: %d examples in %.2f s (%.0f examples/s), progressive loss %.6f, "
                "%.1f MB moved",
                r + 1,
                n_passes,
                record["examples"],
                seconds,
                record["examples_per_second"],
                record["progressive_loss"],
                record["bytes_moved"] / 1e6,
            )
            if bar is not None:
                bar.update(1)
                bar.set_postfix(
                    loss=f"{record['progressive_loss']:.4f}",
                    ex_s=f"{record['examples_per_second']:,.0f}",
                )
            current = merged
            del trained
    finally:
        # Interrupted (Ctrl-C) or failed: stop the round's work on the cluster too.
        if pending:
            client.cancel(pending)
            pending.clear()
        if bar is not None:
            bar.close()
    assert current is not None
    fitted: Estimator = current.result()
    fitted.rounds_ = records
    fitted.set_params(progress=estimator.progress)
    if isinstance(fitted, _BaseSGD) and isinstance(estimator, _BaseSGD):
        fitted.set_params(passes=estimator.passes)
    return fitted


# ----------------------------------------------------------------------------- estimators


# The options of the Dask estimator classes that are not their single-machine class's.
_DASK_OPTIONS = ("client", "averaging", "prepare")


@dataclasses.dataclass(kw_only=True, eq=False, repr=False)
class _DaskMixin:
    """``fit`` on a Dask cluster for the estimator classes below, and their three options (the
    ``client`` and ``prepare`` are dropped when pickled; a saved model loads as the
    single-machine class)."""

    client: Any = option(None, "The Dask client (default: the current one); not pickled.")
    averaging: str = option(
        "auto",
        "How each round's shard models are averaged: ``examples``, ``adaptive`` or ``auto`` "
        "(``adaptive`` with AdaGrad rates, else ``examples``).",
        check=one_of(*AVERAGING),
    )
    prepare: Any = option(
        None,
        "A function each task applies to its shard's LazyFrame before reading it (hashing raw "
        "string columns, for one; see :func:`polars_poly.dask.fit`); not pickled.",
    )

    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> Any:
        """Trains on ``X`` (see :func:`polars_poly.dask.fit` for the forms of data) with the
        estimator's ``client`` (default: the current client)."""
        base = self._single_machine_class()
        params = {
            k: v
            for k, v in self.get_params(deep=False).items()  # type: ignore[attr-defined]
            if k not in _DASK_OPTIONS
        }
        fitted = fit(
            base(**params),
            X,
            y,
            sample_weight=sample_weight,
            client=self.client,
            averaging=self.averaging,
            prepare=self.prepare,
        )
        self.__dict__.update({k: v for k, v in fitted.__dict__.items() if k not in params})
        return self

    @classmethod
    def _single_machine_class(cls) -> type[_BaseSGD]:
        return next(c for c in cls.__mro__ if c in (SGDRegressor, SGDClassifier))

    def _estimator_text(self) -> str:
        twin = object.__new__(self._single_machine_class())
        twin.__dict__.update({k: v for k, v in self.__dict__.items() if k not in _DASK_OPTIONS})
        return str(twin._estimator_text())

    def __sklearn_clone__(self) -> Any:
        """scikit-learn's ``clone``, sharing the client and ``prepare`` (a client cannot be
        deep-copied, and a copy of either would be the same thing)."""
        from sklearn.base import clone

        params = self.get_params(deep=False)  # type: ignore[attr-defined]
        shared = {k: params.pop(k) for k in ("client", "prepare")}
        copied = {k: clone(v, safe=False) for k, v in params.items()}
        return type(self)(**copied, **shared)

    def __getstate__(self) -> dict[str, Any]:
        state = cast(dict[str, Any], super().__getstate__())
        # A client and a function (a lambda, often) do not pickle; the model does.
        state["client"] = None
        state["prepare"] = None
        return state


@documented(_NAMES)
class DaskSGDRegressor(_DaskMixin, SGDRegressor):
    """:class:`polars_poly.SGDRegressor` trained on a Dask cluster (:func:`fit`); parameters
    as ``SGDRegressor`` plus ``client``, ``averaging`` and ``prepare``.

    [parameters]
    """


@documented(_NAMES)
class DaskSGDClassifier(_DaskMixin, SGDClassifier):
    """:class:`polars_poly.SGDClassifier` trained on a Dask cluster (:func:`fit`); parameters
    as ``SGDClassifier`` plus ``client``, ``averaging`` and ``prepare``.

    [parameters]
    """


__all__ = ["DaskSGDClassifier", "DaskSGDRegressor", "Shard", "fit", "shards_of"]

"""Training: in memory, streamed from a LazyFrame or a VW file, continued by ``partial_fit``;
the progress bar and the learning curve (``history_``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Literal, Self

from polars_poly import _internal
from polars_poly._estimator import (
    ClassifierMixin,
    not_fitted,
)
from polars_poly._input import (
    as_categories,
    as_float_array,
    batch_ranges,
    batches_of,
    check_named_columns,
    classes_of,
    engine_column,
    namespace_columns,
)
from polars_poly._internal import Learner
from polars_poly._lazy import np, pl
from polars_poly._params import fit_options
from polars_poly.learner._data import (
    _at_doublings,
    _Data,
    _has_field_crosses,
    _name_original_rows,
    _shuffled_rows,
    _weights,
)
from polars_poly.learner._inputs import _Inputs
from polars_poly.learner._saturation import warn_if_saturated
from polars_poly.multiclass import OneAgainstAll
from polars_poly.ranking_race import LINEAR, RankingRace
from polars_poly.readers import vw_scan_source

if TYPE_CHECKING:
    import numpy.typing as npt

# Called between a stream's batches; raises to stop the pass. A distributed task sets it to
# stop once its task is cancelled: Dask cannot stop a function that is running, and a pass over
# a large shard would otherwise hold its worker long after the fit was interrupted.
between_batches: ContextVar[Callable[[], None] | None] = ContextVar("between_batches", default=None)


class _Training(_Inputs):
    """Training."""

    def _new_learner(self, namespaces: list[str], race: bool = False) -> None:
        """A new engine model; ``race``: a race between apple's rankings when its ranking is
        ``'auto'`` (not in distributed training, whose shards must share a ranking)."""
        self._check_params()
        learner = self._make_learner(self._engine_options(namespaces))
        apple = self._apple()
        racing = race and apple is not None and apple.ranking == "auto"
        self._learner = RankingRace(learner) if racing else learner
        self._history: list[dict[str, Any]] = []
        self._learned()
        self.namespaces_ = namespaces
        self.pass_loss_: list[float] = []
        self.holdout_loss_: list[float] = []
        self.stopped_early_ = False

    def _make_learner(self, options: dict[str, Any]) -> Learner | OneAgainstAll:
        return Learner(options)

    def _lazy_facts(self, y: str) -> list[pl.Expr]:
        """Aggregations of a LazyFrame a fit must know before its first batch (the classes),
        computed in one scan with the row count when that is needed too."""
        return []

    def _learn_facts(self, facts: pl.DataFrame, query: pl.LazyFrame, y: str) -> None:
        """Takes the one row of :meth:`_lazy_facts`' results (``query``: the model's columns,
        for a further scan)."""

    def _show_progress(self) -> bool:
        try:
            import tqdm  # noqa: F401
        except ImportError:
            if self.progress:
                raise ImportError("progress=True needs tqdm: pip install tqdm") from None
            return False
        if self.progress is not None:
            return bool(self.progress)
        return sys.stderr.isatty()

    def _learn_stream(
        self, batches: Iterable[_Data], total: int | None, whole_batches: bool = False
    ) -> None:
        """One progressive pass over batches, with the progress bar. The batches are cut where
        ``history_`` takes a row, unless ``whole_batches`` (``partial_fit``: a batch with a bad
        row must learn nothing, and the engine checks a batch before learning it)."""
        bar = None
        if self._show_progress():
            from tqdm.auto import tqdm

            bar = tqdm(total=total, unit="ex", unit_scale=True, desc=type(self).__name__)
        self._learned()
        start_examples = self._learner.progress[0]
        row: int = self._rows_seen
        check = between_batches.get()
        try:
            pieces = batches if whole_batches else _at_doublings(batches, start_examples)
            for batch in pieces:
                if check is not None:
                    check()
                if len(batch) == 0:
                    continue
                if batch.labels is None:
                    raise ValueError("y is required")
                self._learner.learn(
                    batch.features, pl.Series(batch.labels), _weights(batch.weights), row
                )
                row += len(batch)
                examples = self._learner.progress[0]
                if examples & (examples - 1) == 0:
                    self._record_history()
                if bar is not None:
                    # tqdm shows examples/s itself (one rate, not two that disagree).
                    bar.update(len(batch))
                    _, loss, weight, _ = self._learner.progress
                    bar.set_postfix(loss=f"{loss / weight:.4f}" if weight else "n/a")
        finally:
            if bar is not None:
                bar.close()
            self._rows_seen = row
            self._record_history()

    def _record_history(
        self,
        progress: tuple[int, float, float, int] | None = None,
        grown: tuple[int, int] | None | Literal["now"] = "now",
    ) -> None:
        """A row of ``history_`` (once per example count): of the model now, or of the
        ``progress`` record (examples, Σ weight·loss, Σ weight, updates) an engine call
        reported, with apple's (expansions, parents) ``grown`` when known (None: not known
        then, a null in the frame)."""
        history: list[dict[str, Any]] = self.__dict__.setdefault("_history", [])
        examples, loss, weight, updates = progress or self._learner.progress
        last = history[-1] if history else None
        if weight == 0 or (last is not None and last["examples"] == examples):
            return
        since = last or {"examples": 0, "_loss": 0.0, "_weight": 0.0, "_updates": 0}
        if grown == "now":
            apple = self._learner.apple_state()
            grown = (
                (int(apple[0]), len(self._learner.apple_parents())) if apple is not None else (0, 0)
            )
        history.append(
            {
                "examples": examples,
                "progressive_loss": loss / weight,
                "loss_since_last": (loss - since["_loss"]) / max(weight - since["_weight"], 1e-300),
                "features_per_example": (updates - since["_updates"])
                / max(examples - since["examples"], 1),
                "expansions": None if grown is None else grown[0],
                "parents": None if grown is None else grown[1],
                "_loss": loss,
                "_weight": weight,
                "_updates": updates,
            }
        )

    @property
    def history_(self) -> pl.DataFrame:
        """The learning curve: a row at 1, 2, 4, ... examples and at the end of each stream
        (``fit``, ``partial_fit``, each pass of a multi-pass in-memory ``fit``): examples,
        progressive loss so far and since the row before, features updated per example since
        then, apple's expansions and parents. Inside a multi-pass in-memory ``fit`` (one engine
        call) apple's counts are known at its end only: null before. A multiclass model's
        multi-pass ``fit`` records its end only."""
        rows = getattr(self, "_history", None)
        if rows is None:
            raise not_fitted(self)
        schema = {
            "examples": pl.Int64,
            "progressive_loss": pl.Float64,
            "loss_since_last": pl.Float64,
            "features_per_example": pl.Float64,
            "expansions": pl.Int64,
            "parents": pl.Int64,
        }
        return pl.DataFrame([{k: r[k] for k in schema} for r in rows], schema=schema)

    def plot_learning_curve(self, ax: Any = None) -> Any:
        """The progressive loss against the examples learned (log scale), apple's expansions
        marked; needs matplotlib. Returns the matplotlib Axes."""
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError(
                "plot_learning_curve needs matplotlib: pip install matplotlib"
            ) from None
        history = self.history_
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
        ax.plot(history["examples"], history["progressive_loss"], marker=".", label="average")
        ax.plot(history["examples"], history["loss_since_last"], alpha=0.6, label="since last")
        grown = history.filter(pl.col("expansions") > pl.col("expansions").shift(1).fill_null(0))
        for examples in grown["examples"]:
            ax.axvline(examples, color="grey", linestyle=":", linewidth=1)
        ax.set_xscale("log")
        ax.set_xlabel("examples learned")
        ax.set_ylabel(f"progressive {self.loss} loss")
        ax.legend()
        return ax

    def plot_monomials(self, top: int = 20, ax: Any = None) -> Any:
        """apple's ``top`` monomials of largest absolute weight as horizontal bars (colour:
        degree; label: the monomial, with its class for a multiclass model, and the expansion
        that added it); needs matplotlib. Returns the matplotlib Axes."""
        try:
            import matplotlib.pyplot as plt
            from matplotlib.patches import Rectangle
        except ImportError:
            raise ImportError("plot_monomials needs matplotlib: pip install matplotlib") from None
        table = self.monomials()
        if top < 1:
            raise ValueError(f"top must be at least 1, got {top!r}")
        shown = table.sort(pl.col("weight").abs(), descending=True).head(top).reverse()
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 0.3 * max(shown.height, 4) + 1))
        prefix = [f"{c}: " for c in shown["class"]] if "class" in shown.columns else None
        labels = [
            f"{prefix[i] if prefix else ''}{m} (exp. {e})"
            for i, (m, e) in enumerate(zip(shown["monomial"], shown["expansion"], strict=True))
        ]
        colors = [f"C{d - 1}" for d in shown["degree"]]
        ax.barh(range(shown.height), shown["weight"].to_list(), color=colors)
        ax.set_yticks(range(shown.height), labels, fontsize=8)
        ax.axvline(0, color="grey", linewidth=0.5)
        ax.set_xlabel("weight of the monomial")
        degrees = sorted(set(shown["degree"].to_list()))
        handles = [Rectangle((0, 0), 1, 1, color=f"C{d - 1}") for d in degrees]
        ax.legend(handles, [f"degree {d}" for d in degrees], fontsize=8, loc="lower right")
        ax.set_title(f"apple's monomials, top {shown.height} of {table.height} by |weight|")
        return ax

    def _fit_memory(self, data: _Data) -> None:
        if data.labels is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        if len(data) == 0:
            raise ValueError("cannot fit on 0 examples")
        if data.weights is not None and len(data.weights) and not data.weights.any():
            raise ValueError("Sample weights must contain at least one non-zero number.")
        passes = int(self.passes)
        if passes == 1 and not float(self.average_tail):
            self._learner.begin_run(len(data))
            size = int(self.batch_size)
            before = self._learner.progress
            ranges = batch_ranges(data.features, len(data), size)
            lengths = {len(a) for a in (data.labels, data.weights) if a is not None}
            order = _shuffled_rows(len(data), self.random_state) if self.shuffle else None
            pieces: Iterable[_Data]
            if lengths - {len(data)}:
                pieces = [data]  # labels or weights of another length: the engine names it
            elif order is None:
                pieces = (data.slice(s, n) for s, n in ranges)
            else:  # one shuffled batch at a time
                # Gathering from a column of many chunks (a frame read from parquet) costs
                # several times the learning: such columns are made contiguous once.
                shuffled = data.contiguous()
                pieces = (shuffled.take(order[s : s + n]) for s, n in ranges)
            first = self._rows_seen
            try:
                self._learn_stream(pieces, len(data))
            except ValueError as err:
                if order is not None and not lengths - {len(data)}:
                    _name_original_rows(err, order, first)
                raise
            after = self._learner.progress
            self.pass_loss_ = [(after[1] - before[1]) / max(after[2] - before[2], 1e-300)]
            return
        runs, pass_loss, holdout_loss, stopped, curve = self._learner.fit(
            data.features, pl.Series(data.labels), _weights(data.weights), fit_options(self)
        )
        self.n_passes_ = runs
        self.pass_loss_ = pass_loss
        self.holdout_loss_ = holdout_loss
        self.stopped_early_ = stopped
        # The last record is the model now, whose apple counts are known.
        for progress in curve[:-1]:
            self._record_history(progress, grown=None)
        self._record_history()

    def _lazy_batches(
        self, frame: pl.LazyFrame, y: Any, sample_weight: Any, fitting: bool
    ) -> tuple[pl.LazyFrame, Callable[[], Iterator[_Data]]]:
        """The query of a LazyFrame's model columns, and its batches of ``batch_size`` rows.
        ``fitting`` chooses (and remembers) the feature columns; else the fitted ones."""
        if not isinstance(y, str):
            raise TypeError("with a LazyFrame, y must be the name of the target column")
        if sample_weight is not None and not isinstance(sample_weight, str):
            raise TypeError("with a LazyFrame, sample_weight must be a column name")
        schema = frame.collect_schema()
        check_named_columns(schema, y=y, sample_weight=sample_weight)
        exclude = {y} | ({sample_weight} if isinstance(sample_weight, str) else set())
        frame, codes = as_categories(frame, schema, self._categorical_names(), exclude)
        if codes:
            schema = pl.Schema(schema | dict.fromkeys(codes, pl.String()))
        if fitting:
            names, numeric = self._frame_columns(schema, exclude)
            self._remember_columns(names, numeric, schema, codes)
        else:
            names, numeric = self._fitted_columns()
            for name in names:
                check_named_columns(schema, feature_column=name)
        # Numeric columns become their namespace's struct batch by batch (the query keeps the
        # frame's names: no "features" column beside the target's or weight's own name).
        keep = [*(engine_column(n, schema[n]) for n in names), pl.col(y)]
        if isinstance(sample_weight, str):
            keep.append(pl.col(sample_weight))
        query = frame.select(keep)

        def batches() -> Iterator[_Data]:
            first_row = self._rows_seen
            for chunk in batches_of(query, int(self.batch_size)):
                labels = self._labels(chunk.get_column(y), first_row)
                weights = None
                if isinstance(sample_weight, str):
                    column = chunk.get_column(sample_weight)
                    weights = as_float_array(column, "sample_weight", first_row)
                columns = namespace_columns(chunk, names, numeric)
                first_row += len(chunk)
                yield _Data(columns, labels, weights)

        return query, batches

    def _lazy_pass(
        self, batches: Callable[[], Iterator[_Data]], rows: int | None = None, shard: bool = False
    ) -> None:
        """One progressive pass over a LazyFrame's batches (``rows`` of them, when known: the
        progress bar's total). ``shard``: the rows are one task's part of a distributed fit,
        where rows whose importance weights are all 0 learn nothing instead of failing (the
        average weighs each task by what it learned)."""
        before = self._learner.progress
        self._learn_stream(batches(), rows)
        after = self._learner.progress
        if after[0] == before[0]:
            raise ValueError("cannot fit on 0 examples")
        if after[2] == before[2]:
            if not shard:
                # scikit-learn's message for the same input in memory.
                raise ValueError("Sample weights must contain at least one non-zero number.")
            self.pass_loss_.append(float("nan"))
            return
        self.pass_loss_.append((after[1] - before[1]) / (after[2] - before[2]))

    def _fit_lazy(
        self,
        frame: pl.LazyFrame,
        y: Any,
        sample_weight: Any,
        run_length: int | None = None,
        race: bool = True,
        shard: bool = False,
    ) -> None:
        """A new model from ``passes`` passes over a LazyFrame. apple's epochs are placed over
        ``run_length`` examples when given, else over the counted rows (epochs schedule);
        ``race``: see :meth:`_new_learner`; ``shard``: see :meth:`_lazy_pass`."""
        query, batches = self._lazy_batches(frame, y, sample_weight, fitting=True)
        apple = self._apple()
        # apple's epochs need the run length: count the rows first, in the scan (if any) that
        # finds what the model needs before its first batch. Where that scan runs anyway (a
        # classifier's classes) the rows are counted too: a large table the run will fill then
        # starts on huge pages (see `Learner.begin_run`).
        facts_needed = self._lazy_facts(y)
        count = run_length is None and (
            (apple is not None and apple.schedule == "epochs") or bool(facts_needed)
        )
        aggregates = [*facts_needed, *([pl.len().alias("_rows")] if count else [])]
        facts = query.select(aggregates).collect(engine="streaming") if aggregates else None
        if facts is not None:
            self._learn_facts(facts, query, y)
        self._new_learner(self._namespaces(), race=race)
        self._rows_seen = 0
        rows = run_length
        if run_length is not None:
            self._learner.begin_run(run_length)
        elif facts is not None and count:
            rows = int(facts["_rows"][0])
            self._learner.begin_run(rows * int(self.passes))
        for _ in range(int(self.passes)):
            self._lazy_pass(batches, rows, shard=shard)
        self.n_passes_ = int(self.passes)

    def _continue_lazy(
        self, frame: pl.LazyFrame, y: Any, sample_weight: Any, shard: bool = False
    ) -> None:
        """One more pass of the fitted model over a LazyFrame with the fitted feature columns
        (rows numbered from 0 in errors: a new stream); ``shard``: see :meth:`_lazy_pass`."""
        _, batches = self._lazy_batches(frame, y, sample_weight, fitting=False)
        self._rows_seen = 0
        self._lazy_pass(batches, shard=shard)
        self.n_passes_ = getattr(self, "n_passes_", 0) + 1
        self._finish_fit()

    def _fit(self, X: Any, y: Any, sample_weight: Any) -> Self:
        self._check_params()
        if isinstance(X, str | os.PathLike):
            X = self._vw_file(X, scoring=False)
        source = vw_scan_source(X) if y is None and sample_weight is None else None
        if source is not None and self._fit_vw_file(*source):
            return self
        y, sample_weight = self._vw_defaults(X, y, sample_weight)
        if isinstance(X, pl.LazyFrame):
            self._no_averaging("fit on a LazyFrame")
            self._fit_lazy(X, y, sample_weight)
        else:
            data = self._data(X, y, sample_weight, fitting=True)
            self._new_learner(self._namespaces(), race=True)
            self._rows_seen = 0
            self.n_passes_ = int(self.passes)
            self._fit_memory(data)
        self._finish_fit()
        return self

    def _fit_vw_file(self, path: str, options: dict[str, Any], batch_rows: int) -> bool:
        """``fit`` of a Vowpal Wabbit file as :func:`scan_vw` reads it, learned by the engine
        end to end (``src/vw_run``): the same model as fitting the frames, without them. False
        (nothing done) for the models that learn in pieces (apple's ranking race, more than
        two classes) and for averaging, which take the frames' path."""
        apple = self._apple()
        if float(self.average_tail) or (apple is not None and apple.ranking == "auto"):
            return False
        namespaces, labels, more = _internal.vw_scan(path, options)
        classes = None
        if isinstance(self, ClassifierMixin):
            found = classes_of(np.asarray(labels, dtype=np.float64))
            if more or len(found) != 2:
                return False
            self.classes_ = found
            classes = (float(found[0]), float(found[1]))
        schema = _internal.reader_schema("vw", options).schema
        columns, _ = self._frame_columns(schema, {"label", "weight", "base", "tag"})
        if hasattr(self, "_learner"):
            del self._learner

        def run(learner: Learner) -> tuple[Any, ...]:
            return _internal.vw_train(
                learner,
                path,
                None,
                options,
                write_cache=False,
                scan=None,
                passes=1,
                holdout_period=0,
                early_terminate=0,
                test_only=False,
                classes=classes,
                batch_rows=batch_rows,
                progress=None,
                quiet=True,
                history=False,
                predictions=None,
                print=lambda lines: None,
                overflow="refuse",  # as the estimators' other inputs: an error naming the row
            )

        for _ in range(int(self.passes)):
            before = self._learner.progress if hasattr(self, "_learner") else (0, 0.0, 0.0, 0)
            self._learn_vw(columns, run)
            after = self._learner.progress
            if after[0] == before[0]:
                raise ValueError("cannot fit on 0 examples")
            if after[2] == before[2]:
                raise ValueError("Sample weights must contain at least one non-zero number.")
            self.pass_loss_.append((after[1] - before[1]) / (after[2] - before[2]))
        self.n_passes_ = int(self.passes)
        return True

    def _finish_fit(self, keep_race: bool = False) -> None:
        """Fitted attributes from the model; a ranking race ends here (its winner kept) unless
        ``keep_race`` (``partial_fit``: the stream goes on)."""
        if isinstance(self._learner, RankingRace) and not keep_race:
            self._learner, _ = self._learner.winner()
        learner = self._check_fitted()
        examples, loss, weight, updates = learner.progress
        self.n_examples_ = int(examples)
        self.n_feature_updates_ = int(updates)
        self.progressive_loss_ = loss / weight if weight else float("nan")
        apple = learner.apple_state()
        if apple is not None:
            self.n_expansions_ = int(apple[0])
            self.n_parents_ = len(learner.apple_parents())
            engine = learner.options()["features"]
            engine = engine.get("apple", engine)
            # max_degree 1 where the settings ask more: the race kept the linear model.
            asked = getattr(self._apple(), "max_degree", 1)
            stopped = int(engine["max_degree"]) == 1 < int(asked)
            self.apple_ranking_ = LINEAR if stopped else str(engine["ranking"])
        if _has_field_crosses(learner):
            self.n_crosses_ = len(learner.field_crosses())
        if isinstance(learner, OneAgainstAll) and learner.errors[1] > 0:
            errors, weight = learner.errors
            self.progressive_error_ = errors / weight
        self.table_load_ = float(learner.table_load())
        options = learner.options()
        bytes_per_slot = 16 if options["adaptive"] or options["normalized"] else 4
        self.bits_ = int(options["bits"])
        max_bits = options.get("max_bits")
        # A growing table below its largest size grows where it is crowded (at its next look).
        if max_bits is None or self.bits_ >= int(max_bits):
            warn_if_saturated(
                type(self).__name__,
                self.table_load_,
                self.bits_,
                bytes_per_slot,
                growing=max_bits is not None,
            )

    def _partial_fit(self, X: Any, y: Any, sample_weight: Any) -> Self:
        if isinstance(X, pl.LazyFrame):
            raise TypeError("partial_fit takes in-memory batches; use fit for a LazyFrame")
        self._no_averaging("partial_fit")
        y, sample_weight = self._vw_defaults(X, y, sample_weight)
        first = not hasattr(self, "_learner")
        data = self._data(
            X, y, sample_weight, fitting=first, first_row=0 if first else self._rows_seen
        )
        if first:
            self._new_learner(self._namespaces(), race=True)
            self._rows_seen = 0
        if len(data) == 0:
            raise ValueError("cannot fit on 0 examples")
        self._learn_stream([data], len(data), whole_batches=True)
        self._finish_fit(keep_race=True)
        return self

    def _learn_scored(
        self, X: Any, y: Any, sample_weight: Any, held_out: list[bool] | None = None
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """``partial_fit`` of one batch that learns every row but those ``held_out`` marks
        (scored only) and reports each row: its progressive prediction, its loss times its
        weight, its features. What the command line's Vowpal Wabbit report needs; one engine
        model only (no ranking race, not one-against-all)."""
        first = not hasattr(self, "_learner")
        data = self._data(
            X, y, sample_weight, fitting=first, first_row=0 if first else self._rows_seen
        )
        if first:
            self._new_learner(self._namespaces())
            self._rows_seen = 0
        learner = self._learner
        if not isinstance(learner, Learner):
            raise TypeError(f"a report of every row needs one engine model, not a {learner!r}")
        self._learned()
        labels = pl.Series(data.labels)
        scored = learner.learn_scored(
            data.features, labels, _weights(data.weights), self._rows_seen, held_out
        )
        self._rows_seen += len(data)
        self._finish_fit()
        predictions, losses, features = (s.to_numpy() for s in scored)
        return predictions, losses, features

    def _learn_vw(
        self, namespaces: list[str], run: Callable[[Learner], tuple[Any, ...]]
    ) -> tuple[Any, ...]:
        """The command line's run on Vowpal Wabbit text or its cache, in the engine end to end:
        a new model's feature columns are the file's ``namespaces`` it learns (each a sparse
        column of the reader's frame, none numeric); ``run`` gets the one engine model and
        returns what the engine's run did, its second item the rows read. Bookkeeping as
        ``partial_fit``'s."""
        first = not hasattr(self, "_learner")
        if first:
            self._remember_columns(list(namespaces), [])
            self._new_learner(self._namespaces())
            self._rows_seen = 0
        learner = self._learner
        if not isinstance(learner, Learner):
            raise TypeError(f"a run of the engine needs one engine model, not a {learner!r}")
        self._learned()
        result = run(learner)
        self._rows_seen += int(result[1])
        self._finish_fit()
        return result

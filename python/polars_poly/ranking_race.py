"""``RankingRace``: apple's ``ranking="auto"``, two rankings trained side by side in one fit.

apple's rankings of candidate parents each win data sets the other loses
(notes/apple_experiments.md, "A race between rankings"): ``typical`` on most shared sets and on easy
text, Vowpal Wabbit's ``max_magnitude`` on dense sets with heavy tails and on noisy text. Both
models are the same until the first expansion that may add parents (the ranking is read only there),
so the race trains one model up to the example before that expansion (cutting the batch there),
copies it with the rival ranking (``Learner.fork``), and from there trains both on every batch, in
parallel. An expansion that may add no parent (every namespace so far left to field crosses, as on
hashed categorical fields) is passed alone: both rankings agree on it. The ranking with the lower
progressive loss leads: it answers every question asked during the fit, and the fit keeps it alone
at its end.

A third model forks at the same place and stops growing monomials (``max_degree=1``): the
linear model (field crosses, where apple grows them, still grow).
It leads only when its progressive loss is lower than the best ranking's by ``LINEAR_MARGIN``,
a guard against expansions that hurt (on sector, a text set of 5k rows, apple's progressive
loss was 80-120% above linear's and its test error 3.5 times linear's), not a choice between
near equals (on a9a apple's progressive loss is 0.6-1.3% above linear's, its test error
lower).

The models are a fit's working state: the estimator keeps the leader
(:meth:`RankingRace.winner`) when ``fit`` ends, so a fitted model is one engine model as always.
``partial_fit`` keeps racing from call to call; the leader answers predictions, and saving or
pickling stores the leader alone (a loaded model trains on with its ranking).

A race learned in batches (one pass, a stream, ``partial_fit``) is decided once the models have
learned ``DECIDE_AFTER`` examples since the fork: one model then trains alone. By then the
progressive losses compare on 131k examples each (the same examples: the differences are
paired, and small ones show), and racing on costs the whole
rest of a long stream 1.5-3x (click with count columns, 2M rows: the race 18.9 s against one
ranking's 12.5 s, for the same model, notes/issue58_plan.md). The model kept is the linear one
unless the better ranking's loss since the fork is ``PAYS_MARGIN`` below it: on a long stream
monomials that do not pay cost the rest of it for nothing (click with count columns: 1.7x the
fit for 0.02% of loss), else the leader. A multi-pass fit (one engine call) races to its end;
of the paper's comparison sets, learned in one pass, only skin_nonskin (196k training rows) is
long enough to be decided, and keeps the model the end of its fit keeps (``typical``).
"""

from __future__ import annotations

import copy
import warnings
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any

from polars_poly import _internal

if TYPE_CHECKING:
    import polars as pl

    from polars_poly._internal import Learner
    from polars_poly.multiclass import OneAgainstAll

# The ranking a race starts with, and its rival.
FIRST = "typical"
RIVAL = "max_magnitude"
# The name of the third model, which stops growing at the fork: the linear model.
LINEAR = "linear"
# Examples learned in batches after the fork, after which the race is decided (module docs).
DECIDE_AFTER = 1 << 17
# The linear model leads only when its progressive loss is lower by this fraction of the best
# ranking's: a guard against an expansion that hurts (sector: apple's loss 80-120% above
# linear's), not a fine choice (a9a: 0.6-1.3% above, yet apple's test error is the lower).
LINEAR_MARGIN = 0.10
# When a race learned in batches is decided, the monomials must have paid for their cost: the
# linear model (field crosses still grow) is kept unless the better ranking's loss since the
# fork is lower than the linear one's by this fraction. On click with count columns the
# monomials of the counts cost 1.7x the fit for 0.02% of loss (notes/issue58_plan.md); where
# they model an interaction they lower the loss by percents.
PAYS_MARGIN = 0.005


def _loss(model: Learner | OneAgainstAll) -> float:
    _, loss, weight, _ = model.progress
    return loss / weight if weight else float("inf")


def _loss_since(at_fork: tuple[float, float], model: Learner | OneAgainstAll) -> float:
    """``model``'s progressive loss over the examples since the fork."""
    _, loss, weight, _ = model.progress
    weight -= at_fork[1]
    return (loss - at_fork[0]) / weight if weight > 0 else float("inf")


class RankingRace:
    """The models of apple's ``ranking="auto"`` during a fit (see the module docs): the first
    ranking's model, and from the fork on the rival ranking's and the linear one; everything but
    training is asked of the leader."""

    def __init__(self, first: Learner | OneAgainstAll) -> None:
        self.first = first
        self.rival: Learner | OneAgainstAll | None = None
        self.linear: Learner | OneAgainstAll | None = None
        # Whether the rivals were forked (a rival that fails leaves the race: it is None then).
        self._forked = False
        # Whether a fork could no longer be the rivals' models (the first then trains alone).
        self._alone = False
        # The first model's example count at the fork (None before it), and its (Σ weight·loss,
        # Σ weight) there, which every model shares.
        self._forked_at: int | None = None
        self._loss_at_fork = (0.0, 0.0)

    @property
    def leader(self) -> Learner | OneAgainstAll:
        """The ranking with the lower progressive loss (the first on a tie, and before the fork:
        until then all are the same model), or the linear model when its loss is lower by
        ``LINEAR_MARGIN``."""
        return self.winner()[0]

    def winner(self) -> tuple[Learner | OneAgainstAll, str]:
        """The leader and its name (a ranking, or ``'linear'``): what the fit keeps."""
        best, name = self.first, FIRST
        if self.rival is not None and _loss(self.rival) < _loss(self.first):
            best, name = self.rival, RIVAL
        if self.linear is not None and _loss(self.linear) * (1 + LINEAR_MARGIN) < _loss(best):
            return self.linear, LINEAR
        return best, name

    def _models(self) -> list[Learner | OneAgainstAll]:
        return [m for m in (self.first, self.rival, self.linear) if m is not None]

    def _fork(self) -> None:
        """Forks the rivals; without the memory for their copies the first ranks alone, with a
        warning (a copy is refused before it is tried: an allocation that fails aborts)."""
        try:
            self.rival = self.first.fork(RIVAL)
            self.linear = self.first.fork(FIRST, linear=True)
        except MemoryError as error:
            self.rival = self.linear = None
            self._alone = True
            warnings.warn(
                f"apple's ranking race ranks by {FIRST!r} alone: {error}",
                ResourceWarning,
                stacklevel=4,
            )
            return
        self._forked = True
        self._forked_at = self.first.progress[0]
        self._loss_at_fork = (self.first.progress[1], self.first.progress[2])

    def _decide_when_due(self) -> None:
        """After ``DECIDE_AFTER`` examples since the fork, one model trains on alone: the linear
        one unless the monomials paid (``PAYS_MARGIN``), else the leader."""
        if self._forked_at is None or self.rival is None and self.linear is None:
            return
        if self.first.progress[0] - self._forked_at >= DECIDE_AFTER:
            self.first, self.rival, self.linear = self.decided(), None, None

    def decided(self) -> Learner | OneAgainstAll:
        """The model a decided race keeps (``_decide_when_due``)."""
        rankings = [m for m in (self.first, self.rival) if m is not None]
        best = min(_loss_since(self._loss_at_fork, m) for m in rankings)
        if self.linear is not None and _loss_since(self._loss_at_fork, self.linear) <= best * (
            1 + PAYS_MARGIN
        ):
            return self.linear
        return self.leader

    def _drop(self, model: Learner | OneAgainstAll) -> None:
        """A rival whose call failed leaves the race (the first's error is the fit's)."""
        if model is self.rival:
            self.rival = None
        if model is self.linear:
            self.linear = None

    def _fork_before_fit(self) -> None:
        """Before a multi-pass fit (one engine call, which cannot be cut at the expansion):
        forks now if the next expansion may add parents as things stand."""
        if not self._forked and not self._alone:
            upcoming = self.first.apple_next_expansion()
            if upcoming is not None and upcoming[1]:
                self._fork()
            else:
                self._alone = True  # the fit may add parents: a later fork would not be exact

    def _each(self, call: str, *args: Any) -> Any:
        """``call(*args)`` on every model, the leader's result. After the fork the rivals run on
        worker threads (the engine releases the GIL while learning) and the first on this one,
        where Ctrl-C reaches the engine and stops the loops of every thread; Ctrl-C met while
        waiting for the rivals asks them to stop. A rival whose call fails leaves the race (a
        rival may fail where the first does not, as when its parents would expand a row past
        the bound on terms); the first's error is the fit's."""
        models = self._models()
        if len(models) == 1:
            return getattr(models[0], call)(*args)
        with ThreadPoolExecutor(max_workers=len(models) - 1) as pool:
            futures = [pool.submit(getattr(m, call), *args) for m in models[1:]]
            try:
                results = {id(models[0]): getattr(models[0], call)(*args)}
                wait(futures)
            except KeyboardInterrupt:
                _internal.set_engine_stop(True)
                wait(futures)
                _internal.set_engine_stop(False)
                raise
        for model, future in zip(models[1:], futures, strict=True):
            if future.exception() is None:
                results[id(model)] = future.result()
            else:
                self._drop(model)
        return results[id(self.leader)]

    # ----------------------------------------------------------------------------- training

    def learn(
        self,
        features: list[pl.Series],
        labels: pl.Series,
        weights: pl.Series | None = None,
        first_row: int = 0,
    ) -> tuple[float, float]:
        """``Learner.learn`` on every model; before the rival exists the batch is cut just
        before each expansion point it holds, where the fork is decided on every example before
        it. Returns the leader's (Σ weight·loss, Σ weight) of the batch."""
        rows, done = len(labels), 0
        loss = weight = 0.0
        upcoming = None if self._forked or self._alone else self.first.apple_next_expansion()
        if upcoming is not None and upcoming[0] - 1 - self.first.progress[0] < rows:
            # The batch will be learned in pieces: refuse it whole first, as one call would.
            self.first.check_batch(features, labels, weights, first_row)

        def alone(count: int) -> None:
            nonlocal done, loss, weight
            part = _rows(features, labels, weights, done, count)
            add = self.first.learn(*part, first_row + done)
            loss, weight, done = loss + add[0], weight + add[1], done + count

        while not self._forked and not self._alone:
            upcoming = self.first.apple_next_expansion()
            if upcoming is None:
                break
            before = upcoming[0] - 1 - self.first.progress[0]
            if before >= rows - done:
                break  # the expansion is beyond this batch
            if before > 0:
                alone(before)
            if self.first.apple_next_expansion()[1]:  # type: ignore[index]
                self._fork()
            else:
                alone(1)  # an expansion that adds nothing: the rankings agree on it
        if done < rows:
            part = _rows(features, labels, weights, done, rows - done)
            add = self._each("learn", *part, first_row + done)
            loss, weight = loss + add[0], weight + add[1]
        self._decide_when_due()
        return loss, weight

    def fit(self, *args: Any) -> Any:
        """``Learner.fit`` (one engine call, several passes) on every model, forked before it
        when an expansion may add parents; the leader's report."""
        self._fork_before_fit()
        return self._each("fit", *args)

    def __copy__(self) -> RankingRace:
        """An independent race: every model copied."""
        copied = RankingRace(copy.copy(self.first))
        copied.rival = None if self.rival is None else copy.copy(self.rival)
        copied.linear = None if self.linear is None else copy.copy(self.linear)
        copied._forked, copied._alone = self._forked, self._alone
        copied._forked_at, copied._loss_at_fork = self._forked_at, self._loss_at_fork
        return copied

    def begin_run(self, examples: int) -> None:
        for model in self._models():
            model.begin_run(examples)

    def __getattr__(self, name: str) -> Any:
        # Everything else (progress, apple_state, predict, options, ...) is the leader's.
        if name in ("first", "rival", "linear", "_forked", "_alone", "_forked_at", "_loss_at_fork"):
            raise AttributeError(name)
        return getattr(self.leader, name)


def _rows(
    features: list[pl.Series], labels: pl.Series, weights: pl.Series | None, start: int, count: int
) -> tuple[list[pl.Series], pl.Series, pl.Series | None]:
    """Rows ``start .. start + count`` of a batch."""
    return (
        [f.slice(start, count) for f in features],
        labels.slice(start, count),
        None if weights is None else weights.slice(start, count),
    )

"""apple's ``ranking="auto"`` (``polars_poly.ranking_race``): the race keeps the ranking with the
lower progressive loss, its model is that ranking's model trained alone, the linear model is kept
where expansions hurt, the fork waits for an expansion that may add parents, and the setting
survives a file."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import polars as pl
import polars_poly as pp
import pytest
from polars_poly import _internal, ranking_race
from polars_poly.benchdata import load_dataset
from polars_poly.ranking_race import RankingRace
from polars_poly.synthetic import eat_rate

from tests.conftest import shared_file


def heavy_tailed(seed: int, lognormal: bool) -> tuple[np.ndarray, np.ndarray]:
    """Six heavy-tailed columns, y = x0·x1 + x2/2 + noise: either ranking may train better
    (seed 0: ``max_magnitude`` on lognormal columns, ``typical`` on Student-t ones)."""
    rng = np.random.default_rng(seed)
    X = rng.lognormal(0, 1, (4000, 6)) if lognormal else rng.standard_t(3, (4000, 6))
    y = X[:, 0] * X[:, 1] + 0.5 * X[:, 2] + rng.normal(0, 0.3, len(X))
    return X, y


def fitted(X: np.ndarray, y: np.ndarray, ranking: str) -> pp.SGDRegressor:
    return pp.SGDRegressor(expansion=pp.Apple(ranking=ranking), bits=18, shuffle=False).fit(X, y)


@pytest.mark.parametrize(
    ("seed", "lognormal", "winner"), [(0, True, "max_magnitude"), (0, False, "typical")]
)
def test_auto_keeps_the_lower_progressive_loss_and_is_that_ranking_trained_alone(
    seed: int, lognormal: bool, winner: str
) -> None:
    X, y = heavy_tailed(seed, lognormal)
    auto = fitted(X, y, "auto")
    alone = {r: fitted(X, y, r) for r in ("typical", "max_magnitude")}
    assert auto.apple_ranking_ == winner
    assert auto.progressive_loss_ == min(m.progressive_loss_ for m in alone.values())
    # Bit for bit: forking before the first expansion is training the rival from the start.
    assert np.array_equal(auto.predict(X), alone[winner].predict(X))
    assert auto.monomials().equals(alone[winner].monomials())
    assert auto.expansion.ranking == "auto"  # the user's setting is not changed
    for model in alone.values():
        assert model.apple_ranking_ == model.expansion.ranking


def test_the_linear_model_kept_is_the_linear_learner(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A margin of -1 makes the linear model lead whatever the losses: its model must be the
    # linear learner's, bit for bit (a copy that stopped growing before its first expansion).
    monkeypatch.setattr(ranking_race, "LINEAR_MARGIN", -1.0)
    X, y = heavy_tailed(0, True)
    auto = pp.SGDRegressor(shuffle=False, expansion="apple", bits=18).fit(X, y)
    linear = pp.SGDRegressor(shuffle=False, bits=18).fit(X, y)
    assert auto.apple_ranking_ == "linear" and auto.n_parents_ == 0
    assert np.array_equal(auto.predict(X), linear.predict(X))
    assert auto.progressive_loss_ == linear.progressive_loss_
    auto.save(tmp_path / "linear.pp")
    loaded = pp.load_model(tmp_path / "linear.pp")
    assert loaded.expansion == "apple" and loaded.apple_ranking_ == "linear"
    assert np.array_equal(loaded.predict(X), auto.predict(X))
    # Refitting races again: with the real margin this set keeps a ranking.
    monkeypatch.undo()
    assert loaded.fit(X, y).apple_ranking_ == "max_magnitude"


def test_on_sector_the_race_keeps_the_linear_model() -> None:
    """sector (6.4k text rows, 163 words each): apple's expansions hurt (test error 3.5 times
    linear's over 10 splits); the default falls back to the linear model."""
    X, y, _ = load_dataset("sector", shared_file())
    train, test = slice(0, 5000), slice(5000, None)
    auto = pp.SGDRegressor(expansion="apple", bits=20).fit(X[train], y[train])
    typical = pp.SGDRegressor(expansion=pp.Apple(ranking="typical"), bits=20).fit(
        X[train], y[train]
    )
    linear = pp.SGDRegressor(bits=20).fit(X[train], y[train])
    assert auto.apple_ranking_ == "linear"
    assert typical.progressive_loss_ > 1.1 * linear.progressive_loss_
    assert np.array_equal(auto.predict(X[test]), linear.predict(X[test]))


def test_the_rival_forks_in_the_batch_that_reaches_the_first_expansion() -> None:
    X, y = heavy_tailed(0, True)
    estimator = pp.SGDRegressor(expansion="apple", bits=18)
    race = RankingRace(_internal.Learner(estimator._engine_options(["f"])))
    race.begin_run(len(X))  # six epochs: the first expansion after 666 examples
    assert race.apple_next_expansion() == (666, True)
    features = pp.SGDRegressor()._matrix_features(X, min_rows=1)
    for start in range(0, len(X), 500):
        rows = slice(start, start + 500)
        batch = [f.slice(start, 500) for f in features]
        race.learn(batch, pl.Series(y[rows]), None, start)
        assert (race.rival is None) == (start + 500 < 666)
        assert (race.linear is None) == (race.rival is None)
        assert race.first.progress[0] == start + 500  # the batch was learned whole
    assert race.winner()[1] == "max_magnitude"


class _FailingLearner:
    """A rival whose learning fails, as one whose parents would expand a row past the bound on
    terms while the first ranking's do not."""

    def __init__(self, model: _internal.Learner) -> None:
        self.model = model

    def learn(self, *args: object) -> tuple[float, float]:
        raise ValueError("row 3: 9000 features with 40 apple parents may expand to more than ...")

    def __getattr__(self, name: str) -> object:
        return getattr(self.model, name)


class _ForksAFailingRival:
    """An engine learner whose max_magnitude fork fails to learn."""

    def __init__(self, learner: _internal.Learner) -> None:
        self.learner = learner

    def fork(self, ranking: str, linear: bool = False) -> object:
        forked = self.learner.fork(ranking, linear)
        return _FailingLearner(forked) if ranking == "max_magnitude" else forked

    def __getattr__(self, name: str) -> object:
        return getattr(self.learner, name)


def race_beside_typical(wrap: type) -> tuple[RankingRace, _internal.Learner]:
    """A race whose first model is wrapped by ``wrap``, and a typical model alone, both fed
    heavy_tailed(0) in batches of 1000 rows."""
    X, y = heavy_tailed(0, True)
    options = pp.SGDRegressor(expansion="apple", bits=18)._engine_options(["f"])
    race = RankingRace(wrap(_internal.Learner(options)))
    alone = _internal.Learner(options)
    features = pp.SGDRegressor()._matrix_features(X, min_rows=1)
    for model in (race, alone):
        model.begin_run(len(X))
        for start in range(0, len(X), 1000):
            batch = [f.slice(start, 1000) for f in features]
            model.learn(batch, pl.Series(y[start : start + 1000]), None, start)
    return race, alone


def test_a_rival_that_fails_leaves_the_race() -> None:
    race, alone = race_beside_typical(_ForksAFailingRival)
    assert race.rival is None and race.linear is not None
    assert race.first.progress == alone.progress  # the first ranking learned every row
    assert race.winner()[1] in ("typical", "linear")


class _NoMemoryToFork:
    """An engine learner whose copies the machine cannot hold."""

    def __init__(self, learner: _internal.Learner) -> None:
        self.learner = learner

    def fork(self, ranking: str, linear: bool = False) -> object:
        raise MemoryError("a copy of the model needs 16.0 GiB, but only 3.1 GiB of memory ...")

    def __getattr__(self, name: str) -> object:
        return getattr(self.learner, name)


def test_without_memory_for_the_copies_the_first_ranking_trains_alone() -> None:
    with pytest.warns(ResourceWarning, match="ranks by 'typical' alone: a copy of the model"):
        race, alone = race_beside_typical(_NoMemoryToFork)
    assert race.rival is None and race.linear is None
    assert race.winner()[1] == "typical" and race.first.progress == alone.progress


def test_no_fork_while_every_column_is_left_to_field_crosses() -> None:
    """On hashed categorical fields apple takes no parents (field crosses judge them): both
    rankings would train the same model, so the race never pays for a second one."""
    frame = eat_rate(20_000, seed=1, varieties=100, noise_fields=2)
    frame = frame.select("label", *(pp.hash_features(f, bits=18).alias(f) for f in "ABCD"))
    estimator = pp.SGDClassifier(loss="logistic", bits=18, expansion="apple")
    race = RankingRace(_internal.Learner(estimator._engine_options(list("ABCD"))))
    race.begin_run(frame.height)
    for start in range(0, frame.height, 4096):
        chunk = frame.slice(start, 4096)
        race.learn([chunk[f] for f in "ABCD"], chunk["label"].cast(pl.Float64), None, start)
        assert race.rival is None
    assert race.apple_next_expansion() is None  # past the last expansion
    model = estimator.fit(frame, "label")
    assert model.apple_ranking_ == "typical" and model.n_crosses_ >= 1


def partial(X: np.ndarray, y: np.ndarray, ranking: str, chunk: int = 700) -> pp.SGDRegressor:
    model = pp.SGDRegressor(expansion=pp.Apple(ranking=ranking), bits=18)
    for start in range(0, len(X), chunk):
        model.partial_fit(X[start : start + chunk], y[start : start + chunk])
    return model


def test_partial_fit_races_from_call_to_call() -> None:
    X, y = heavy_tailed(0, True)
    auto = partial(X, y, "auto")
    alone = {r: partial(X, y, r) for r in ("typical", "max_magnitude")}
    kept = auto.apple_ranking_
    assert kept in alone
    assert auto.progressive_loss_ == min(m.progressive_loss_ for m in alone.values())
    assert np.array_equal(auto.predict(X), alone[kept].predict(X))
    # Pickling keeps the leader alone; it trains on with its ranking.
    loaded = pickle.loads(pickle.dumps(auto))
    assert loaded.apple_ranking_ == kept and loaded.expansion.ranking == "auto"
    assert np.array_equal(loaded.predict(X), auto.predict(X))
    loaded.partial_fit(X[:500], y[:500])
    alone[kept].partial_fit(X[:500], y[:500])
    assert np.array_equal(loaded.predict(X), alone[kept].predict(X))


def test_a_partial_fit_batch_cut_at_the_fork_is_refused_whole() -> None:
    X, y = heavy_tailed(0, True)
    model = pp.SGDRegressor(expansion="apple", bits=18)
    model.partial_fit(X[:600], y[:600])  # the doubling schedule's first expansion: 1000
    before = model._learner.progress
    weights = np.ones(1000)
    weights[-1] = -1.0  # past the expansion point, where the batch would be cut
    with pytest.raises(ValueError, match="row 1599: importance weight is -1"):
        model.partial_fit(X[600:1600], y[600:1600], sample_weight=weights)
    assert model._learner.progress == before
    assert model._learner.rival is None  # nothing forked either


def test_multiclass_and_lazy_fits_race_too() -> None:
    X, y = heavy_tailed(0, True)
    classes = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    auto = pp.SGDClassifier(expansion="apple", bits=18).fit(X, classes)
    alone = {
        r: pp.SGDClassifier(expansion=pp.Apple(ranking=r), bits=18).fit(X, classes)
        for r in ("typical", "max_magnitude")
    }
    assert auto.progressive_loss_ == min(m.progressive_loss_ for m in alone.values())
    winner = alone[auto.apple_ranking_]
    assert np.array_equal(auto.decision_function(X), winner.decision_function(X))
    frame = pl.DataFrame({f"x{k}": X[:, k] for k in range(X.shape[1])}).with_columns(y=y)
    # A LazyFrame streams in batches on the doubling schedule (its length is not counted).
    lazy = {
        r: pp.SGDRegressor(expansion=pp.Apple(ranking=r), bits=18, batch_size=700).fit(
            frame.lazy(), "y"
        )
        for r in ("auto", "typical", "max_magnitude")
    }
    assert lazy["auto"].progressive_loss_ == min(
        lazy[r].progressive_loss_ for r in ("typical", "max_magnitude")
    )
    winner = lazy[lazy["auto"].apple_ranking_]
    assert np.array_equal(lazy["auto"].predict(frame.drop("y")), winner.predict(frame.drop("y")))


def test_a_saved_race_keeps_auto_and_names_the_winner(tmp_path: Path) -> None:
    X, y = heavy_tailed(0, True)
    model = pp.SGDRegressor(shuffle=False, expansion="apple", bits=18).fit(X, y)
    assert model.apple_ranking_ == "max_magnitude"
    model.save(tmp_path / "race.pp")
    for loaded in (pickle.loads(pickle.dumps(model)), pp.load_model(tmp_path / "race.pp")):
        # The user's setting, not the winner's: refitting races again.
        assert loaded.expansion in ("apple", pp.Apple())
        assert loaded.apple_ranking_ == "max_magnitude"
        assert np.array_equal(loaded.predict(X), model.predict(X))
    typical = fitted(X, y, "typical")
    assert pickle.loads(pickle.dumps(typical)).expansion.ranking == "typical"


def test_an_unknown_ranking_names_the_choices() -> None:
    X, y = heavy_tailed(0, True)
    with pytest.raises(ValueError, match=r"ranking must be one of 'auto', .*'max_magnitude'"):
        fitted(X, y, "largest")


def test_a_race_learned_in_batches_is_decided_and_the_leader_trains_on_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After ``DECIDE_AFTER`` examples since the fork the race keeps its leader alone: the
    model is then that ranking's model trained alone, bit for bit, and the rivals are gone."""
    monkeypatch.setattr(ranking_race, "DECIDE_AFTER", 1000)
    X, y = heavy_tailed(0, True)
    race = pp.SGDRegressor(expansion="apple", bits=18, shuffle=False, batch_size=250)
    for start in range(0, len(X), 250):
        race.partial_fit(X[start : start + 250], y[start : start + 250])
        learner = race._learner
        assert isinstance(learner, RankingRace)
        forked = learner._forked_at
        if forked is not None and learner.first.progress[0] - forked >= 1000:
            assert learner.rival is None and learner.linear is None
    assert race._learner.rival is None  # the fork came early enough for a decision
    kept = race.apple_ranking_
    alone = pp.SGDRegressor(expansion=pp.Apple(ranking=kept), bits=18, shuffle=False)
    for start in range(0, len(X), 250):
        alone.partial_fit(X[start : start + 250], y[start : start + 250])
    assert np.array_equal(race.predict(X), alone.predict(X))
    assert race.progressive_loss_ == alone.progressive_loss_


@pytest.mark.parametrize("interaction", [False, True])
def test_a_decided_race_keeps_the_linear_model_unless_the_monomials_paid(
    monkeypatch: pytest.MonkeyPatch, interaction: bool
) -> None:
    """At the decision of a race learned in batches, the linear model (cheaper: no monomials)
    is kept unless the better ranking's loss since the fork is ``PAYS_MARGIN`` below its own:
    on a linear truth it is; on ``x0·x1`` the monomials pay and a ranking is kept."""
    monkeypatch.setattr(ranking_race, "DECIDE_AFTER", 1000)
    rng = np.random.default_rng(1)
    X = rng.normal(0, 1, (4000, 4))
    y = X @ np.array([1.0, -0.5, 0.25, 0.0]) + rng.normal(0, 0.3, len(X))
    if interaction:
        y += 2.0 * X[:, 0] * X[:, 1]
    race = pp.SGDRegressor(expansion="apple", bits=18, shuffle=False)
    for start in range(0, len(X), 250):
        race.partial_fit(X[start : start + 250], y[start : start + 250])
    learner = race._learner
    assert isinstance(learner, RankingRace) and learner.rival is None  # decided
    since = {
        name: ranking_race._loss_since(learner._loss_at_fork, model)
        for name, model in [("kept", learner.first)]
    }
    assert since["kept"] < float("inf")
    race._finish_fit()
    if interaction:
        assert race.apple_ranking_ in ("typical", "max_magnitude")
    else:
        assert race.apple_ranking_ == "linear"

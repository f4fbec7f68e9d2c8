"""Distributed training on Dask (issue 23), on a 2-worker LocalCluster of separate processes:
one shard equals the single machine, apple's parents are the union of the local ones, a worker
killed mid-round changes nothing, clear errors for bad shards, and the estimator classes."""

from __future__ import annotations

import logging
import os
import pickle
import signal
import threading
import time
from pathlib import Path

import numpy as np
import polars as pl
import polars_poly as pp
import pytest
from polars_poly.synthetic import eat_rate

from tests.conftest import logloss_on

distributed = pytest.importorskip("distributed")
ppd = pytest.importorskip("polars_poly.dask")

# Dask's own start-up and shutdown messages are not ours to turn into errors.
pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning", "ignore::DeprecationWarning")

N_FEATURES = 6


def make_frame(n: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, N_FEATURES))
    y = X[:, 0] * X[:, 1] + 0.5 * X[:, 2] + 0.1 * rng.standard_normal(n)
    return pl.DataFrame({f"x{i}": X[:, i] for i in range(N_FEATURES)} | {"y": y})


def write_shards(frame: pl.DataFrame, directory: Path, n_shards: int) -> list[str]:
    paths = []
    size = -(-len(frame) // n_shards)
    for k in range(n_shards):
        path = directory / f"part-{k:03d}.parquet"
        frame[k * size : (k + 1) * size].write_parquet(path)
        paths.append(str(path))
    return paths


def new_cluster() -> distributed.LocalCluster:
    return distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )


@pytest.fixture(scope="module")
def client():
    with new_cluster() as cluster, distributed.Client(cluster) as client:
        yield client


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    return make_frame(8_000)


@pytest.fixture(scope="module")
def shards(tmp_path_factory, frame) -> list[str]:
    return write_shards(frame, tmp_path_factory.mktemp("shards"), 4)


# Distributed training ranks apple's candidates by "typical" when the ranking is "auto" (the
# shards' models must share a ranking to be averaged): the single-machine references fix it.
APPLE = pp.Apple(field_crosses=None, ranking="typical")


@pytest.mark.parametrize("expansion", ["linear", "quadratic", APPLE], ids=str)
def test_one_shard_equals_the_single_machine_fit(client, shards, frame, expansion) -> None:
    shard = pl.read_parquet(shards[0])
    single = pp.SGDRegressor(shuffle=False, expansion=expansion).fit(shard, "y")
    distributed_fit = ppd.fit(
        pp.SGDRegressor(shuffle=False, expansion=expansion), [shards[0]], "y", client=client
    )
    np.testing.assert_array_equal(distributed_fit.predict(frame), single.predict(frame))
    assert distributed_fit.progressive_loss_ == single.progressive_loss_
    assert distributed_fit.n_examples_ == len(shard)


def test_apple_parents_are_the_union_of_the_local_ones_and_stay_frozen(client, shards) -> None:
    local = [
        pp.SGDRegressor(shuffle=False, expansion=APPLE).fit(pl.read_parquet(p), "y") for p in shards
    ]
    union = {tuple(f) for model in local for f, _, _ in model._learner.apple_parents()}
    for passes in (1, 3):
        model = ppd.fit(
            pp.SGDRegressor(shuffle=False, expansion=pp.Apple(field_crosses=None)),
            shards,
            "y",
            client=client,
            passes=passes,
            partitions=len(shards),
        )
        assert model.apple_ranking_ == "typical"
        found = [tuple(f) for f, _, _ in model._learner.apple_parents()]
        assert len(found) == len(set(found)) and set(found) == union
    assert len(union) > max(len(m._learner.apple_parents()) for m in local)


def test_passes_improve_and_rounds_are_recorded(client, shards, frame) -> None:
    model = ppd.fit(pp.SGDRegressor(expansion="quadratic"), shards, "y", client=client, passes=3)
    assert [r["pass"] for r in model.rounds_] == [1, 2, 3]
    assert all(r["examples"] == len(frame) for r in model.rounds_)
    assert model.n_examples_ == 3 * len(frame)
    assert model.pass_loss_[2] < model.pass_loss_[0]
    assert all(r["model_bytes"] > 0 and r["examples_per_second"] > 0 for r in model.rounds_)
    with pytest.raises(ValueError, match="fan_in"):
        ppd.fit(pp.SGDRegressor(), shards, "y", client=client, fan_in=1)
    assert model.passes == 1  # the estimator's own parameters are kept
    # One training task per worker by default (4 shards, 2 workers), else as asked.
    assert len(model.rounds_[0]["task_seconds"]) == 2
    for averaging in ("examples", "adaptive"):
        options = {"client": client, "partitions": 4, "averaging": averaging}
        per_shard = ppd.fit(pp.SGDRegressor(), shards, "y", **options)
        assert len(per_shard.rounds_[0]["task_seconds"]) == 4
        # Averaged as a tree of pairs: by examples the same model up to rounding; by the AdaGrad
        # sums nearly (a partial average keeps their mean, not their sum: src/model/average.rs).
        tree = ppd.fit(pp.SGDRegressor(), shards, "y", fan_in=2, **options)
        rtol, atol = (1e-5, 1e-6) if averaging == "examples" else (1e-2, 1e-3)
        np.testing.assert_allclose(
            tree.predict(frame), per_shard.predict(frame), rtol=rtol, atol=atol
        )
        assert len(tree.rounds_[0]["task_seconds"]) == 4
    with pytest.raises(ValueError, match="partitions"):
        ppd.fit(pp.SGDRegressor(), shards, "y", client=client, partitions=0)


def test_averaging_by_adagrad_sums_differs_and_both_learn(client, shards, frame) -> None:
    by_examples = ppd.fit(
        pp.SGDRegressor(), shards, "y", client=client, passes=2, averaging="examples"
    )
    by_adagrad = ppd.fit(
        pp.SGDRegressor(), shards, "y", client=client, passes=2, averaging="adaptive"
    )
    a, b = by_examples.predict(frame), by_adagrad.predict(frame)
    assert not np.array_equal(a, b)
    for model in (by_examples, by_adagrad):
        assert model.score(frame, "y") > 0.1
    # "auto", the default: by the AdaGrad sums with AdaGrad rates, by examples without.
    auto = ppd.fit(pp.SGDRegressor(), shards, "y", client=client, passes=2)
    np.testing.assert_array_equal(auto.predict(frame), b)
    plain = {"adaptive": False, "normalized": False}
    no_adagrad = ppd.fit(pp.SGDRegressor(**plain), shards, "y", client=client, passes=2)
    same = ppd.fit(
        pp.SGDRegressor(**plain), shards, "y", client=client, passes=2, averaging="examples"
    )
    np.testing.assert_array_equal(no_adagrad.predict(frame), same.predict(frame))


def test_the_distributed_model_saves_loads_and_pickles(client, shards, frame, tmp_path) -> None:
    model = ppd.fit(pp.SGDRegressor(expansion=APPLE), shards, "y", client=client, passes=2)
    path = tmp_path / "model.bin"
    model.save(path)
    loaded = pp.load_model(path)
    np.testing.assert_array_equal(loaded.predict(frame), model.predict(frame))
    np.testing.assert_array_equal(
        pickle.loads(pickle.dumps(model)).predict(frame), model.predict(frame)
    )


def test_the_estimator_classes_take_a_client_that_is_not_pickled(client, shards, tmp_path) -> None:
    frame = pl.concat([pl.read_parquet(p) for p in shards])
    labelled = frame.with_columns(label=(pl.col("y") > 0).cast(pl.Int8))
    paths = write_shards(labelled, tmp_path, 2)
    model = ppd.DaskSGDClassifier(client=client, passes=2).fit(paths, "label")
    assert model.classes_.tolist() == [0, 1]
    assert model.score(labelled, "label") > 0.6
    restored = pickle.loads(pickle.dumps(model))
    assert restored.client is None
    np.testing.assert_array_equal(restored.predict(labelled), model.predict(labelled))
    model.save(tmp_path / "c.bin")
    assert type(pp.load_model(tmp_path / "c.bin")) is pp.SGDClassifier
    assert model.get_params()["averaging"] == "auto"


def test_a_dask_dataframe_trains_like_its_parquet_shards(client, shards, frame) -> None:
    dd = pytest.importorskip("dask.dataframe")
    pandas_frames = [pl.read_parquet(p).to_pandas() for p in shards]
    ddf = dd.from_map(lambda k: pandas_frames[k], range(len(shards)))
    from_dask = ppd.fit(pp.SGDRegressor(), ddf, "y", client=client, passes=2)
    from_files = ppd.fit(pp.SGDRegressor(), shards, "y", client=client, passes=2)
    np.testing.assert_array_equal(from_dask.predict(frame), from_files.predict(frame))


def test_a_fit_before_any_worker_is_known_runs_anywhere(client, shards, frame, monkeypatch) -> None:
    """With no worker known (a cluster still starting), the fit is one task with no preferred
    worker: Dask refuses allow_other_workers without workers, which failed such a fit (seen
    when the workers were read from the client's view, refreshed in the background)."""
    expected = ppd.fit(pp.SGDRegressor(), shards, "y", client=client, partitions=1)
    monkeypatch.setattr(client, "nthreads", lambda *a, **k: {})
    model = ppd.fit(pp.SGDRegressor(), shards, "y", client=client)
    expected = expected.predict(frame)
    np.testing.assert_array_equal(model.predict(frame), expected)


def test_libsvm_shards(client, tmp_path, frame) -> None:
    from sklearn.datasets import dump_svmlight_file

    X = frame.drop("y").to_numpy()
    paths = []
    for k in range(2):
        path = tmp_path / f"part{k}.svm"
        dump_svmlight_file(X[k::2], frame["y"].to_numpy()[k::2], str(path), zero_based=True)
        paths.append(path)
    model = ppd.fit(
        pp.SGDRegressor(), paths, "label", client=client, reader_options={"zero_based": True}
    )
    assert model.n_examples_ == len(frame)


def test_bad_shards_are_named(client, shards, tmp_path) -> None:
    with pytest.raises(pl.exceptions.ColumnNotFoundError, match=r"shard .*part-000.*lable"):
        ppd.fit(pp.SGDRegressor(), shards, "lable", client=client)
    other = tmp_path / "other.parquet"
    pl.read_parquet(shards[0]).with_columns(pl.col("x1").cast(pl.Float32)).write_parquet(other)
    with pytest.raises(ValueError, match=r"other\.parquet does not have the schema.*\['x1'\]"):
        ppd.fit(pp.SGDRegressor(), [shards[0], other], "y", client=client)
    empty = tmp_path / "empty.parquet"
    pl.read_parquet(shards[0]).head(0).write_parquet(empty)
    # An empty shard holds nothing to learn: skipped, with a warning naming it.
    with pytest.warns(UserWarning, match=r"1 empty shard\(s\) skipped.*empty\.parquet"):
        skipped = ppd.fit(pp.SGDRegressor(), [shards[0], empty], "y", client=client)
    alone = ppd.fit(pp.SGDRegressor(), [shards[0]], "y", client=client)
    test = pl.read_parquet(shards[1]).drop("y")
    np.testing.assert_array_equal(skipped.predict(test), alone.predict(test))
    with pytest.raises(ValueError, match=r"every shard is empty.*empty\.parquet"):
        ppd.fit(pp.SGDRegressor(), [empty], "y", client=client)
    bad = tmp_path / "bad.parquet"
    pl.read_parquet(shards[0]).with_columns(
        x0=pl.when(pl.int_range(pl.len()) == 7).then(float("nan")).otherwise(pl.col("x0"))
    ).write_parquet(bad)
    with pytest.raises(ValueError, match="non-finite") as info:
        ppd.fit(pp.SGDRegressor(), [shards[0], bad], "y", client=client)
    assert any("bad.parquet" in note for note in getattr(info.value, "__notes__", []))
    with pytest.raises(ValueError, match="averaging"):
        ppd.fit(pp.SGDRegressor(), shards, "y", client=client, averaging="median")
    with pytest.raises(TypeError, match="PassiveAggressiveClassifier, got Ridge"):
        from sklearn.linear_model import Ridge

        ppd.fit(Ridge(), shards, "y", client=client)


def test_a_version_mismatch_on_a_worker_is_named() -> None:
    class FakeClient:
        def run(self, function, on_error="raise"):
            return {"tcp://a:1": pp.__version__, "tcp://b:2": "0.0.1"}

    with pytest.raises(RuntimeError, match=r"tcp://b:2.*0\.0\.1"):
        ppd._check_versions(FakeClient())


class _PassDone(logging.Handler):
    """Sets ``event`` when the driver logs the end of the first pass."""

    def __init__(self) -> None:
        super().__init__()
        self.event = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("pass 1/"):
            self.event.set()


def test_a_worker_killed_mid_round_changes_nothing(tmp_path) -> None:
    frame = make_frame(120_000, seed=1)
    paths = write_shards(frame, tmp_path, 6)
    estimator = pp.SGDRegressor(expansion="cubic", passes=3)
    with new_cluster() as cluster, distributed.Client(cluster) as client:
        clean = ppd.fit(estimator, paths, "y", client=client)
    handler = _PassDone()
    ppd.LOG.addHandler(handler)
    level = ppd.LOG.level
    ppd.LOG.setLevel(logging.INFO)
    try:
        with new_cluster() as cluster, distributed.Client(cluster) as client:
            pids = client.run(os.getpid)
            result: dict[str, object] = {}

            def train() -> None:
                try:
                    result["model"] = ppd.fit(estimator, paths, "y", client=client)
                except BaseException as err:  # reported below
                    result["error"] = err

            thread = threading.Thread(target=train)
            thread.start()
            assert handler.event.wait(60), "the first pass did not end"
            killed = None
            deadline = time.monotonic() + 60
            while killed is None and time.monotonic() < deadline and thread.is_alive():
                # A training task of the second round running: kill its worker's process.
                for address, keys in client.processing().items():
                    if any("_train" in str(key) for key in keys):
                        os.kill(pids[address], signal.SIGKILL)
                        killed = address
                        break
                time.sleep(0.002)
            thread.join(120)
            assert killed is not None, "no training task was caught running"
            assert "error" not in result, result.get("error")
            assert killed not in client.scheduler_info()["workers"]
    finally:
        ppd.LOG.removeHandler(handler)
        ppd.LOG.setLevel(level)
    model = result["model"]
    np.testing.assert_array_equal(model.predict(frame), clean.predict(frame))
    assert model.pass_loss_ == clean.pass_loss_


def test_shards_of_files_directories_and_urls(tmp_path) -> None:
    for name in ("b.parquet", "a.svm.gz", "c.vw", "notes.txt"):
        (tmp_path / name).write_bytes(b"")
    found = [(s.name.rsplit("/", 1)[-1], s.format) for s, _ in ppd.shards_of(tmp_path)]
    assert found == [("a.svm.gz", "libsvm"), ("b.parquet", "parquet"), ("c.vw", "vw")]
    [(url, _)] = ppd.shards_of(["s3://bucket/part-0.parquet"])
    assert url.name == "s3://bucket/part-0.parquet" and url.format == "parquet"
    with pytest.raises(ValueError, match="cannot tell the format of 'x.csv'"):
        ppd.shards_of(["x.csv"])
    with pytest.raises(TypeError, match="Dask DataFrame"):
        ppd.shards_of(42)


def test_ctrl_c_stops_a_distributed_fit_and_its_tasks(client, tmp_path) -> None:
    # 40 columns, cubic: about 12k products a row, so one pass of a task over its 60k rows runs
    # for many seconds; in batches of 64 rows a cancelled task stops within one batch.
    rng = np.random.default_rng(3)
    wide = pl.DataFrame({f"x{i}": rng.standard_normal(120_000) for i in range(40)})
    paths = write_shards(wide.with_columns(y=pl.col("x0") * pl.col("x1")), tmp_path, 2)
    estimator = pp.SGDRegressor(expansion="cubic", passes=50, batch_size=64)
    running: list[str] = []

    def ctrl_c() -> None:
        running.extend(str(k) for keys in client.processing().values() for k in keys)
        os.kill(os.getpid(), signal.SIGINT)

    # A process started in the background by a non-interactive shell inherits SIGINT ignored,
    # and Python then installs no KeyboardInterrupt handler: install it for this test.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(1.5, ctrl_c)
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            ppd.fit(estimator, paths, "y", client=client)
        interrupted = time.monotonic()
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    # Returned within 1 s of Ctrl-C; the scheduler forgot the round's tasks, and the workers
    # stopped running them (a cancelled task runs on to its end unless it stops itself: here a
    # pass of many seconds).
    assert interrupted - started < 1.5 + 1.0
    assert any("_train" in key for key in running), running
    assert not any(client.processing().values())

    def running_tasks(dask_worker: distributed.Worker) -> int:
        return len(dask_worker.state.all_running_tasks)

    deadline = time.monotonic() + 2
    while any(client.run(running_tasks).values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(client.run(running_tasks).values())


def blob_frame(n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    classes = np.array(["ant", "bee", "cat"])[np.arange(n) % 3]
    X = rng.standard_normal((n, 6)) * 0.7
    X[np.arange(n), np.arange(n) % 3] += 2.0
    return pl.DataFrame({f"x{i}": X[:, i] for i in range(6)} | {"label": classes})


@pytest.mark.parametrize("make", [pp.PassiveAggressiveClassifier, pp.DoSClassifier])
def test_passive_aggressive_family_on_dask(client, tmp_path, make) -> None:
    frame = blob_frame(6_000, seed=0)
    paths = write_shards(frame, tmp_path, 4)
    estimator = make(averaging=100, batch_size=500)
    # One shard, one task: the single machine's model learned in the shard's order, as the
    # workers learn it (DoS: up to the rounding of the minimum-norm boost the average applies,
    # which leaves the scores unchanged).
    shard = pl.read_parquet(paths[0])
    single = make(averaging=100, batch_size=500, shuffle=False).fit(shard, "label")
    one = ppd.fit(estimator, [paths[0]], "label", client=client)
    X = frame.drop("label")
    np.testing.assert_allclose(
        one.decision_function(X), single.decision_function(X), rtol=1e-4, atol=1e-4
    )
    # Four shards, aligned averages over two tasks, two passes: a working classifier.
    model = ppd.fit(estimator, paths, "label", client=client, passes=2)
    assert model.classes_.tolist() == ["ant", "bee", "cat"]
    assert model.score(frame.drop("label"), frame["label"].to_numpy()) > 0.9
    assert [r["examples"] for r in model.rounds_] == [6_000, 6_000]
    assert 0 <= model.rounds_[-1]["progressive_loss"] < 0.2
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(
        restored.predict(frame.drop("label")), model.predict(frame.drop("label"))
    )
    assert estimator.__dict__.get("core_") is None  # the caller's estimator is not fitted


def test_passive_aggressive_family_refusals(client, tmp_path) -> None:
    frame = pl.DataFrame({"features": pp.from_numpy(np.eye(4)), "label": [0, 1, 0, 1]})
    path = tmp_path / "sparse.parquet"
    frame.write_parquet(path)
    with pytest.raises(ValueError, match="needs n_features"):
        ppd.fit(pp.DoSClassifier(), [path], "label", client=client)
    with pytest.raises(ValueError, match="averaging='examples'"):
        ppd.fit(pp.DoSClassifier(), [path], "label", client=client, averaging="adaptive")
    model = ppd.fit(pp.DoSClassifier(n_features=4, rank=1), [path], "label", client=client)
    assert model.n_features_in_ == 4


def test_classes_are_the_labels_of_every_shard(client, tmp_path) -> None:
    frame = pl.DataFrame({"features": pp.from_numpy(np.eye(6)), "label": ["a", "b", "c"] * 2})
    path = tmp_path / "three.parquet"
    frame.write_parquet(path)
    model = ppd.fit(pp.SGDClassifier(), [path], "label", client=client)
    assert model.classes_.tolist() == ["a", "b", "c"]
    assert model.predict_proba(frame).shape == (6, 3)
    binary = frame.with_columns(label=pl.Series(["a", "b"] * 3))
    binary.write_parquet(path)
    model = ppd.fit(pp.SGDClassifier(), [path], "label", client=client)
    assert model.classes_.tolist() == ["a", "b"]


def test_vowpal_wabbit_shards_train_like_the_single_machine(client, tmp_path) -> None:
    rng = np.random.default_rng(5)
    paths = []
    for k in range(2):
        lines = []
        for _ in range(400):
            a, f = rng.integers(0, 5), rng.integers(0, 5)
            label = 1 if (a + f) % 2 else -1
            lines.append(f"{label} {1 + (a == 0)} |Animal a{a} |Food f{f}")
        path = tmp_path / f"part{k}.vw"
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    estimator = pp.SGDClassifier(shuffle=False, interactions=[("A", "F")], features=["A", "F"])
    options = {"namespaces": "AF"}
    model = ppd.fit(
        estimator,
        [paths[0]],
        "label",
        sample_weight="weight",
        client=client,
        reader_options=options,
    )
    frame = pp.read_vw(paths[0], namespaces="AF")
    single = estimator.fit(frame, "label", "weight")
    assert single.field_scales_.height > 0  # 'auto': on with two columns, here as on Dask
    assert model.progressive_loss_ == single.progressive_loss_
    both = ppd.fit(
        estimator, paths, "label", sample_weight="weight", client=client, reader_options=options
    )
    assert both.n_examples_ == 800


@pytest.fixture(scope="module")
def eat_rate_shards(tmp_path_factory) -> tuple[list[str], pl.DataFrame]:
    """eat-rate in small, each field hashed into its own column: 4 shards of 40k rows, and 20k
    rows to test."""
    from polars_poly.synthetic import eat_rate

    frame = eat_rate(180_000, seed=1, varieties=100, noise_fields=4)
    fields = [c for c in frame.columns if c != "label"]
    data = frame.select("label", *(pp.hash_features(f, bits=20).alias(f) for f in fields))
    directory = tmp_path_factory.mktemp("eat_rate")
    return write_shards(data.head(160_000), directory, 4), data.tail(20_000)


def test_shards_of_one_class_each_train_with_every_shards_classes(client, tmp_path) -> None:
    """Sorted data: each shard holds one class only. The tasks learn with the classes of all
    the shards (before, each shard found its own, and a shard of one class failed)."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((4_000, 3))
    yes = X[:, 0] > np.median(X[:, 0])  # 2,000 of each class: a shard each, once sorted
    frame = pl.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": np.where(yes, "yes", "no")})
    shards = write_shards(frame.sort("y"), tmp_path, 2)
    assert [pl.read_parquet(p)["y"].n_unique() for p in shards] == [1, 1]
    model = ppd.fit(pp.SGDClassifier(), shards, "y", client=client, partitions=2, passes=3)
    assert model.classes_.tolist() == ["no", "yes"]
    # Measured 0.86 (each shard sees one side of the boundary only; chance is 0.5).
    assert (model.predict(frame.drop("y")) == frame["y"].to_numpy()).mean() > 0.75


def _hash_fields(frame: pl.LazyFrame) -> pl.LazyFrame:
    """eat-rate's raw string fields hashed into sparse columns (what a task's prepare runs)."""
    fields = [c for c in frame.collect_schema().names() if c != "label"]
    return frame.with_columns(pp.hash_features(f, bits=20).alias(f) for f in fields)


def test_prepare_hashes_raw_shards_on_the_workers(client, tmp_path) -> None:
    """Raw string shards train through ``prepare`` (each task hashes its own shard) exactly as
    shards hashed beforehand do."""
    from polars_poly.synthetic import eat_rate

    frame = eat_rate(24_000, seed=4, varieties=20, noise_fields=2)
    (tmp_path / "raw").mkdir()
    (tmp_path / "hashed").mkdir()
    raw = write_shards(frame, tmp_path / "raw", 3)
    hashed = write_shards(_hash_fields(frame.lazy()).collect(), tmp_path / "hashed", 3)
    options = {"client": client, "passes": 2, "partitions": 3}
    estimator = pp.SGDClassifier(loss="logistic", bits=20, interactions=[("A", "B")])
    prepared = ppd.fit(estimator, raw, "label", prepare=_hash_fields, **options)
    given = ppd.fit(estimator, hashed, "label", **options)
    test = _hash_fields(frame.tail(2_000).lazy()).collect()
    np.testing.assert_array_equal(prepared.predict_proba(test), given.predict_proba(test))
    # Without prepare the raw shards train the same: each task's model hashes the string columns
    # as it reads them, with its bits (20, as the hashed shards').
    direct = ppd.fit(estimator, raw, "label", **options)
    raw_test = frame.tail(2_000).drop("label")
    np.testing.assert_array_equal(direct.predict_proba(raw_test), given.predict_proba(test))
    # A filter in prepare: the rows counted are the prepared ones.
    fewer = ppd.fit(
        estimator, raw, "label", prepare=lambda f: _hash_fields(f.head(1_000)), client=client
    )
    assert fewer.n_examples_ == 3_000
    # The estimator class takes it as a parameter (dropped when pickled, as the client).
    dask_estimator = ppd.DaskSGDClassifier(
        loss="logistic", bits=20, interactions=[("A", "B")], passes=2, client=client
    )
    dask_estimator.set_params(prepare=_hash_fields).fit(raw, "label")
    per_worker = ppd.fit(estimator, hashed, "label", client=client, passes=2)  # its partitions
    np.testing.assert_array_equal(
        dask_estimator.predict_proba(test), per_worker.predict_proba(test)
    )
    assert pickle.loads(pickle.dumps(dask_estimator)).prepare is None
    # scikit-learn's clone shares the client and prepare (a client cannot be deep-copied).
    from sklearn.base import clone

    twin = clone(dask_estimator)
    assert twin.client is client and twin.prepare is _hash_fields
    assert not hasattr(twin, "classes_")
    np.testing.assert_array_equal(
        twin.fit(raw, "label").predict_proba(test), dask_estimator.predict_proba(test)
    )
    with pytest.raises(TypeError, match="prepare must return a polars LazyFrame, got DataFrame"):
        ppd.fit(estimator, raw, "label", prepare=lambda f: f.collect(), client=client)
    with pytest.raises(TypeError, match="prepare must be a function"):
        ppd.fit(estimator, raw, "label", prepare="hash", client=client)


def test_numeric_columns_beside_strings_train_on_dask_as_on_one_machine(client, tmp_path) -> None:
    """Shards of string fields and numbers: each task makes the numbers one namespace, as a
    single-machine fit does."""
    from polars_poly.synthetic import eat_rate

    frame = eat_rate(6_000, seed=6, varieties=20, noise_fields=1).with_columns(
        pl.Series("count", np.arange(6_000) % 7, dtype=pl.Int64)
    )
    shard = write_shards(frame, tmp_path, 1)
    estimator = pp.SGDClassifier(
        shuffle=False, loss="logistic", bits=18, interactions=[("A", "features")]
    )
    distributed_fit = ppd.fit(estimator, shard, "label", client=client)
    single = pp.SGDClassifier(
        shuffle=False, loss="logistic", bits=18, interactions=[("A", "features")]
    )
    single.fit(frame, "label")
    assert distributed_fit.namespaces_ == ["A", "B", "C", "features"]
    test = frame.tail(500).drop("label")
    np.testing.assert_array_equal(distributed_fit.predict_proba(test), single.predict_proba(test))


def test_multiclass_averages_each_class_learner(client, tmp_path) -> None:
    """One against all on Dask: each class's learner is averaged over the shards (a shard
    without some class still learns that class's learner, from its negatives), and the
    progressive error counts add up."""
    rng = np.random.default_rng(6)
    X = rng.standard_normal((8_000, 4))
    label = np.argmax(X[:, :3] + 0.3 * rng.standard_normal((8_000, 3)), axis=1)
    frame = pl.DataFrame({f"x{i}": X[:, i] for i in range(4)} | {"y": label.astype(str)})
    train, test = frame.head(6_000), frame.tail(2_000)
    # Shard 0 holds no class "2".
    first = train.head(2_000).filter(pl.col("y") != "2")
    shards = write_shards(train.tail(4_000), tmp_path, 2)
    shards.insert(0, str(tmp_path / "first.parquet"))
    first.write_parquet(shards[0])
    alone = pp.SGDClassifier(shuffle=False).fit(first, "y")
    one = ppd.fit(pp.SGDClassifier(shuffle=False), shards[:1], "y", client=client)
    assert alone.classes_.tolist() == one.classes_.tolist() == ["0", "1"]
    np.testing.assert_array_equal(one.predict_proba(test), alone.predict_proba(test))
    model = ppd.fit(
        pp.SGDClassifier(shuffle=False), shards, "y", client=client, passes=2, partitions=3
    )
    assert model.classes_.tolist() == ["0", "1", "2"]
    assert model.n_examples_ == 2 * (len(first) + 4_000)
    assert 0.0 < model.progressive_error_ < 0.5
    single = pp.SGDClassifier(shuffle=False, passes=2).fit(
        pl.concat([first, train.tail(4_000)]), "y"
    )
    accuracy = (model.predict(test.drop("y")) == test["y"].to_numpy()).mean()
    best = (single.predict(test.drop("y")) == test["y"].to_numpy()).mean()
    assert accuracy > best - 0.05, (accuracy, best)
    # As a tree of pairs (3 tasks, fan_in 2): by examples the same model up to rounding.
    options = {"client": client, "partitions": 3, "averaging": "examples"}
    tree = ppd.fit(pp.SGDClassifier(shuffle=False), shards, "y", fan_in=2, **options)
    flat = ppd.fit(pp.SGDClassifier(shuffle=False), shards, "y", **options)
    np.testing.assert_allclose(tree.predict_proba(test), flat.predict_proba(test), atol=1e-5)
    assert tree.progressive_error_ == pytest.approx(flat.progressive_error_)


def test_a_shard_of_zero_weights_learns_nothing_and_has_no_say(client, tmp_path, frame) -> None:
    """A shard whose importance weights are all 0 is data that counts for nothing: its task
    learns nothing (it failed the whole fit before), and the average weighs it by that."""
    weighted = frame.with_columns(w=pl.lit(1.0))
    zero = weighted.with_columns(w=pl.lit(0.0))
    shards = write_shards(weighted, tmp_path, 2)
    shards.append(str(tmp_path / "zero.parquet"))
    zero.head(500).write_parquet(shards[-1])
    options = {"client": client, "sample_weight": "w", "partitions": 3, "averaging": "examples"}
    estimator = pp.SGDRegressor(features=[c for c in frame.columns if c != "y"])
    with_zero = ppd.fit(estimator, shards, "y", **options)
    without = ppd.fit(estimator, shards[:2], "y", **options)
    assert with_zero.n_examples_ == len(frame) + 500
    test = frame.drop("y")
    np.testing.assert_allclose(with_zero.predict(test), without.predict(test), rtol=1e-6)
    with pytest.raises(ValueError, match="no shard learned an example"):
        ppd.fit(estimator, shards[-1:], "y", **options)


def test_field_scales_train_on_dask_as_on_one_machine(client, eat_rate_shards) -> None:
    """A scale per field (the default for several columns) is averaged field by field: one
    shard is the single machine's model, and over four shards the scales keep what they give
    one machine on eat-rate (the cross's large steps, the noise fields' small ones)."""
    shards, test = eat_rate_shards
    options = {"loss": "logistic", "bits": 20, "interactions": [("A", "B")]}
    local = pp.SGDClassifier(shuffle=False, **options).fit(pl.read_parquet(shards[0]), "label")
    one = ppd.fit(pp.SGDClassifier(shuffle=False, **options), [shards[0]], "label", client=client)
    np.testing.assert_array_equal(one.predict_proba(test), local.predict_proba(test))
    assert one.field_scales_.equals(local.field_scales_)
    scaled = ppd.fit(pp.SGDClassifier(shuffle=False, **options), shards, "label", client=client)
    plain = ppd.fit(
        pp.SGDClassifier(shuffle=False, **options, field_scales=False),
        shards,
        "label",
        client=client,
    )
    assert scaled.field_scales_.height > 0
    with pytest.raises(AttributeError):
        plain.field_scales_  # noqa: B018
    # Measured: 0.03 against 0.5 (docs/distributed.md); the shard alone 0.05.
    assert logloss_on(scaled, test) < 0.5 * logloss_on(local, test)
    assert logloss_on(scaled, test) < 0.2 * logloss_on(plain, test)


def test_field_crosses_are_the_union_of_the_local_ones_and_stay_frozen(
    client, eat_rate_shards
) -> None:
    """The default apple on hashed fields (field crosses beside apple's monomials): each shard
    screens its own rows, the merged model has the union of the crosses they found, and later
    passes screen no more."""
    shards, test = eat_rate_shards
    options = {"loss": "logistic", "bits": 20, "field_scales": False}
    local = [
        pp.SGDClassifier(shuffle=False, **options, expansion=pp.Apple(ranking="typical")).fit(
            pl.read_parquet(p), "label"
        )
        for p in shards
    ]
    union = {c for model in local for c in model.crosses()["cross"]}
    assert "A*B" in union
    one = ppd.fit(
        pp.SGDClassifier(shuffle=False, **options, expansion="apple"),
        [shards[0]],
        "label",
        client=client,
    )
    np.testing.assert_array_equal(one.predict_proba(test), local[0].predict_proba(test))
    for passes in (1, 2):
        model = ppd.fit(
            pp.SGDClassifier(shuffle=False, **options, expansion="apple"),
            shards,
            "label",
            client=client,
            passes=passes,
            partitions=len(shards),
        )
        assert set(model.crosses()["cross"]) == union
        assert model.crosses().height == len(union)
        assert model.apple_ranking_ == "typical"
    # Two passes over 4 shards of 40k rows predict better than each shard's own model (test
    # logloss 0.43 against 0.52; one machine over the 160k rows: 0.34; linear: 0.72), and a
    # pickled copy predicts the same.
    linear = pp.SGDClassifier(shuffle=False, **options).fit(pl.read_parquet(shards[0]), "label")
    assert logloss_on(model, test) < min(logloss_on(m, test) for m in local)
    assert logloss_on(model, test) < logloss_on(linear, test) - 0.1
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict_proba(test), model.predict_proba(test))


def test_integer_codes_declared_categorical_train_as_categories_on_dask(client, tmp_path) -> None:
    # Each task reads its shard and casts the declared columns as a fit in memory does: one
    # shard, one task, the single machine's model; the merged model scores as it was trained.
    raw = eat_rate(8_000, seed=4, varieties=20, noise_fields=1)
    codes = raw.with_columns(pl.col("A", "B").cast(pl.Categorical).to_physical().cast(pl.Int64))
    paths = write_shards(codes, tmp_path, 2)
    params = {"loss": "logistic", "bits": 18, "interactions": [("A", "B")]}
    estimator = pp.SGDClassifier(shuffle=False, **params, categorical=["A", "B"])
    one = ppd.fit(estimator, [paths[0]], "label", client=client)
    single = pp.SGDClassifier(shuffle=False, **params, categorical=["A", "B"]).fit(
        pl.read_parquet(paths[0]), "label"
    )
    X = codes.drop("label")
    np.testing.assert_array_equal(one.predict_proba(X), single.predict_proba(X))
    merged = ppd.fit(estimator, paths, "label", client=client)
    assert merged.namespaces_ == ["A", "B", "C"]
    streamed = X.lazy().select(merged.predict_proba_expr()).collect(engine="streaming")
    np.testing.assert_array_equal(streamed.to_series().to_numpy(), merged.predict_proba(X)[:, 1])


def test_a_factorization_trains_on_dask_averaged_by_examples(client, eat_rate_shards) -> None:
    """The factorization's tables are averaged as the shards' examples weigh: one shard is the
    single machine's model, and four shards learn what the shard alone cannot (each value's
    vectors from every shard's pairs)."""
    shards, test = eat_rate_shards
    options = {"loss": "logistic", "bits": 20, "ffm": pp.FFM(k=4, bits=14, fields=["A", "B"])}
    local = pp.SGDClassifier(shuffle=False, **options).fit(pl.read_parquet(shards[0]), "label")
    one = ppd.fit(pp.SGDClassifier(shuffle=False, **options), [shards[0]], "label", client=client)
    np.testing.assert_array_equal(one.predict_proba(test), local.predict_proba(test))
    assert one.get_params()["ffm"].get_params() == options["ffm"].get_params()
    four = ppd.fit(pp.SGDClassifier(shuffle=False, **options), shards, "label", client=client)
    assert logloss_on(four, test) < logloss_on(local, test)


def test_a_factorization_over_apples_crosses_trains_on_dask(client, eat_rate_shards) -> None:
    """apple with a factorization of the pairs it crosses: one shard is the single machine's
    model; the shards' crosses are merged, and the factorization has a term for their pairs."""
    shards, test = eat_rate_shards
    options = {"loss": "logistic", "bits": 20, "expansion": "apple", "ffm": pp.FFM(k=4, bits=14)}
    local = pp.SGDClassifier(shuffle=False, **options).fit(pl.read_parquet(shards[0]), "label")
    one = ppd.fit(pp.SGDClassifier(shuffle=False, **options), [shards[0]], "label", client=client)
    np.testing.assert_array_equal(one.predict_proba(test), local.predict_proba(test))
    assert local.crosses()["cross"].to_list() == ["A*B"]
    four = ppd.fit(pp.SGDClassifier(shuffle=False, **options), shards, "label", client=client)
    assert four.crosses()["cross"].to_list() == ["A*B"]
    assert four.ffm_pairs(test.drop("label"))["pair"].to_list() == ["A*B"]
    assert four.get_params()["ffm"].get_params() == options["ffm"].get_params()

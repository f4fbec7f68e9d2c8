"""LIBSVM and Vowpal Wabbit readers, checked against scikit-learn's load_svmlight_file."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import mmh3
import numpy as np
import polars as pl
import polars_poly as pp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars_poly import _internal
from sklearn.datasets import load_svmlight_file

from tests.conftest import shared_file

LIBSVM_FILES = [
    ("a9a", "a9a.gz"),
    ("a9a", "a9a.t.gz"),
    ("w8a", "w8a.gz"),
    ("mushrooms", "mushrooms"),
    ("phishing", "phishing.gz"),
    ("splice", "splice.gz"),
    ("svmguide1", "svmguide1"),
    ("german.numer", "german.numer_scale"),
    ("abalone", "abalone_scale"),
    ("sector", "sector.scale.gz"),
    ("sector", "sector.t.scale.gz"),
]


@pytest.mark.parametrize("folder,name", LIBSVM_FILES)
def test_read_libsvm_equals_sklearn_on_shared_data(folder: str, name: str) -> None:
    path = shared_file(folder, name)
    X_ref, y_ref = load_svmlight_file(str(path))
    frame = pp.read_libsvm(path)
    assert frame.columns == ["label", "features"]
    np.testing.assert_array_equal(frame["label"].to_numpy(), y_ref)
    X = pp.to_scipy(frame["features"], X_ref.shape[1])
    X_ref.eliminate_zeros()
    X_ref.sum_duplicates()
    assert (X != X_ref).nnz == 0
    np.testing.assert_array_equal(X.indptr, X_ref.indptr)


# Rows and columns of shared files, as their publishers state them (formerly a Rust test that
# passed silently without the data; here a missing file is a visible skip).
KNOWN_SIZES = [
    ("a9a", "a9a.gz", 32_561, 123),
    ("a9a", "a9a.t.gz", 16_281, 123),
    ("w8a", "w8a.gz", 49_749, 300),
    ("mushrooms", "mushrooms", 8_124, 112),
    ("sector", "sector.scale.gz", 6_412, 55_197),
]


@pytest.mark.parametrize("folder,name,n_rows,n_features", KNOWN_SIZES)
def test_shared_files_have_their_known_sizes(
    folder: str, name: str, n_rows: int, n_features: int
) -> None:
    path = shared_file(folder, name)
    frame = pp.read_libsvm(path)
    assert frame.height == n_rows
    # The width the file declares by its largest index (a test file may not use the last one).
    assert pp.n_features(frame["features"]) <= n_features
    batches = _internal.Batches("libsvm", str(path), {}, 5_000)
    assert sum(batch.height for batch in batches) == n_rows
    assert dict(batches.summary) == {"n_features": n_features}


def write(tmp_path: Path, text: str, name: str = "data.txt", compress: bool = False) -> Path:
    path = tmp_path / name
    data = text.encode()
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


@pytest.mark.parametrize("compress", [False, True])
def test_libsvm_format_details_match_sklearn(tmp_path: Path, compress: bool) -> None:
    text = "# header comment\n+1 qid:3 1:2 3:1.5\t7:0 # trailing\n\n-1 qid:1 2:-4e-1\r\n0.5 qid:2\n"
    path = write(tmp_path, text, name="data.txt.gz" if compress else "data.txt", compress=compress)
    X_ref, y_ref, qid_ref = load_svmlight_file(str(path), query_id=True)
    frame = pp.read_libsvm(path)
    assert frame.columns == ["label", "qid", "features"]
    np.testing.assert_array_equal(frame["label"].to_numpy(), y_ref)
    np.testing.assert_array_equal(frame["qid"].to_numpy(), qid_ref)
    X = pp.to_scipy(frame["features"], X_ref.shape[1])
    np.testing.assert_array_equal(X.toarray(), X_ref.toarray())
    assert frame["features"].to_list()[0] == [
        {"index": 0, "value": 2.0},
        {"index": 2, "value": 1.5},
    ]


@pytest.mark.parametrize("zero_based", [True, False, "auto"])
def test_zero_based_modes_match_sklearn(tmp_path: Path, zero_based: bool | str) -> None:
    path = write(tmp_path, "1 1:1 3:2\n0 2:5\n")
    X_ref, _ = load_svmlight_file(str(path), zero_based=zero_based)  # type: ignore[arg-type]
    frame = pp.read_libsvm(path, zero_based=zero_based)  # type: ignore[arg-type]
    np.testing.assert_array_equal(pp.to_numpy(frame["features"], X_ref.shape[1]), X_ref.toarray())


def test_auto_zero_based_sees_index_zero(tmp_path: Path) -> None:
    path = write(tmp_path, "1 1:1\n0 0:5\n")
    assert pp.read_libsvm(path)["features"].to_list() == [
        [{"index": 1, "value": 1.0}],
        [{"index": 0, "value": 5.0}],
    ]


def test_duplicates_are_summed(tmp_path: Path) -> None:
    path = write(tmp_path, "1 2:1 2:3 1:1\n")
    assert pp.read_libsvm(path, zero_based=True)["features"].to_list() == [
        [{"index": 1, "value": 1.0}, {"index": 2, "value": 4.0}]
    ]


@pytest.mark.parametrize(
    "line,reason",
    [
        ("1 3", "3"),
        ("abc 1:2", "abc"),
        ("1 x:2", "x:2"),
        ("1 2:nan", "non-finite"),
        ("1 2:inf", "non-finite"),
        ("1 -2:1", "-2:1"),
        ("1,2 1:1", "multilabel"),
        ("1 99999999999:1", "99999999999"),
    ],
)
def test_malformed_line_names_line_number_and_text(tmp_path: Path, line: str, reason: str) -> None:
    path = write(tmp_path, f"1 1:1\n{line}\n")
    with pytest.raises(ValueError, match="line 2") as error:
        pp.read_libsvm(path)
    assert reason in str(error.value)
    assert line in str(error.value)


def test_n_features_is_enforced(tmp_path: Path) -> None:
    path = write(tmp_path, "1 1:1 5:2\n")
    with pytest.raises(ValueError, match="line 1"):
        pp.read_libsvm(path, n_features=3)


def test_missing_file_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="missing.txt"):
        pp.read_libsvm(tmp_path / "missing.txt")


def test_bad_options(tmp_path: Path) -> None:
    path = write(tmp_path, "1 1:1\n")
    with pytest.raises(ValueError, match="zero_based"):
        pp.read_libsvm(path, zero_based="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="batch_size"):
        list(pp.iter_libsvm(path, batch_size=0))


def test_batches_concatenate_to_the_whole_file(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    lines = []
    for _ in range(1000):
        idx = np.sort(rng.choice(np.arange(1, 60), size=rng.integers(0, 10), replace=False))
        lines.append(
            " ".join([str(rng.integers(-1, 2))] + [f"{i}:{rng.normal():.6g}" for i in idx])
        )
    path = write(tmp_path, "\n".join(lines) + "\n", compress=True, name="d.gz")
    whole = pp.read_libsvm(path, zero_based=False)
    batches = list(pp.iter_libsvm(path, batch_size=77, zero_based=False))
    assert [b.height for b in batches[:-1]] == [77] * (len(batches) - 1)
    assert pl.concat(batches).equals(whole)
    scanned = pp.scan_libsvm(path, batch_size=77, zero_based=False).collect(engine="streaming")
    assert scanned.equals(whole)
    assert (
        pp.scan_libsvm(path, zero_based=False)
        .filter(pl.col("label") > 0)
        .head(5)
        .collect()
        .equals(whole.filter(pl.col("label") > 0).head(5))
    )


def test_streaming_auto_refuses_a_late_index_zero(tmp_path: Path) -> None:
    path = write(tmp_path, "1 1:1\n1 2:1\n1 0:1\n")
    with pytest.raises(ValueError, match="zero_based"):
        list(pp.iter_libsvm(path, batch_size=2))
    assert sum(b.height for b in pp.iter_libsvm(path, batch_size=2, zero_based=True)) == 3


def vw_hash(name: str, seed: int) -> int:
    stripped = name.strip(" ")
    if stripped.isdigit():
        return (int(stripped) + seed) % 2**32
    return mmh3.hash(stripped.encode(), seed, signed=False)


def test_read_vw(tmp_path: Path) -> None:
    text = "1 2.0 'first |a x:2 y |b:0.5 z:4 123\n-1 |  w\n|a x\n0 0.5 0.1 tagless| q\n"
    path = write(tmp_path, text, compress=True, name="d.vw.gz")
    frame = pp.read_vw(path, bits=20)
    assert frame.columns == ["label", "weight", "base", "tag", "features", "namespace"]
    assert frame["label"].to_list() == [1.0, -1.0, None, 0.0]
    assert frame["weight"].to_list() == [2.0, 1.0, 1.0, 0.5]
    assert frame["base"].to_list() == [0.0, 0.0, 0.0, 0.1]
    assert frame["tag"].to_list() == ["first", None, None, "tagless"]
    mask = (1 << 20) - 1
    a, b = vw_hash("a", 0), vw_hash("b", 0)
    first = frame["features"][0].to_list()
    assert first == [
        {"index": vw_hash("x", a) & mask, "value": 2.0},
        {"index": vw_hash("y", a) & mask, "value": 1.0},
        {"index": vw_hash("z", b) & mask, "value": 2.0},
        {"index": vw_hash("123", b) & mask, "value": 0.5},
    ]
    assert frame["namespace"][0].to_list() == [ord("a"), ord("a"), ord("b"), ord("b")]
    assert frame["features"][1].to_list() == [{"index": vw_hash("w", 0) & mask, "value": 1.0}]
    assert frame["namespace"][1].to_list() == [ord(" ")]
    batches = list(pp.iter_vw(path, bits=20, batch_size=3))
    assert [b.height for b in batches] == [3, 1]
    assert pl.concat(batches).equals(frame)


@pytest.mark.parametrize("line", ["1 |a x:abc", "1 -2 |a x", "1 |a x:nan"])
def test_vw_malformed_line(tmp_path: Path, line: str) -> None:
    path = write(tmp_path, f"1 |a x\n{line}\n")
    with pytest.raises(ValueError, match="line 2"):
        pp.read_vw(path)


def test_vw_bits_range(tmp_path: Path) -> None:
    path = write(tmp_path, "1 |a x\n")
    with pytest.raises(ValueError, match="bits"):
        pp.read_vw(path, bits=33)


def test_every_registered_format_has_read_iter_and_scan() -> None:
    for format in _internal.FORMATS:
        for verb in ("read", "iter", "scan"):
            assert callable(getattr(pp, f"{verb}_{format}")), f"{verb}_{format}"


def test_scan_vw_equals_read_vw(tmp_path: Path) -> None:
    lines = [f"{i % 2} |a x{i}:{i} y |b z{i % 7}" for i in range(500)]
    path = write(tmp_path, "\n".join(lines) + "\n")
    whole = pp.read_vw(path, bits=12)
    scanned = pp.scan_vw(path, bits=12, batch_size=64).collect(engine="streaming")
    assert scanned.equals(whole)
    head = pp.scan_vw(path, bits=12).select("label", "features").head(3).collect()
    assert head.equals(whole.select("label", "features").head(3))


def test_reader_options_are_checked_once_in_the_engine_and_named(tmp_path: Path) -> None:
    path = write(tmp_path, "1 1:1\n")
    with pytest.raises(ValueError, match="n_features"):
        pp.read_libsvm(path, n_features=-1)
    with pytest.raises(ValueError, match="seed"):
        pp.read_vw(path, seed=-1)
    with pytest.raises(ValueError, match="bits must be between 1 and 32, got 0"):
        pp.read_vw(path, bits=0)
    with pytest.raises(ValueError, match="unknown field `zero`"):
        _internal.read("libsvm", str(path), {"zero": True})
    with pytest.raises(ValueError, match=r"format must be one of \[.*libsvm.*vw.*\], got \"csv\""):
        _internal.read("csv", str(path), {})


def test_read_vw_namespace_columns(tmp_path: Path) -> None:
    text = "1 2.0 |Animal cat 5:2 |Food fish\n-1 |Food grass | plain\n0 |Aardvark x\n"
    path = write(tmp_path, text)
    frame = pp.read_vw(path, namespaces="auto")
    assert frame.columns == ["label", "weight", "base", "tag", "A", "F", "default"]
    assert frame["weight"].to_list() == [2.0, 1.0, 1.0]
    # Index + the learner's seed of the column (the hash of its name) is Vowpal Wabbit's hash.
    seed = {name: vw_hash(name, 0) for name in ("A", "F", "default")}

    def hashes(column: str, row: int) -> list[int]:
        return [(e["index"] + seed[column]) % 2**32 for e in frame[column][row].to_list()]

    animal, aardvark = vw_hash("Animal", 0), vw_hash("Aardvark", 0)
    assert hashes("A", 0) == [vw_hash("cat", animal), vw_hash("5", animal)]
    assert [e["value"] for e in frame["A"][0].to_list()] == [1.0, 2.0]
    assert hashes("A", 1) == [] and hashes("A", 2) == [vw_hash("x", aardvark)]
    assert hashes("F", 1) == [vw_hash("grass", vw_hash("Food", 0))]
    assert hashes("default", 1) == [vw_hash("plain", 0)]
    assert pp.read_vw(path, namespaces=["default", "F", "A"]).columns[4:] == ["default", "F", "A"]
    batches = list(pp.iter_vw(path, namespaces="auto", batch_size=2))
    assert pl.concat(batches).equals(frame)
    streamed = pp.scan_vw(path, namespaces="auto", batch_size=2).collect(engine="streaming")
    assert streamed.equals(frame)


def test_read_vw_namespace_columns_errors(tmp_path: Path) -> None:
    path = write(tmp_path, "1 |A x\n1 |A y |Bee z\n")
    with pytest.raises(ValueError, match=r"line 2.*\"Bee\" is not among"):
        pp.read_vw(path, namespaces="A")
    with pytest.raises(ValueError, match="not one letter"):
        pp.read_vw(path, namespaces=["AB"])
    with pytest.raises(ValueError, match="listed twice"):
        pp.read_vw(path, namespaces="AA")
    with pytest.raises(ValueError, match="no features"):
        pp.read_vw(write(tmp_path, "1\n", name="empty.vw"), namespaces="auto")


# ----------------------------------------------- Vowpal Wabbit's feature options, side by side


def vw_audit(path: Path, *args: str) -> list[list[tuple[int, float]]]:
    """Each example's features as ``vw --audit -b 18`` shows them: (index, value) pairs, sorted,
    without the constant."""
    pytest.importorskip("vowpalwabbit")
    command = [sys.executable, "-m", "vowpalwabbit", "-d", str(path), "--audit", "--quiet"]
    run = subprocess.run([*command, "-b", "18", *args], capture_output=True, check=True)
    rows = []
    for line in run.stdout.decode("latin-1").splitlines():
        if line.startswith("\t"):
            fields = (field.rsplit(":", 3) for field in line[1:].split("\t"))
            rows.append(
                sorted((int(i), float(v)) for name, i, v, _ in fields if name != "Constant")
            )
    return rows


def our_rows(frame: pl.DataFrame) -> list[list[tuple[int, float]]]:
    rows = frame["features"].to_list()
    return [sorted((e["index"], round(e["value"], 6)) for e in row) for row in rows]


def test_vw_auto_namespaces_cover_the_whole_file(tmp_path: Path) -> None:
    lines = [f"{k % 2} |a x{k % 50} |b y{k % 7}" for k in range(120_000)]
    lines.append("-1 |a x1 |zebra late")
    path = write(tmp_path, "\n".join(lines) + "\n", name="late.vw.gz", compress=True)
    frame = pp.read_vw(path, namespaces="auto")
    assert frame.columns[4:] == ["a", "b", "z"]
    assert frame["z"].list.len().to_list() == [0] * 120_000 + [1]
    model = pp.SGDClassifier(loss="logistic", progress=False).fit(frame)
    assert model.namespaces_ == ["a", "b", "z"]
    streamed = pp.scan_vw(path, namespaces="auto", batch_size=50_000).collect(engine="streaming")
    assert streamed.equals(frame)
    assert pp.read_vw(path, namespaces="auto", ignore="a").columns[4:] == ["b", "z"]
    assert pp.read_vw(path, namespaces="auto", keep=["z"]).columns[4:] == ["z"]
    bad = write(tmp_path, "1 |a x\n1 |élan y\n", name="bad.vw")
    with pytest.raises(ValueError, match=r"line 2.*\"élan\".*not ASCII"):
        pp.read_vw(bad, namespaces="auto")
    assert pp.read_vw(bad, namespaces="auto", other_namespaces="drop").columns[4:] == ["a"]


def test_vw_other_namespaces_drop_scores_like_vw_ignore(tmp_path: Path) -> None:
    """Scoring a file with namespaces the model never saw: ``other_namespaces="drop"`` gives
    the margins of a vw that ignores them."""
    vw = pytest.importorskip("vowpalwabbit")
    rng = np.random.default_rng(7)

    def line(extra: bool) -> str:
        a, b = rng.integers(0, 30, 2)
        label = 1 if (a + b) % 3 else -1
        tail = f" |Cnew c{rng.integers(0, 30)} d" if extra else ""
        return f"{label} |A a{a} |B b{b}:0.5{tail}"

    train = [line(False) for _ in range(2000)]
    test = [line(True) for _ in range(300)]
    write(tmp_path, "\n".join(train) + "\n", name="train.vw")
    test_path = write(tmp_path, "\n".join(test) + "\n", name="test.vw")
    workspace = vw.Workspace("--quiet --loss_function logistic -b 20 --ignore C")
    for text in train:
        workspace.learn(text)
    margins = [workspace.predict(text) for text in test]
    workspace.finish()
    model = pp.SGDClassifier(
        shuffle=False, loss="logistic", bits=20, field_scales=False, progress=False
    )
    model.fit(pp.read_vw(tmp_path / "train.vw", namespaces="auto"))
    with pytest.raises(ValueError, match=r"line 1.*\"Cnew\" is not among.*drop"):
        pp.read_vw(test_path, namespaces=model.namespaces_)
    frame = pp.read_vw(test_path, namespaces=model.namespaces_, other_namespaces="drop")
    assert frame.columns[4:] == ["A", "B"]
    # Float rounding only (vw sums in float32): measured up to 3e-5.
    np.testing.assert_allclose(model.decision_function(frame), margins, rtol=1e-4, atol=1e-4)
    # A listed namespace the file never has is an empty column.
    empty = pp.read_vw(test_path, namespaces=["A", "Q"], other_namespaces="drop")["Q"]
    assert empty.list.len().sum() == 0 and empty.len() == 300


IGNORE_KEEP_TEXT = "1 |a x:0.5 y |b z | d\n-1 |bee q |c w\n0 |a y | e |c v:2\n"


@pytest.mark.parametrize(
    "ours,theirs",
    [
        ({"ignore": "b"}, ["--ignore", "b"]),
        ({"ignore": ["b", "default"]}, ["--ignore", "b", "--ignore", "\\x20"]),
        ({"keep": "ac"}, ["--keep", "ac"]),
        ({"keep": ["a", "default"]}, ["--keep", "a", "--keep", "\\x20"]),
        ({"ignore": "default"}, ["--ignore", "\\x20"]),
    ],
)
def test_vw_ignore_and_keep_match_vw_audit(
    tmp_path: Path, ours: dict[str, Any], theirs: list[str]
) -> None:
    path = write(tmp_path, IGNORE_KEEP_TEXT, name="ik.vw")
    assert our_rows(pp.read_vw(path, **ours)) == vw_audit(path, *theirs)


def test_vw_ignore_keep_and_namespace_options_are_checked(tmp_path: Path) -> None:
    path = write(tmp_path, IGNORE_KEEP_TEXT, name="ik.vw")
    with pytest.raises(ValueError, match="ignore and keep cannot be given together"):
        pp.read_vw(path, ignore="a", keep="b")
    with pytest.raises(ValueError, match="listed in namespaces but removed by ignore"):
        pp.read_vw(path, namespaces="ab", ignore="b")
    with pytest.raises(ValueError, match='ignore: namespace "ab" is not one letter'):
        pp.read_vw(path, ignore=["ab"])
    with pytest.raises(ValueError, match=r"other_namespaces: unknown variant `keep`"):
        pp.read_vw(path, other_namespaces="keep")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"hash: unknown variant `digits`"):
        pp.read_vw(path, hash="digits")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="skips need ngram"):
        pp.read_vw(path, skips=1)
    with pytest.raises(ValueError, match='ngram: "a" is not'):
        pp.read_vw(path, ngram="a")
    with pytest.raises(ValueError, match="no features: no namespace in the file left"):
        pp.read_vw(path, namespaces="auto", keep="q")


def test_vw_nul_byte_after_a_value_reads_as_vw_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "nul.vw"
    path.write_bytes(
        b"1 |a x:0.7\0 y |b z\n-1 |a w\0 q\n1 |a p\0:2 r\n1 |a k:1\0|b m\n1 |a:2\0 x |b y\n"
    )
    frame = pp.read_vw(path)
    assert frame["features"].list.len().to_list() == [1, 2, 2, 1, 0]
    assert our_rows(frame) == vw_audit(path)


def test_vw_hash_all_matches_vw_audit(tmp_path: Path) -> None:
    path = write(tmp_path, "1 |a 123 7:2 x 0 |5 9 | 42 :3\n-1 |77 1 2 |b 007\n", name="d.vw")
    assert our_rows(pp.read_vw(path)) == vw_audit(path)
    hashed = pp.read_vw(path, hash="all")
    assert our_rows(hashed) == vw_audit(path, "--hash", "all")
    assert our_rows(hashed) != our_rows(pp.read_vw(path))


NGRAM_TEXT = (
    "1 |a the cat sat on the mat |b x y z\n"
    "-1 |a the :2 dog |b x |a ran z:0 far away |c one\n"
    "0 | w1 w2 w3 w4 w5 |apple s t\n"
    "1 |a:0.5 one two three four five six seven\n"
)


@pytest.mark.parametrize(
    "ours,theirs",
    [
        ({"ngram": 2}, ["--ngram", "2"]),
        ({"ngram": 3}, ["--ngram", "3"]),
        ({"ngram": "a3", "skips": 1}, ["--ngram", "a3", "--skips", "1"]),
        ({"ngram": [3, "b2"], "skips": 2}, ["--ngram", "3", "--ngram", "b2", "--skips", "2"]),
        (
            {"ngram": ["default4", "a2"], "skips": ["a1"]},
            ["--ngram", " 4", "--ngram", "a2", "--skips", "a1"],
        ),
        ({"ngram": 2, "ignore": "b"}, ["--ngram", "2", "--ignore", "b"]),
        ({"ngram": 2, "hash": "all"}, ["--ngram", "2", "--hash", "all"]),
    ],
)
def test_vw_ngrams_and_skips_match_vw_audit(
    tmp_path: Path, ours: dict[str, Any], theirs: list[str]
) -> None:
    path = write(tmp_path, NGRAM_TEXT, name="grams.vw")
    frame = pp.read_vw(path, **ours)
    assert our_rows(frame) == vw_audit(path, *theirs)
    # The namespace columns hold the same grams (their whole hash, relative to the column).
    columns = pp.read_vw(path, namespaces="auto", **ours)
    width = sum(columns[name].list.len() for name in columns.columns[4:])
    assert width.to_list() == frame["features"].list.len().to_list()


def test_vw_ngrams_train_like_vw(tmp_path: Path) -> None:
    """Sentences whose label is a word pair: vw --ngram t2 --skips 1 and a learner on the same
    grams reach the same progressive loss. (No word twice in a sentence: the learner updates a
    feature repeated within an example differently from vw, grams or not.)"""
    vw = pytest.importorskip("vowpalwabbit")
    rng = np.random.default_rng(11)
    words = [f"w{k}" for k in range(25)]
    lines = []
    for _ in range(3000):
        sentence = list(rng.choice(words, rng.integers(3, 9), replace=False))
        if rng.random() < 0.3:
            sentence = [word for word in sentence if word not in ("w1", "w2")]
            at = rng.integers(0, len(sentence) + 1)
            sentence[at:at] = ["w1", "w2"]
        label = 1 if ("w1", "w2") in zip(sentence, sentence[1:], strict=False) else -1
        lines.append(f"{label} |text {' '.join(sentence)} |m n{rng.integers(0, 5)}")
    path = write(tmp_path, "\n".join(lines) + "\n", name="text.vw")
    workspace = vw.Workspace("--quiet --loss_function logistic -b 20 --ngram t2 --skips 1")
    for text in lines:
        workspace.learn(text)
    theirs = workspace.get_sum_loss() / workspace.get_weighted_examples()
    workspace.finish()
    frame = pp.read_vw(path, namespaces="auto", ngram="t2", skips=1)
    model = pp.SGDClassifier(
        shuffle=False, loss="logistic", bits=20, field_scales=False, progress=False
    )
    assert model.fit(frame).progressive_loss_ == pytest.approx(theirs, rel=1e-5)
    plain = model.__sklearn_clone__().fit(pp.read_vw(path, namespaces="auto"))
    assert plain.progressive_loss_ > theirs * 1.1  # the grams matter


# Numbers as LIBSVM files in the wild spell them, Python's spellings included (scikit-learn reads
# labels and values with float(), indices with int()), and a few it refuses.
_NUMBER = st.one_of(
    st.sampled_from(["1", "+3", "-1", "0", "-0", "007", "1_0", "2.5", ".5", "1e3", "1E-2", "+.5"]),
    st.sampled_from(["1_000.0_1", "0.0", "3.0", "1__0", "_1", "1_", "nan", "inf", "x"]),
)


def _spell_index(index: int, how: int) -> str:
    spellings = [
        str(index),
        f"+{index}",
        f"00{index}",
        "_".join(str(index)),
        "-0" if not index else "",
    ]
    return spellings[how] or str(index)


_ENTRIES = st.lists(st.integers(0, 30), max_size=5, unique=True).flatmap(
    lambda indices: st.tuples(
        *(
            st.tuples(st.integers(0, 4).map(lambda how, i=i: _spell_index(i, how)), _NUMBER)
            for i in sorted(indices)
        )
    )
)
_LINE = st.builds(
    lambda label, qid, entries: " ".join(
        [label, *([f"qid:{qid}"] if qid is not None else []), *(f"{i}:{v}" for i, v in entries)]
    ),
    _NUMBER,
    st.one_of(st.none(), _NUMBER),
    _ENTRIES,
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(_LINE, min_size=1, max_size=6))
def test_read_libsvm_reads_what_sklearn_reads(tmp_path: Path, lines: list[str]) -> None:
    """Wherever scikit-learn reads a file, we read the same rows, except for its documented
    differences: a NaN or infinite number and a qid that is not a whole number are refused."""
    path = write(tmp_path, "\n".join(lines) + "\n")
    try:
        X_ref, y_ref = load_svmlight_file(str(path))
    except ValueError:
        return  # our reader may accept more (unsorted rows, duplicates): not compared here
    try:
        frame = pp.read_libsvm(path)
    except ValueError as error:
        documented = not (np.isfinite(X_ref.data).all() and np.isfinite(y_ref).all())
        assert documented or "qid" in str(error), (lines, error)
        return
    np.testing.assert_array_equal(frame["label"].to_numpy(), y_ref)
    X = pp.to_numpy(frame["features"], X_ref.shape[1])
    np.testing.assert_array_equal(X, X_ref.toarray())


def test_namespaces_auto_refuses_a_fifo_it_would_read_twice(tmp_path) -> None:
    """``namespaces="auto"`` lists the namespaces in a first read: on a FIFO the second read
    waited for ever for a writer (a hang the entry matrix found); it is an error naming it,
    before anything is opened."""
    fifo = tmp_path / "data.fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"is a FIFO, which can be read once: namespaces='auto'"):
        pp.read_vw(fifo, namespaces="auto")
    with pytest.raises(ValueError, match=r"is a FIFO, which can be read once"):
        pp.scan_vw(fifo, namespaces="auto")


@pytest.mark.parametrize("format", ["libsvm", "vw"])
def test_a_fifo_is_read_while_a_thread_of_the_same_program_writes_it(
    format: str, tmp_path: Path
) -> None:
    # The reader waits for the writer with the GIL released: held, the writer thread never ran.
    import threading

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    text = "1 1:0.5 3:2\n-1 2:1\n" if format == "libsvm" else "1 |a x:0.5 y:2\n-1 |a z\n"

    def write() -> None:
        with open(fifo, "w") as writer:
            writer.write(text)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    frame = pp.read_libsvm(fifo) if format == "libsvm" else pp.read_vw(fifo)
    writer.join(timeout=10)
    assert frame["label"].to_list() == [1.0, -1.0]

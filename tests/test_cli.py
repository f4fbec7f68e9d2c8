"""The command line (issue 24): ``train`` prints Vowpal Wabbit's progressive table (equal to
``vw``'s on the same file), ``predict`` and ``inspect`` read the model, errors exit 1 with one
line, usage errors 2."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import polars_poly as pp
import pytest
from polars_poly.__main__ import main


@pytest.fixture(scope="module")
def vw_file(tmp_path_factory) -> Path:
    rng = np.random.default_rng(0)
    path = tmp_path_factory.mktemp("cli") / "train.vw"
    lines = []
    for _ in range(3000):
        a, b = rng.integers(0, 6), rng.integers(0, 6)
        y = 1 if (a + b) % 2 else -1
        lines.append(f"{y} |Animal a{a} x:{rng.normal():.3f} |Food f{b}")
    path.write_text("\n".join(lines) + "\n")
    return path


def table_rows(text: str) -> list[list[float]]:
    """The numeric rows of a progressive table (a holdout row's mark dropped)."""
    rows = []
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[-1] == "h":
            fields = fields[:-1]
        try:
            rows.append([float(f) for f in fields])
        except ValueError:
            continue
    return [r for r in rows if len(r) == 7]


def test_train_prints_vowpal_wabbits_table(vw_file, tmp_path, capsys) -> None:
    model = tmp_path / "m.bin"
    args = ["-d", str(vw_file), "-q", "AF", "--loss_function", "logistic"]
    assert main(["train", *args, "-f", str(model)]) == 0
    ours = table_rows(capsys.readouterr().err)
    assert [int(r[2]) for r in ours] == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]
    assert model.exists()
    pytest.importorskip("vowpalwabbit")
    vw = subprocess.run(
        [sys.executable, "-m", "vowpalwabbit", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    theirs = table_rows(vw.stdout + vw.stderr)
    assert len(theirs) >= 12
    for a, b in zip(ours, theirs, strict=False):
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_predict_and_inspect_read_the_model(vw_file, tmp_path, capsys) -> None:
    model = tmp_path / "apple.bin"
    assert main(["train", "-d", str(vw_file), "--stage_poly", "--quiet", "-f", str(model)]) == 0
    predictions = tmp_path / "p.txt"
    assert main(["predict", "-d", str(vw_file), "-i", str(model), "-p", str(predictions)]) == 0
    values = np.loadtxt(predictions)
    assert values.shape == (3000,)
    capsys.readouterr()
    assert main(["inspect", "-i", str(model), "--top", "5"]) == 0
    text = capsys.readouterr().out
    assert "SGDRegressor" in text and "n_examples: 3000" in text and "monomial" in text
    pytest.importorskip("matplotlib")
    plot = tmp_path / "monomials.png"
    assert main(["inspect", "-i", str(model), "--top", "5", "--plot", str(plot)]) == 0
    assert plot.read_bytes()[:4] == b"\x89PNG"


def test_predict_reports_r2_and_says_when_the_labels_do_not_vary(tmp_path, capsys) -> None:
    rng = np.random.default_rng(4)
    train = tmp_path / "train.vw"
    train.write_text("".join(f"{rng.normal():.3f} |a x:{rng.normal():.3f}\n" for _ in range(200)))
    model = tmp_path / "m.bin"
    assert main(["train", "-d", str(train), "--quiet", "-f", str(model)]) == 0
    for lines, expected in (
        (["0.5 |a x:1", "-0.5 |a x:2"], r"R² = -?\d+\.\d{6}\n"),  # labels that vary
        (["0.5 |a x:1"], r"R² = n\.a\. \(the labels do not vary\)"),
        (["0.5 |a x:1", "0.5 |a x:2", "0.5 |a x:3"], r"R² = n\.a\. \(the labels do not vary\)"),
    ):
        test = tmp_path / "test.vw"
        test.write_text("\n".join(lines) + "\n")
        capsys.readouterr()
        assert main(["predict", "-d", str(test), "-i", str(model), "-p", os.devnull]) == 0
        assert re.search(expected, capsys.readouterr().err)


@pytest.mark.filterwarnings("always::polars_poly.TableSaturationWarning")
def test_warnings_are_lines_of_the_program_and_quiet_silences_them(vw_file, capsys) -> None:
    # -b 3: eight slots for some 20 features, a saturated table.
    assert main(["train", "-d", str(vw_file), "-b", "3"]) == 0
    warned = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert len(warned) == 1, warned
    assert warned[0].startswith("polars-poly train: warning: SGDRegressor: the weight table")
    assert "KiB)" in warned[0]  # a small table's size is not "0 MiB"
    assert main(["train", "-d", str(vw_file), "-b", "3", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_continue_training_and_other_formats(vw_file, tmp_path, capsys) -> None:
    model = tmp_path / "m.bin"
    assert main(["train", "-d", str(vw_file), "--quiet", "-f", str(model)]) == 0
    assert capsys.readouterr().err == ""  # --quiet: nothing, as vw
    assert main(["train", "-d", str(vw_file), "-i", str(model), "-f", str(model)]) == 0
    # As vw, the summary is of this run: the examples of -i's model are not counted again.
    assert "number of examples = 3000" in capsys.readouterr().err
    assert pp.load_model(model).n_examples_ == 6000
    svm = tmp_path / "d.svm"
    svm.write_text("1 1:0.5 3:1\n0 2:1\n1 1:1 2:0.5\n")
    assert main(["train", "-d", str(svm), "--quiet", "--loss_function", "logistic"]) == 0
    parquet = tmp_path / "d.parquet"
    pl.DataFrame({"a": [1.0, 2.0, 3.0], "b": [0.0, 1.0, 0.5], "y": [1.0, 2.0, 3.0]}).write_parquet(
        parquet
    )
    assert main(["train", "-d", str(parquet), "--label", "y"]) == 0
    assert "number of examples = 3" in capsys.readouterr().err


def test_errors_exit_with_one_line(vw_file, tmp_path, capsys) -> None:
    assert main(["train", "-d", str(tmp_path / "missing.vw")]) == 1
    assert "train: error:" in capsys.readouterr().err
    # As in vw, a cross of a namespace the data lacks is empty: -q AZ is no cross at all.
    assert main(["train", "-d", str(vw_file), "-q", "AZ", "-p", str(tmp_path / "az.txt")]) == 0
    assert main(["train", "-d", str(vw_file), "-p", str(tmp_path / "none.txt")]) == 0
    assert (tmp_path / "az.txt").read_text() == (tmp_path / "none.txt").read_text()
    capsys.readouterr()
    with pytest.raises(SystemExit) as usage:
        main(["train", "--no-such-flag"])
    assert usage.value.code == 2


def test_vowpal_wabbits_long_cross_flags_are_q(vw_file, tmp_path, capsys) -> None:
    """``--quadratic AF`` and ``--interactions AF`` are Vowpal Wabbit's spellings of ``-q AF``
    (``--quadratic`` alone stays all products)."""
    predictions = {}
    for flags in (["-q", "AF"], ["--quadratic", "AF"], ["--interactions", "AF"], ["--quadratic"]):
        model = tmp_path / "model.pp"
        assert main(["train", "-d", str(vw_file), *flags, "--quiet", "-f", str(model)]) == 0
        out = tmp_path / "predictions.txt"
        assert main(["predict", "-d", str(vw_file), "-i", str(model), "-p", str(out)]) == 0
        predictions[" ".join(flags)] = out.read_text()
    assert predictions["-q AF"] == predictions["--quadratic AF"] == predictions["--interactions AF"]
    assert predictions["--quadratic"] != predictions["-q AF"]
    # vw's cache and holdout flags are accepted and change nothing.
    model = tmp_path / "again.pp"
    vw_style = ["-q", "AF", "-c", "-k", "--holdout_off", "--quiet", "-f", str(model)]
    assert main(["train", "-d", str(vw_file), *vw_style]) == 0
    out = tmp_path / "again.txt"
    assert main(["predict", "-d", str(vw_file), "-i", str(model), "-p", str(out)]) == 0
    assert out.read_text() == predictions["-q AF"]
    # vw's --link logistic / identity and --binary are --probabilities, --raw and the labels.
    logistic = ["-q", "AF", "--loss_function", "logistic", "--quiet", "-f", str(model)]
    assert main(["train", "-d", str(vw_file), *logistic]) == 0
    pairs = (
        (["--probabilities"], ["--link", "logistic"]),
        (["--raw"], ["--link", "identity"]),
        ([], ["--binary"]),
    )
    for ours, theirs in pairs:
        texts = []
        for flags in (ours, theirs):
            command = ["predict", "-d", str(vw_file), "-i", str(model), "-p", str(out), *flags]
            assert main(command) == 0
            texts.append(out.read_text())
        assert texts[0] == texts[1], theirs
    capsys.readouterr()
    assert main(["predict", "-d", str(vw_file), "-i", str(model), "--binary", "--raw"]) == 1
    assert "--binary writes labels" in capsys.readouterr().err
    regressor = tmp_path / "regressor.pp"
    assert main(["train", "-d", str(vw_file), "--quiet", "-f", str(regressor)]) == 0
    assert main(["predict", "-d", str(vw_file), "-i", str(regressor), "--link", "logistic"]) == 1
    assert "probabilities need a classifier" in capsys.readouterr().err
    # --interactions AFA and --cubic AFA are one cross of three namespaces (vw's spellings).
    cubic = []
    for flags in (["--interactions", "AFA"], ["--cubic", "AFA"]):
        command = ["train", "-d", str(vw_file), *flags, "--quiet", "-p", str(out)]
        assert main(command) == 0
        cubic.append(out.read_text())
    assert cubic[0] == cubic[1]


def test_the_module_runs_as_a_program(tmp_path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "polars_poly", "train", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0 and "--stage_poly" in done.stdout
    failed = subprocess.run(
        [sys.executable, "-m", "polars_poly", "inspect", "-i", str(tmp_path / "none.bin")],
        capture_output=True,
        text=True,
    )
    assert failed.returncode == 1 and failed.stderr.startswith("polars-poly inspect: error:")


@pytest.fixture(scope="module")
def multiclass_file(tmp_path_factory) -> Path:
    """Three classes, labels 1..3 (Vowpal Wabbit's multiclass labels)."""
    rng = np.random.default_rng(1)
    path = tmp_path_factory.mktemp("oaa") / "classes.vw"
    lines = []
    for _ in range(2000):
        c = rng.integers(1, 4)
        noisy = rng.integers(1, 4) if rng.random() < 0.2 else c
        lines.append(f"{c} |a k{noisy} n{rng.integers(0, 30)} |b g{rng.integers(0, 9)}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_oaa_prints_vowpal_wabbits_multiclass_table(multiclass_file, tmp_path, capsys) -> None:
    """``--oaa 3``: the progressive multiclass error at each row, the current label, the
    predicted class and the example's features, as ``vw --oaa 3`` prints them."""
    args = ["-d", str(multiclass_file), "--oaa", "3", "--loss_function", "logistic"]
    model = tmp_path / "oaa.bin"
    assert main(["train", *args, "-f", str(model)]) == 0
    ours = table_rows(capsys.readouterr().err)
    assert [int(r[2]) for r in ours][-1] == 1024
    assert main(["predict", "-d", str(multiclass_file), "-i", str(model), "--probabilities"]) == 0
    probabilities = np.loadtxt(capsys.readouterr().out.splitlines())
    assert probabilities.shape == (2000, 3)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-5)
    pytest.importorskip("vowpalwabbit")
    vw = subprocess.run(
        [sys.executable, "-m", "vowpalwabbit", *args], capture_output=True, text=True, check=True
    )
    theirs = table_rows(vw.stdout + vw.stderr)
    assert len(theirs) >= 11
    for a, b in zip(ours, theirs, strict=False):
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_standard_input_history_plot_and_a_broken_pipe(vw_file, tmp_path) -> None:
    model, history = tmp_path / "m.bin", tmp_path / "curve.csv"
    program = [sys.executable, "-m", "polars_poly"]
    text = vw_file.read_bytes()
    trained = subprocess.run(
        [*program, "train", "-f", str(model), "--history", str(history)],
        input=text,
        capture_output=True,
    )
    assert trained.returncode == 0, trained.stderr
    assert b"number of examples = 3000" in trained.stderr and trained.stdout == b""
    curve = pl.read_csv(history)
    # --history is the printed table, row for row.
    printed = table_rows(trained.stderr.decode())
    assert curve["examples"].to_list() == [int(row[2]) for row in printed]
    assert curve["examples"].to_list()[:3] == [1, 2, 4]
    np.testing.assert_allclose(curve["average_loss"], [row[0] for row in printed], atol=1e-6)
    np.testing.assert_allclose(curve["loss_since_last"], [row[1] for row in printed], atol=1e-6)
    predicted = subprocess.run(
        [*program, "predict", "-i", str(model)], input=text, capture_output=True
    )
    assert predicted.returncode == 0 and len(predicted.stdout.splitlines()) == 3000
    # The reader stops after one line: exit 141 (SIGPIPE's), no traceback.
    piped = subprocess.run(
        f"{sys.executable} -m polars_poly predict -i {model} -d {vw_file} | head -1",
        shell=True,
        capture_output=True,
        executable="/bin/bash",
    )
    assert len(piped.stdout.splitlines()) == 1 and b"Traceback" not in piped.stderr
    pytest.importorskip("matplotlib")
    plot = tmp_path / "curve.png"
    assert main(["train", "-d", str(vw_file), "--quiet", "--plot", str(plot)]) == 0
    assert plot.read_bytes()[:4] == b"\x89PNG"


def test_readable_model_names_the_weights(tmp_path, capsys) -> None:
    """``inspect --readable_model``: a linear model's weights by column name (equal to
    ``coef_``), then every nonzero slot."""
    rng = np.random.default_rng(2)
    frame = pl.DataFrame({"age": rng.normal(size=500), "hours": rng.normal(size=500)})
    frame = frame.with_columns(y=2 * pl.col("age") - pl.col("hours") + 1)
    data, model = tmp_path / "d.parquet", tmp_path / "m.bin"
    frame.write_parquet(data)
    assert main(["train", "-d", str(data), "--label", "y", "--quiet", "-f", str(model)]) == 0
    readable = tmp_path / "readable.txt"
    assert main(["inspect", "-i", str(model), "--readable_model", str(readable)]) == 0
    lines = readable.read_text().splitlines()
    named = dict(line.rsplit(":", 1) for line in lines if line.split(":")[0] in ("age", "hours"))
    fitted = pp.load_model(model)
    np.testing.assert_allclose(
        [float(named["age"]), float(named["hours"])], fitted.coef_, rtol=1e-5
    )
    slots = [line for line in lines if line.split(":")[0].isdigit()]
    assert len(slots) == 3  # age, hours and the constant


def test_a_parquet_file_of_string_fields_trains_as_its_hashed_columns(tmp_path, capsys) -> None:
    """The string columns of a parquet file are namespaces hashed with ``-b``: the model is the
    one the estimator fits on their ``hash_features`` columns."""
    from polars_poly.synthetic import eat_rate

    frame = eat_rate(3_000, seed=2, varieties=30, noise_fields=2)
    data, model = tmp_path / "eat.parquet", tmp_path / "m.bin"
    frame.write_parquet(data)
    args = ["-d", str(data), "-q", "AB", "--loss_function", "logistic", "-b", "16"]
    assert main(["train", *args, "--quiet", "-f", str(model)]) == 0
    fields = ["A", "B", "C", "D"]
    hashed = frame.with_columns(pp.hash_features(f, bits=16).alias(f) for f in fields)
    given = pp.SGDClassifier(
        shuffle=False,
        loss="logistic",
        bits=16,
        interactions=[("A", "B")],
        field_scales=False,
        progress=False,
    ).fit(hashed, "label")
    np.testing.assert_array_equal(
        pp.load_model(model).decision_function(frame.drop("label")),
        given.decision_function(hashed.drop("label")),
    )


def test_a_parquet_file_of_strings_and_numbers_crosses_the_numbers_by_f(tmp_path) -> None:
    """A parquet file's numeric columns are one namespace, ``features``, after its string
    columns: ``-q Af`` crosses A with them, as the estimator does on the same frame."""
    from polars_poly.synthetic import eat_rate

    frame = eat_rate(3_000, seed=2, varieties=30, noise_fields=1).with_columns(
        pl.Series("count", np.arange(3_000) % 5, dtype=pl.Int64)
    )
    data, model = tmp_path / "eat.parquet", tmp_path / "m.bin"
    frame.write_parquet(data)
    args = ["-d", str(data), "-q", "Af", "--loss_function", "logistic", "-b", "16"]
    assert main(["train", *args, "--quiet", "-f", str(model)]) == 0
    given = pp.SGDClassifier(
        shuffle=False,
        loss="logistic",
        bits=16,
        interactions=[("A", "features")],
        field_scales=False,
    ).fit(frame, "label")
    trained = pp.load_model(model)
    assert trained.namespaces_ == ["A", "B", "C", "features"]
    test = frame.drop("label")
    np.testing.assert_array_equal(trained.decision_function(test), given.decision_function(test))


def test_field_scales_are_opt_in_and_listed(vw_file, tmp_path, capsys) -> None:
    """``--field_scales`` learns a scale per namespace and cross (the default stays Vowpal
    Wabbit's model); ``inspect --readable_model`` lists them after the slots."""
    args = ["-d", str(vw_file), "-q", "AF", "--loss_function", "logistic", "--quiet"]
    for flag, model in (([], tmp_path / "plain.bin"), (["--field_scales"], tmp_path / "fs.bin")):
        assert main(["train", *args, *flag, "-f", str(model)]) == 0
    assert not hasattr(pp.load_model(tmp_path / "plain.bin"), "field_scales_")
    scaled = pp.load_model(tmp_path / "fs.bin")
    assert scaled.field_scales_["field"].to_list() == ["A", "F", "A*F"]
    readable = tmp_path / "readable.txt"
    assert main(["inspect", "-i", str(tmp_path / "fs.bin"), "--readable_model", str(readable)]) == 0
    listed = [line for line in readable.read_text().splitlines() if line.startswith("field_scale")]
    assert [line.split(":")[1] for line in listed] == ["A", "F", "A*F"]


def test_streaming_in_small_batches_changes_nothing(vw_file, tmp_path, capsys, monkeypatch) -> None:
    """The commands read their input batch by batch: with batches of 100 rows (the table's
    power-of-two rows falling inside and across them) the table, the model and the predictions
    equal those of one batch."""
    from polars_poly.cli import _data

    outputs = []
    for rows in (1_000_000, 100):
        monkeypatch.setattr(_data, "BATCH_ROWS", rows)  # where scan_data and batches read it
        model = tmp_path / f"m{rows}.bin"
        args = ["-d", str(vw_file), "-q", "AF", "--loss_function", "logistic", "--passes", "2"]
        assert main(["train", *args, "-f", str(model)]) == 0
        table = table_rows(capsys.readouterr().err)
        assert main(["predict", "-d", str(vw_file), "-i", str(model), "--probabilities"]) == 0
        captured = capsys.readouterr()
        outputs.append((table, captured.out, captured.err))
    assert outputs[0] == outputs[1]
    assert "accuracy = " in outputs[0][2] and len(outputs[0][0]) == 13  # up to 4096 of 6000


@pytest.mark.parametrize("classes", ["0", "1", "-2"])
def test_oaa_of_fewer_than_two_classes_is_an_error_naming_it(multiclass_file, classes, capsys):
    assert main(["train", "-d", str(multiclass_file), "--oaa", classes]) == 1
    assert f"--oaa takes the number of classes, 2 or more, got {classes}" in capsys.readouterr().err


def test_a_stream_given_as_a_path_is_read_as_the_file(tmp_path) -> None:
    """``-d /dev/stdin`` on a pipe (read once) trains as the file does: a stream is copied
    before it is read (its format, namespaces, rows), where it used to give no rows."""
    text = "".join(f"{1 if k % 3 else -1} |a x{k % 5} |b y{k % 2}\n" for k in range(200))
    (tmp_path / "d.vw").write_text(text)
    command = [sys.executable, "-m", "polars_poly", "train", "--quiet", "-p", "/dev/stdout"]
    from_file = subprocess.run(
        [*command, "-d", str(tmp_path / "d.vw")], capture_output=True, text=True, check=True
    )
    piped = subprocess.run(
        [*command, "-d", "/dev/stdin"], input=text, capture_output=True, text=True, check=True
    )
    assert piped.stdout == from_file.stdout
    assert len(piped.stdout.splitlines()) == 200


@pytest.mark.parametrize("command", [[], ["train"], ["predict"], ["inspect"], ["compare"]])
def test_help_shows_no_sphinx_markup(command: list[str], capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([*command, "--help"])
    assert exit_.value.code == 0
    shown = capsys.readouterr().out
    assert "usage: polars-poly" in shown
    for markup in ("``", ":mod:`", ":class:`", ":meth:`", ":func:`"):
        assert markup not in shown, (command, markup)


def test_ffm_flags_train_a_factorization(vw_file, tmp_path, capsys) -> None:
    """fwumious_wabbit's --ffm_k / --ffm_field / --ffm_* train an FFM beside the weights (a
    field is one namespace, by name or letter); -i keeps the model's; predict scores it."""
    model = tmp_path / "ffm.bin"
    # The reader names a namespace by its letter (|Animal is A); a field may be either.
    flags = ["--ffm_k", "3", "--ffm_field", "A", "--ffm_field", "F", "--ffm_bit_precision", "8"]
    rate = ["--ffm_learning_rate", "0.2", "--ffm_power_t", "0.4", "--ffm_init_acc_gradient", "2"]
    args = ["-d", str(vw_file), "--loss_function", "logistic", *flags, *rate]
    assert main(["train", *args, "--quiet", "-f", str(model)]) == 0
    loaded = pp.load_model(model)
    settings = loaded.get_params()["ffm"]
    assert (
        settings.get_params()
        == pp.FFM(
            k=3,
            fields=None,  # both namespaces: every one
            bits=8,
            learning_rate=0.2,
            power_t=0.4,
            initial_accumulator=2.0,
            pairs="auto",  # every pair (fwumious_wabbit's), what auto takes without crosses
        ).get_params()
    )
    preds = tmp_path / "p.txt"
    assert main(["predict", "-d", str(vw_file), "-i", str(model), "-p", str(preds)]) == 0
    assert len(preds.read_text().splitlines()) == 3000
    capsys.readouterr()
    again = ["train", "-d", str(vw_file), "-i", str(model), "--ffm_k", "2"]
    assert main(again) == 1
    assert "--ffm_k would change the model's features" in capsys.readouterr().err
    assert main(["train", "-d", str(vw_file), "--ffm_k", "2", "--ffm_field", "AF"]) == 2
    err = capsys.readouterr().err
    assert "--ffm_field AF: no namespace is named or starts with it" in err
    # Ours: --ffm_pairs crosses factorizes the pairs -q crosses alone.
    crossed = tmp_path / "crossed.bin"
    given = ["-q", "AF", "--ffm_k", "2", "--ffm_pairs", "crosses", "-f", str(crossed)]
    assert main(["train", "-d", str(vw_file), "--loss_function", "logistic", *given]) == 0
    assert pp.load_model(crossed).get_params()["ffm"].pairs == "auto"  # what auto chooses


def test_the_program_on_its_own_allocator_exchanges_frames_with_polars(
    vw_file, multiclass_file, tmp_path, capsys
) -> None:
    """The ``polars-poly`` program runs the extension on its own allocator (mimalloc) while
    Polars keeps its own: frames then cross between the two (parquet in, one-against-all from
    VW text, predictions). Each run gives what the same command gives in this process, where
    the extension shares Polars' allocator."""
    parquet = tmp_path / "train.parquet"
    pp.read_vw(vw_file, namespaces="auto").drop("base", "tag").write_parquet(parquet)
    runs = {
        "parquet": (parquet, ["-q", "AF"]),
        "oaa": (multiclass_file, ["--oaa", "3"]),
    }
    program = [sys.executable, "-m", "polars_poly"]
    for name, (data, flags) in runs.items():
        mine, theirs = tmp_path / f"{name}-in.bin", tmp_path / f"{name}-program.bin"
        assert main(["train", "-d", str(data), *flags, "--quiet", "-f", str(mine)]) == 0
        trained = subprocess.run(
            [*program, "train", "-d", str(data), *flags, "--quiet", "-f", str(theirs)],
            capture_output=True,
            text=True,
        )
        assert trained.returncode == 0, trained.stderr
        capsys.readouterr()
        assert main(["predict", "-d", str(data), "-i", str(mine)]) == 0
        expected = capsys.readouterr().out
        scored = subprocess.run(
            [*program, "predict", "-d", str(data), "-i", str(theirs)],
            capture_output=True,
            text=True,
        )
        assert scored.returncode == 0, scored.stderr
        assert scored.stdout == expected and expected.count("\n") >= 2000


@pytest.mark.parametrize("flags", [[], ["--passes", "2", "-c", "-k", "--holdout_off"]])
def test_oaa_writes_vowpal_wabbits_predictions_while_training(
    multiclass_file, tmp_path, flags
) -> None:
    """``--oaa 3 -p FILE`` while training: each example's class as predicted before it was
    learned (every pass's), with its tag, the same lines as ``vw --oaa 3 -p``."""
    pytest.importorskip("vowpalwabbit")
    data = tmp_path / "tagged.vw"
    lines = multiclass_file.read_text().splitlines()
    # Every third example gets a tag (written before its first '|').
    tagged = [
        line.replace(" |a", f" 'r{k}|a", 1) if k % 3 == 0 else line for k, line in enumerate(lines)
    ]
    data.write_text("\n".join(tagged) + "\n")
    ours, theirs = tmp_path / "ours.txt", tmp_path / "theirs.txt"
    common = ["-d", str(data), "--oaa", "3", *flags, "--quiet"]
    assert main(["train", *common, "-p", str(ours)]) == 0
    Path(f"{data}.cache").unlink(missing_ok=True)
    subprocess.run([sys.executable, "-m", "vowpalwabbit", *common, "-p", str(theirs)], check=True)
    mine = ours.read_text().splitlines()
    assert len(mine) == 2000 * (2 if flags else 1)
    assert mine == theirs.read_text().splitlines()
    assert any(line.endswith(" r3") for line in mine)

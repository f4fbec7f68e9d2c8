"""``polars-poly train`` as a drop-in for ``vw``: for each flag the command line takes with
Vowpal Wabbit's meaning (``polars_poly.cli_options.VW_FLAGS``, status ``same``), the same
command run by both programs on the same generated file gives the same progressive table,
summary and ``-p`` predictions (rtol 1e-4), judged against the installed ``vowpalwabbit``."""

from __future__ import annotations

import contextlib
import io
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars_poly as pp
import pytest
from polars_poly.__main__ import main

vowpalwabbit = pytest.importorskip("vowpalwabbit")

RTOL = 1e-4


def write_vw_file(
    path: Path, rows: int, seed: int, *, binary: bool = False, negative: int = -1
) -> Path:
    """Examples of three namespaces with importance weights, tags and a label that a product
    of two namespaces explains; ``binary``: labels ``negative``/+1."""
    rng = np.random.default_rng(seed)
    lines = []
    for k in range(rows):
        a, b = rng.integers(0, 8), rng.integers(0, 5)
        x = rng.normal()
        y = 0.5 * x + (1.0 if (a + b) % 3 == 0 else -0.5) + 0.1 * rng.normal()
        label = (1 if y > 0 else negative) if binary else round(float(y), 4)
        weight = round(float(rng.uniform(0.5, 2.0)), 3)
        tag = f" 'ex{k}" if k % 7 else ""
        lines.append(f"{label} {weight}{tag} |a a{a} x:{x:.4f} |b b{b} |c c{rng.integers(0, 40)}")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("vw_flags")
    return {
        "regression": write_vw_file(folder / "regression.dat", 600, 0),
        "binary": write_vw_file(folder / "binary.dat", 600, 1, binary=True),
        "zero_one": write_vw_file(folder / "zero_one.dat", 600, 2, binary=True, negative=0),
    }


def run_ours(args: list[str], cwd: Path) -> str:
    """Our stderr (the table and summary) for ``polars-poly train ARGS`` run in ``cwd``."""
    err = io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stderr(err):
        assert main(["train", *args]) == 0, err.getvalue()
    return err.getvalue()


def run_vw(args: list[str], cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "vowpalwabbit", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout + done.stderr


def table(text: str) -> list[list[str]]:
    """The progressive table's rows, field by field (a row of seven fields, the first a
    number, and maybe the holdout mark)."""
    rows = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) in (7, 8) and _number(fields[0]) and _number(fields[2]):
            rows.append(fields)
    return rows


def summary(text: str) -> dict[str, str]:
    after = text.split("finished run", 1)
    assert len(after) == 2, text
    pairs = (line.split(" = ", 1) for line in after[1].splitlines() if " = " in line)
    return {key.strip(): value.strip() for key, value in pairs}


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def same(ours: str, theirs: str) -> bool:
    """Two fields agree: numbers within RTOL or within the last printed digit (vw parses and
    sums in single precision; a margin near 0 is a difference of float sums of order 1, so
    5e-5 apart is equal), other text equal."""
    if _number(ours) and _number(theirs):
        decimals = len(theirs.partition(".")[2])
        a, b = float(ours), float(theirs)
        return math.isclose(a, b, rel_tol=RTOL, abs_tol=max(1.5 * 10.0**-decimals, 5e-5))
    # A class's probability, "2:0.446453" (--probabilities' -p): the name, then the number.
    name, colon, value = ours.partition(":")
    their_name, their_colon, their_value = theirs.partition(":")
    if colon and their_colon and name == their_name:
        return same(value, their_value)
    return ours == theirs


def assert_same_lines(ours: list[list[str]], theirs: list[list[str]], what: str) -> None:
    assert len(ours) == len(theirs), f"{what}: {len(ours)} rows, vw {len(theirs)}"
    for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert len(a) == len(b) and all(map(same, a, b)), f"{what} row {k}: {a} vs vw {b}"


def compare(args: list[str], folder: Path, outputs: tuple[str, ...] = ()) -> None:
    """Runs ``args`` with both programs in two copies of ``folder``'s files; compares the
    table, the summary and each output file."""
    ours_dir, vw_dir = folder / "ours", folder / "vw"
    for directory in (ours_dir, vw_dir):
        directory.mkdir(exist_ok=True)
    ours, theirs = run_ours(args, ours_dir), run_vw(args, vw_dir)
    assert_same_lines(table(ours), table(theirs), "table")
    mine, vws = summary(ours), summary(theirs)
    assert set(vws) <= set(mine), f"summary lines missing: {set(vws) - set(mine)}"
    for key, value in vws.items():
        assert same(mine[key].removesuffix(" h"), value.removesuffix(" h")), (key, mine, vws)
        assert mine[key].endswith(" h") == value.endswith(" h"), (key, mine[key], value)
    for name in outputs:
        lines = [(ours_dir / name).read_text().split("\n"), (vw_dir / name).read_text().split("\n")]
        assert_same_lines(*([line.split() for line in ls] for ls in lines), what=name)


@pytest.mark.parametrize(
    "flags",
    [
        [],
        ["--noconstant"],
        ["-b", "12"],
        ["-b", "7"],
        ["--link", "poisson", "-b", "7"],
        ["-l", "0.3", "--power_t", "0.4", "--initial_t", "2"],
        ["--l2", "1e-5"],
        ["--l1", "1e-4"],
        ["--invariant"],
        ["--normalized", "--invariant"],
        ["--adaptive", "--normalized", "--invariant"],
        ["--random_seed", "7"],
        ["--passes", "3", "-c", "-k"],
        ["--passes", "4", "-c", "-k", "--holdout_period", "3"],
        ["--passes", "3", "-c", "-k", "--holdout_off"],
        ["--passes", "6", "-c", "-k", "--early_terminate", "1"],
        ["-P", "1"],
        ["-P", "50"],
        ["--progress", "1.5"],
        ["-q", "ab"],
        ["-q", "a:"],
        ["--interactions", "abc"],
        ["--cubic", "abc", "-q", "ab"],
        ["--interactions", "bbc", "--noconstant"],
        ["--initial_weight", "0.5"],
        ["--keep", "ab"],
        ["--ignore", "c"],
        ["--hash", "all"],
        ["--loss_function", "quantile", "--quantile_tau", "0.25"],
        ["--loss_function", "hinge"],
        ["--save_resume", "--predict_only_model", "--invariant"],
    ],
    ids=lambda flags: " ".join(flags) or "defaults",
)
def test_a_regression_flag_gives_vowpal_wabbits_output(data, tmp_path, flags) -> None:
    (tmp_path / "d.dat").write_bytes(data["regression"].read_bytes())
    compare(["-d", "../d.dat", "-p", "p.txt", *flags], tmp_path, ("p.txt",))


@pytest.mark.parametrize(
    "flags",
    [
        ["--loss_function", "logistic"],
        ["--loss_function", "logistic", "-q", "ab", "--passes", "2", "-c", "-k"],
        ["--loss_function", "hinge"],
        ["--binary"],
        ["--binary", "--loss_function", "logistic", "--passes", "3", "-c", "-k"],
        ["--link", "logistic", "--loss_function", "logistic"],
        ["--link", "glf1", "--loss_function", "logistic", "-b", "9"],
    ],
    ids=" ".join,
)
def test_a_classification_flag_gives_vowpal_wabbits_output(data, tmp_path, flags) -> None:
    (tmp_path / "d.dat").write_bytes(data["binary"].read_bytes())
    compare(["-d", "../d.dat", "-p", "p.txt", *flags], tmp_path, ("p.txt",))


def test_logistic_labels_of_0_and_1_are_vowpal_wabbits_soft_labels(data, tmp_path) -> None:
    """``vw --loss_function logistic`` reads a label between -1 and +1 as a soft label (0:
    half positive, half negative); so does train, a regressor of margins whose ``predict
    --probabilities`` is the logistic of the margin."""
    (tmp_path / "d.dat").write_bytes(data["zero_one"].read_bytes())
    args = ["-d", "../d.dat", "--loss_function", "logistic", "-p", "p.txt", "-f", "m.model"]
    compare(args, tmp_path, ("p.txt",))
    ours = tmp_path / "ours"
    probabilities = ours / "probabilities.txt"
    command = ["predict", "-d", str(tmp_path / "d.dat"), "-i", str(ours / "m.model")]
    assert main([*command, "--link", "logistic", "-p", str(probabilities)]) == 0
    margins = ours / "margins.txt"
    assert main([*command, "-p", str(margins)]) == 0
    expected = 1 / (1 + np.exp(-np.loadtxt(margins)))
    np.testing.assert_allclose(np.loadtxt(probabilities), expected, rtol=1e-5)


@pytest.mark.parametrize(
    "flags",
    [["--ngram", "2"], ["--ngram", "t3", "--skips", "t1"], ["--ngram", "2", "-q", "tu"]],
    ids=" ".join,
)
def test_ngrams_of_text_give_vowpal_wabbits_output(tmp_path, flags) -> None:
    """Lines of words, some repeated: each occurrence is a feature of its own, learned in
    file order (as ``vw`` learns them, not summed into one)."""
    rng = np.random.default_rng(5)
    words = [f"w{k}" for k in range(30)]
    lines = []
    for _ in range(400):
        text = " ".join(rng.choice(words, size=rng.integers(2, 9), replace=True))
        label = 1 if "w3" in text else -1
        lines.append(f"{label} |t {text} |u u{rng.integers(0, 4)}")
    (tmp_path / "d.dat").write_text("\n".join(lines) + "\n")
    compare(["-d", "../d.dat", "-p", "p.txt", *flags], tmp_path, ("p.txt",))


def test_testonly_scores_a_saved_model_as_vw_scores_its_own(data, tmp_path) -> None:
    """``-t -i MODEL -p``: each program scores the model it trained; nothing is learned (the
    model file is unchanged) and the table is of test examples."""
    (tmp_path / "d.dat").write_bytes(data["regression"].read_bytes())
    compare(["-d", "../d.dat", "-q", "bc", "-f", "m.model"], tmp_path)
    before = (tmp_path / "ours" / "m.model").read_bytes()
    compare(["-d", "../d.dat", "-t", "-i", "m.model", "-p", "t.txt"], tmp_path, ("t.txt",))
    assert (tmp_path / "ours" / "m.model").read_bytes() == before


def test_quiet_prints_nothing(data, tmp_path) -> None:
    assert run_ours(["-d", str(data["regression"]), "--quiet"], tmp_path) == ""


def test_unlabeled_examples_are_scored_not_learned(tmp_path) -> None:
    """An example without a label is predicted (its line in ``-p``), counted as vw counts it,
    and not learned."""
    # vw's header rule too: a last field touching the '|' (or ending the line) is the tag.
    lines = ["1 |a x", "|a x y", "0.5 |a y", "|a z", "2 |a x z", "1 2|a x", "3"] * 40
    (tmp_path / "d.dat").write_text("\n".join(lines) + "\n")
    compare(["-d", "../d.dat", "-p", "p.txt"], tmp_path, ("p.txt",))


def test_refused_vowpal_wabbit_flags_exit_2_naming_the_flag(data, capsys) -> None:
    for flag in (["--ignore_linear", "a"], ["-r", "x"]):
        with pytest.raises(SystemExit) as usage:
            main(["train", "-d", str(data["regression"]), *flag])
        assert usage.value.code == 2
        assert flag[0] in capsys.readouterr().err
    # --binary and --link are shown by the engine's run of VW text: refused where it is not.
    for flag in (["--binary"], ["--link", "glf1"]):
        assert main(["train", "-d", str(data["binary"]), "--oaa", "2", *flag]) == 2
        assert flag[0] in capsys.readouterr().err


def test_repeated_and_colliding_features_are_learned_one_by_one_as_vw_learns_them(
    tmp_path,
) -> None:
    """``|a x x:2 y``: three features, learned in file order; at ``-b 4`` most features of a
    line share slots, where the order of their updates shows."""
    rng = np.random.default_rng(9)
    lines = []
    for _ in range(300):
        names = rng.choice([f"f{k}" for k in range(12)], size=rng.integers(1, 7))
        values = rng.uniform(0.2, 3.0, size=len(names)).round(3)
        features = " ".join(f"{n}:{v}" for n, v in zip(names, values, strict=True))
        lines.append(f"{rng.normal():.4f} |a {features} |b {names[0]}")
    (tmp_path / "d.dat").write_text("\n".join(lines) + "\n")
    for bits in ("4", "18"):
        compare(["-d", "../d.dat", "-b", bits, "-p", "p.txt"], tmp_path, ("p.txt",))


def test_the_docs_list_every_flag_as_the_table_does() -> None:
    from polars_poly.cli_options import flag_table

    from tests.conftest import REPO

    assert flag_table() in (REPO / "docs" / "cli.md").read_text()


def test_a_namespace_first_seen_late_or_never_reads_as_vw_reads_it(tmp_path) -> None:
    """A namespace that first appears on the last line is learned (the whole file's namespaces
    are found before reading), and a file where a namespace of the model never occurs is
    scored with that namespace empty, in ``-t`` and in ``predict``."""
    rng = np.random.default_rng(3)
    lines = [
        f"{rng.normal():.3f} |a x{rng.integers(0, 9)} |b y{rng.integers(0, 5)}" for _ in range(300)
    ]
    lines.append("1.5 |a x1 |z late")
    (tmp_path / "train.dat").write_text("\n".join(lines) + "\n")
    compare(
        ["-d", "../train.dat", "-q", "ab", "-f", "m.model", "-p", "p.txt"], tmp_path, ("p.txt",)
    )
    test_lines = [f"{rng.normal():.3f} |a x{rng.integers(0, 9)}" for _ in range(50)]
    (tmp_path / "test.dat").write_text("\n".join(test_lines) + "\n")
    compare(["-d", "../test.dat", "-t", "-i", "m.model", "-p", "t.txt"], tmp_path, ("t.txt",))
    out = tmp_path / "ours" / "predicted.txt"
    args = ["predict", "-d", str(tmp_path / "test.dat"), "-i", str(tmp_path / "ours" / "m.model")]
    assert main([*args, "-p", str(out)]) == 0
    np.testing.assert_allclose(
        np.loadtxt(out), np.loadtxt(tmp_path / "ours" / "t.txt"), rtol=1e-6, atol=1e-6
    )


def test_an_example_whose_features_overflow_is_predicted_0_and_not_learned_as_vw_does(
    tmp_path,
) -> None:
    """A feature of 1e9 in a 5-way cross overflows single precision, as does a value beyond it
    (1e39, read as infinity): vw predicts 0 for that example, learns nothing from it and goes
    on; so does train, with a warning naming it. The Python estimators refuse such a row instead
    (test_reliability)."""
    rng = np.random.default_rng(5)
    lines = ["1 |a b:1000000000", "1 |a b:1000000000 c", "-1 |a b:1", "2 |a d:1e20 c"]
    lines += ["1 |a e:1e39 c", "-1 |a e:-1e39"]
    lines += [f"{rng.normal():.3f} |a b:{rng.uniform(0.5, 1.5):.3f} c" for _ in range(40)]
    (tmp_path / "d.dat").write_text("\n".join(lines) + "\n")
    for flags in ([], ["--interactions", "aaaaa", "--noconstant"], ["--interactions", "aaa"]):
        compare(["-d", "../d.dat", "-p", "p.txt", *flags], tmp_path, ("p.txt",))
    warnings = [
        line
        for line in run_ours(["-d", "d.dat", "--interactions", "aaaaa"], tmp_path).splitlines()
        if line.startswith("[warning]")
    ]
    examples = [w.split(":")[0] for w in warnings]
    assert examples == [f"[warning] example {n}" for n in (1, 2, 4, 5, 6)], warnings
    assert all("predicted 0 and not learned" in w for w in warnings)


@pytest.mark.parametrize("flags", [[], ["--probabilities", "--loss_function", "logistic"]])
def test_oaa_predicts_an_overflowing_example_as_vw_and_learns_on(tmp_path, flags) -> None:
    """``--oaa``: an example with a value beyond single precision (1e39) or whose square
    overflows (1e20) scores 0 for every class, so vw predicts the first class, learns nothing
    from it and goes on; so does train, warning once per example (not once per class)."""
    rng = np.random.default_rng(8)
    lines = multiclass_lines(rng, 60, [1, 2, 3])
    lines[1] = "2 |w a:1e39 c1"
    lines[5] = "3 |w b:1e20"
    (tmp_path / "d.dat").write_text("\n".join(lines) + "\n")
    compare(["-d", "../d.dat", "--oaa", "3", "-p", "p.txt", *flags], tmp_path, ("p.txt",))
    report = run_ours(["-d", "d.dat", "--oaa", "3"], tmp_path)
    warned = [line.split(":")[0] for line in report.splitlines() if line.startswith("[warning]")]
    assert warned == ["[warning] example 2", "[warning] example 6"], report


def test_a_label_with_more_after_its_number_is_read_as_vw_reads_it(tmp_path) -> None:
    """vw's simple label reads a label field up to its first ':' (``2:0``, a cost-sensitive
    label's form, is label 2); train reads it so too and warns once, naming the first line."""
    rng = np.random.default_rng(6)
    draw = rng.integers
    lines = [f"{draw(1, 3)}:{draw(0, 2)} |s w{draw(0, 9)} |t v{draw(0, 5)}" for _ in range(80)]
    (tmp_path / "d.dat").write_text("\n".join(lines) + "\n")
    compare(["-d", "../d.dat", "-q", "st", "-p", "p.txt"], tmp_path, ("p.txt",))
    warnings = [
        line
        for line in run_ours(["-d", "d.dat"], tmp_path).splitlines()
        if line.startswith("[warning]")
    ]
    first = lines[0].split()[0]
    expected = f'[warning] line 1 (and 79 other lines so far): header field "{first}" read as'
    assert len(warnings) == 1 and warnings[0].startswith(expected), warnings
    with pytest.warns(UserWarning, match=r"line 1 \(and 79 other lines so far\)"):
        frame = pp.read_vw(tmp_path / "d.dat")
    assert frame["label"].to_list() == [float(line.split(":")[0]) for line in lines]


def test_the_cache_gives_the_run_of_the_text_and_is_read_without_it(data, tmp_path, capsys) -> None:
    """``-c`` writes ``DATA.cache`` while reading the text; a second run reads the cache (even
    with the text gone) and gives the same table, summary, predictions and model; passes after
    the first read the cache; ``-k`` writes it again."""
    source = tmp_path / "train.dat"
    source.write_bytes(data["binary"].read_bytes())
    flags = ["--loss_function", "logistic", "-q", "ab", "--passes", "3", "--holdout_period", "7"]

    def train(name: str, *extra: str) -> tuple[str, str]:
        report = run_ours(["-d", "train.dat", *flags, "-p", f"{name}.p", *extra], tmp_path)
        return report, (tmp_path / f"{name}.p").read_text()

    plain = train("plain", "-f", "plain.model")
    assert not (tmp_path / "train.dat.cache").exists()
    writing = train("writing", "-c", "-f", "writing.model")
    assert (tmp_path / "train.dat.cache").exists()
    assert writing == plain
    source.rename(tmp_path / "elsewhere.dat")
    reading = train("reading", "-c", "-f", "reading.model")
    assert reading == plain
    scores = []
    for name in ("plain", "reading"):
        out = tmp_path / f"{name}.scores"
        model = str(tmp_path / f"{name}.model")
        assert (
            main(["predict", "-d", str(tmp_path / "elsewhere.dat"), "-i", model, "-p", str(out)])
            == 0
        )
        scores.append(out.read_text())
    assert scores[0] == scores[1]
    # -k with the text gone: the cache is removed, and the missing text is the error.
    capsys.readouterr()
    with contextlib.chdir(tmp_path):
        assert main(["train", "-d", "train.dat", "-c", "-k", *flags]) == 1
    assert "train.dat" in capsys.readouterr().err
    assert not (tmp_path / "train.dat.cache").exists()


def test_a_cache_of_vowpal_wabbits_own_is_refused_by_name(data, tmp_path, capsys) -> None:
    (tmp_path / "train.dat").write_bytes(data["regression"].read_bytes())
    run_vw(["-d", "train.dat", "-c", "--quiet"], tmp_path)
    assert (tmp_path / "train.dat.cache").exists()
    with contextlib.chdir(tmp_path):
        assert main(["train", "-d", "train.dat", "-c", "--quiet"]) == 1
    assert "not a polars-poly cache" in capsys.readouterr().err
    # -k writes ours over it.
    compare(["-d", "../train.dat", "-c", "-k", "-p", "p.txt"], tmp_path, ("p.txt",))


def test_continuing_a_model_on_the_rest_of_a_file_is_one_longer_run(data, tmp_path) -> None:
    """``-i`` continues the saved model where it stopped: training on the first half, then on
    the second with ``-i``, predicts the second half as one run over the whole file does, and
    the second run's summary counts only its own examples."""
    lines = data["binary"].read_text().splitlines(keepends=True)
    (tmp_path / "all.dat").write_text("".join(lines))
    (tmp_path / "first.dat").write_text("".join(lines[:250]))
    (tmp_path / "second.dat").write_text("".join(lines[250:]))
    flags = ["--loss_function", "logistic", "-q", "ab"]
    run_ours(["-d", "all.dat", *flags, "-p", "all.p"], tmp_path)
    run_ours(["-d", "first.dat", *flags, "-f", "first.model"], tmp_path)
    report = run_ours(["-d", "second.dat", "-i", "first.model", "-p", "second.p"], tmp_path)
    whole = (tmp_path / "all.p").read_text().splitlines()
    assert (tmp_path / "second.p").read_text().splitlines() == whole[250:]
    assert summary(report)["number of examples"] == str(len(lines) - 250)


def model_lines(path: Path) -> list[list[str]]:
    """A readable model's lines, less the two that name the program that wrote it (``Version``,
    and ``Checksum``, vw's hash of its binary model file)."""
    lines = path.read_text().splitlines()[1:]
    return [re.split(r"[\s:]+", line) for line in lines if not line.startswith("Checksum: ")]


@pytest.mark.parametrize(
    "flags",
    [
        [],
        ["-b", "9", "--l2", "1e-4", "--l1", "1e-5"],
        ["--predict_only_model"],
        ["-q", "ab", "--noconstant", "--link", "logistic"],
        ["--interactions", "abc", "-q", "aa"],
        ["--keep", "ab", "--noconstant"],
    ],
    ids=lambda flags: " ".join(flags) or "defaults",
)
def test_readable_and_invert_hash_models_are_vws(data, tmp_path, flags) -> None:
    """``--readable_model`` and ``--invert_hash`` write vw's layout: the header, the run's state
    and every nonzero slot (named with ``--invert_hash``), line by line as vw writes them."""
    (tmp_path / "d.dat").write_bytes(data["regression"].read_bytes())
    args = ["-d", "../d.dat", "--readable_model", "r.txt", "--invert_hash", "i.txt", *flags]
    compare(args, tmp_path)
    for name in ("r.txt", "i.txt"):
        ours, theirs = (model_lines(tmp_path / side / name) for side in ("ours", "vw"))
        assert len(ours) > 20
        assert_same_lines(ours, theirs, name)
    named = (tmp_path / "ours" / "i.txt").read_text()
    assert "Constant:" in named or "--noconstant" in flags
    assert "a^x:" in named


def test_no_stdin_without_a_model_writes_a_new_one_as_vw(tmp_path) -> None:
    compare(["--no_stdin", "--readable_model", "r.txt", "-f", "m.model"], tmp_path)
    ours, theirs = (model_lines(tmp_path / side / "r.txt") for side in ("ours", "vw"))
    assert_same_lines(ours, theirs, "r.txt")
    model = pp.load_model(tmp_path / "ours" / "m.model")
    assert model.n_examples_ == 0


def test_invert_hash_is_refused_where_names_are_not_kept(data, capsys) -> None:
    for flags in (["--ngram", "2"], ["--stage_poly"], ["--oaa", "2"], ["-c"]):
        args = ["train", "-d", str(data["binary"]), "--invert_hash", "x", *flags]
        assert main(args) == 2, flags
        assert "--invert_hash" in capsys.readouterr().err


def test_a_model_keeps_its_reader_flags_as_vw_does(tmp_path) -> None:
    """A model trained with ``--ngram``/``--skips``/``--keep`` reads files with them again:
    ``-t -i MODEL`` without the flags scores as ``vw`` does from its model."""
    rng = np.random.default_rng(3)
    words = [f"w{k}" for k in range(12)]
    lines = [
        f"{1 if k % 3 else -1} |t {' '.join(rng.choice(words, size=5))} |u u{k % 4} |v v"
        for k in range(300)
    ]
    (tmp_path / "d.dat").write_text("\n".join(lines) + "\n")
    flags = ["--ngram", "t2", "--skips", "t1", "--keep", "tu"]
    compare(["-d", "../d.dat", "-f", "m.model", *flags], tmp_path)
    compare(["-d", "../d.dat", "-t", "-i", "m.model", "-p", "p.txt"], tmp_path, ("p.txt",))


def audit_lines(text: str) -> list[list[str]]:
    """``--audit``'s stdout, less vw's log messages: each line's fields (a feature line's
    features split at ``:`` and ``@``)."""
    kept = [line for line in text.splitlines() if line and not line.startswith("[")]
    kept = [line for line in kept if not line.startswith("You can use")]
    return [
        re.split(r"[\t:@]+", line.strip("\t")) if "\t" in line else line.split() for line in kept
    ]


@pytest.mark.parametrize(
    "flags",
    [
        [],
        ["-q", "ab", "--l2", "1e-5"],
        ["--noconstant", "--interactions", "abc", "-q", "aa"],
        ["--passes", "2", "-c", "-k", "--holdout_off", "--sgd"],
        ["--loss_function", "logistic", "--binary"],
        ["-q", "ab", "--passes", "2", "-c", "-k", "--holdout_off"],
    ],
    ids=lambda flags: " ".join(flags) or "defaults",
)
def test_audit_prints_each_example_as_vw_does(data, tmp_path, flags) -> None:
    """``--audit``: each example's prediction, then its features named, with slot, value,
    weight and squared-gradient sum before it is learned, largest |w x| first; from a cache
    (a second pass) without names, as vw's."""
    lines = data["binary"].read_text().splitlines()[:60]
    (tmp_path / "d.dat").write_text("\n".join(lines) + "\n")
    args = ["-d", "d.dat", "--audit", *flags]
    out = io.StringIO()
    with contextlib.chdir(tmp_path), contextlib.redirect_stdout(out):
        assert main(["train", "--quiet", *args]) == 0
    done = subprocess.run(
        [sys.executable, "-m", "vowpalwabbit", "--quiet", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    ours, theirs = audit_lines(out.getvalue()), audit_lines(done.stdout)
    assert len(ours) == 2 * 60 * (2 if "--passes" in flags else 1)
    assert_same_lines(ours, theirs, "audit")


def multiclass_lines(rng: np.random.Generator, rows: int, labels: list[int]) -> list[str]:
    """Rows whose class depends on which of four words they hold, with noise words (some
    twice in a row: vw learns each occurrence, in turn)."""
    lines = []
    for _ in range(rows):
        k = int(rng.integers(0, len(labels)))
        noise = " ".join(f"n{rng.integers(0, 30)}" for _ in range(3))
        lines.append(f"{labels[k]} |w c{k} {noise} |v x:{rng.normal():.3f}")
    return lines


@pytest.mark.parametrize(
    ("labels", "flags"),
    [
        ([1, 2, 3, 4], ["--loss_function", "logistic"]),
        ([1, 2, 3, 4], ["--loss_function", "logistic", "--link", "logistic"]),
        ([0, 1, 2, 3], ["--loss_function", "logistic"]),
        ([0, 1, 2, 3], ["--loss_function", "logistic", "--indexing", "0"]),
        ([1, 2, 3, 4], []),  # squared loss: vw warns, and links the scores all the same
    ],
)
def test_oaa_probabilities_give_vowpal_wabbits_output(tmp_path, labels, flags) -> None:
    """``--oaa 4 --probabilities``: the table's predicted class with its probability
    (``2(54%)``), each class's probability in ``-p``, the summary's average multiclass log
    loss; labels 0..3 when the first example's is 0 (or with ``--indexing 0``)."""
    rng = np.random.default_rng(11)
    lines = multiclass_lines(rng, 300, labels)
    lines[0] = f"{labels[0]} |w c0 n1"  # the first label decides the indexing
    (tmp_path / "d.dat").write_text("\n".join(lines) + "\n")
    args = ["-d", "../d.dat", "--oaa", "4", "--probabilities", "-p", "p.txt", *flags]
    compare(args, tmp_path, ("p.txt",))
    written = (tmp_path / "ours" / "p.txt").read_text().splitlines()
    assert written[0].split() == [f"{c}:0.25" for c in labels]


@pytest.mark.parametrize(
    ("first", "later", "flags"),
    [
        # A first 0 after 1..K-1: vw numbers 0..K-1 from there (the rows before stay 1..K).
        ([1, 2], [0, 1, 2, 3], ["--probabilities", "--loss_function", "logistic"]),
        ([1, 2], [0, 1, 2, 3], []),
        # A first K: 1..K for good.
        ([1, 2], [4, 1, 2, 3], ["--probabilities", "--loss_function", "logistic"]),
    ],
)
def test_oaa_numbers_its_classes_as_vw_decides_while_reading(tmp_path, first, later, flags) -> None:
    """Without ``--indexing``, vw numbers ``--oaa``'s classes 1..K until its first label 0 or
    K; a 0 makes them 0..K-1 from that example on. A label out of the decided range (4 of
    0..3, 0 of 1..4) is learned as no class's, an error whatever the prediction, with a
    warning. The table, the summary and ``-p`` as vw's (its test 360)."""
    rng = np.random.default_rng(5)
    lines = [f"{label} |w c{label} n{i}" for i, label in enumerate(first)]
    lines += multiclass_lines(rng, 200, later)
    out_of_range = 4 if later[0] == 0 else 0
    lines[40] = f"{out_of_range} |w c1 n3"
    (tmp_path / "d.dat").write_text("\n".join(lines) + "\n")
    args = ["-d", "../d.dat", "--oaa", "4", "-p", "p.txt", *flags]
    compare(args, tmp_path, ("p.txt",))


def test_probabilities_and_indexing_need_oaa(tmp_path) -> None:
    (tmp_path / "d.dat").write_text("1 |w a\n-1 |w b\n")
    for flag in (["--probabilities"], ["--indexing", "0"]):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            assert main(["train", "-d", str(tmp_path / "d.dat"), *flag]) == 2
        assert "give --oaa K" in err.getvalue()

"""Acceptance test of ``polars-poly train`` against Vowpal Wabbit's own test suite.

Run (from the repository root, after ``make build``)::

    .venv/bin/python -m benches.suite.vw_suite --vw-repo /path/to/vowpal_wabbit
    .venv/bin/python -m benches.suite.vw_suite --vw-repo /path/to/vowpal_wabbit --list
    .venv/bin/python -m benches.suite.vw_suite --ids 3,7 --json out.json   # VW_REPO from the env

It reads ``test/core.vwtest.json`` of a checkout of Vowpal Wabbit, selects the tests whose every
flag ``polars_poly.cli_options.VW_FLAGS`` supports ("same" or "different"), runs each with
``vw`` (``python -m vowpalwabbit``) and with ``python -m polars_poly train`` in two scratch
copies of VW's ``test/`` folder, and compares what the two print and write: the progressive
table, the summary after "finished run", the predictions and other output files, and stdout
less vw's log messages (``[info]``, ``[warning]``: notes to the user, not output). It
compares against a live ``vw``, not against VW's reference files, so that both run the same
data with the same version. The exit code is 0 whatever the results (it is a report), 2 on bad
arguments.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from benches.common import REPO

RTOL = 1e-4
ATOL = 1e-6

#: Flags that never take a value, so that a token after them is a positional (a data file).
#: Everything else takes the next token when it is not itself a flag.
VALUELESS = frozenset(
    """
    -k --kill_cache -c --cache -t --testonly --quiet --holdout_off --noconstant --invariant
    --predict_only_model --save_resume --no_stdin --binary --stage_poly -a --audit -h --help
    --sgd --adaptive --normalized --bfgs --ftrl --coin --json --dsjson --csv --onethread
    --sparse_weights --dont_output_best_constant --probabilities --compete --hessian_on
    --preserve_performance_counters --driver_output_off --ksvm --noop --print
    """.split()
)
MODEL_IN = ("-i", "--initial_regressor")
MODEL_OUT = ("-f", "--final_regressor")
DATA = ("-d", "--data")

TABLE_COLUMNS = (
    "average loss",
    "since last",
    "example counter",
    "example weight",
    "current label",
    "current predict",
    "current features",
    "holdout mark",
)

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf|infinity)", re.I)
_NEGATIVE = re.compile(r"-[\d.]")  # a negative number (or "-1:0.5"), never a flag


class FlagEntry(Protocol):
    """What the script reads of a ``cli_options.VwFlag``."""

    @property
    def status(self) -> str: ...

    @property
    def values(self) -> tuple[str, ...] | None: ...


FlagLookup = Callable[[str], FlagEntry | None]


def load_flag_table() -> FlagLookup:
    """``cli_options.vw_flag``, loaded from its file: importing the package would need the built
    extension, and ``--list`` must work without it."""
    path = REPO / "python" / "polars_poly" / "cli_options.py"
    name = "_vw_suite_cli_options"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    lookup: FlagLookup = module.vw_flag
    return lookup


# --- Commands and selection ------------------------------------------------------------------


def is_flag(token: str) -> bool:
    """A flag starts with '-'; a negative number (or '-' alone, standard input) does not count."""
    return token.startswith("-") and len(token) > 1 and not _NEGATIVE.match(token)


def parse_command(tokens: Sequence[str]) -> tuple[list[tuple[str, str | None]], list[str]]:
    """The (flag, value) pairs of a VW command line, and its positional tokens (data files)."""
    flags: list[tuple[str, str | None]] = []
    positionals: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not is_flag(token):
            positionals.append(token)
        elif token.startswith("--") and "=" in token:
            name, value = token.split("=", 1)
            flags.append((name, value))
        elif not token.startswith("--") and len(token) > 2:
            flags.append((token[:2], token[2:]))  # -q::, -P1: boost's attached short value
        elif token not in VALUELESS and i < len(tokens) and not is_flag(tokens[i]):
            flags.append((token, tokens[i]))
            i += 1
        else:
            flags.append((token, None))
    return flags, positionals


@dataclass
class VwTest:
    """One test of core.vwtest.json that has a ``vw_command``."""

    id: int
    command: str
    args: list[str]
    flags: list[tuple[str, str | None]]
    diff_files: dict[str, str]
    depends_on: list[int]

    def values(self, names: Iterable[str]) -> list[str]:
        """The values given to any spelling in ``names``."""
        wanted = set(names)
        return [v for f, v in self.flags if f in wanted and v is not None]


def load_tests(path: Path) -> tuple[list[VwTest], list[int]]:
    """The tests with a ``vw_command`` (in dependency order) and the ids of the others."""
    raw: list[dict[str, Any]] = json.loads(path.read_text())
    tests: list[VwTest] = []
    skipped: list[int] = []
    for entry in raw:
        if "vw_command" not in entry:
            skipped.append(int(entry["id"]))
            continue
        args = shlex.split(entry["vw_command"])
        flags, positionals = parse_command(args)
        flags += [("-d", p) for p in positionals]  # `vw file.dat` reads file.dat
        tests.append(
            VwTest(
                id=int(entry["id"]),
                command=entry["vw_command"],
                args=args,
                flags=flags,
                diff_files=dict(entry.get("diff_files", {})),
                depends_on=[int(d) for d in entry.get("depends_on", [])],
            )
        )
    return dependency_order(tests), skipped


def dependency_order(tests: list[VwTest]) -> list[VwTest]:
    """The tests, each after its dependencies (ids order otherwise)."""
    by_id = {t.id: t for t in tests}
    done: set[int] = set()
    out: list[VwTest] = []

    def visit(test: VwTest, path: tuple[int, ...]) -> None:
        if test.id in done or test.id in path:
            return
        for dep in test.depends_on:
            if dep in by_id:
                visit(by_id[dep], (*path, test.id))
        done.add(test.id)
        out.append(test)

    for test in sorted(tests, key=lambda t: t.id):
        visit(test, ())
    return out


def unsupported_flags(
    test: VwTest, lookup: FlagLookup, also: frozenset[str] = frozenset()
) -> list[str]:
    """The test's flags the table does not support, as ``--name`` or ``--name value`` (a value
    outside the entry's ``values``); ``also`` names extra ones taken as supported."""
    missing: list[str] = []
    for name, value in test.flags:
        entry = lookup(name)
        if entry is None or entry.status not in ("same", "different"):
            key = name
        elif entry.values is not None and value not in entry.values:
            key = f"{name} {value}"
        else:
            continue
        if key not in also and key not in missing:
            missing.append(key)
    return missing


def transitive_deps(test: VwTest, by_id: dict[int, VwTest]) -> list[VwTest]:
    """All the tests ``test`` depends on, directly or not."""
    seen: dict[int, VwTest] = {}
    stack = list(test.depends_on)
    while stack:
        dep = stack.pop()
        if dep in seen or dep not in by_id:
            continue
        seen[dep] = by_id[dep]
        stack.extend(by_id[dep].depends_on)
    return list(seen.values())


def select(
    tests: list[VwTest], lookup: FlagLookup, also: frozenset[str] = frozenset()
) -> dict[int, str | None]:
    """Each test's id -> None when selected, else why not. ``tests`` in dependency order."""
    by_id = {t.id: t for t in tests}
    why: dict[int, str | None] = {}
    for test in tests:
        missing = unsupported_flags(test, lookup, also)
        if missing:
            why[test.id] = "unsupported: " + ", ".join(missing)
            continue
        bad = [d for d in test.depends_on if why.get(d, "not a vw_command test") is not None]
        if bad:
            why[test.id] = f"depends on unselected {', '.join(map(str, bad))}"
            continue
        written = {
            os.path.normpath(f) for d in transitive_deps(test, by_id) for f in d.values(MODEL_OUT)
        }
        foreign = [m for m in test.values(MODEL_IN) if os.path.normpath(m) not in written]
        if foreign:
            why[test.id] = f"reads a model no dependency writes: {', '.join(foreign)}"
            continue
        why[test.id] = None
    return why


def blocking_flags(
    tests: list[VwTest], lookup: FlagLookup, why: dict[int, str | None]
) -> list[tuple[str, int, int, int]]:
    """For each unsupported flag: (flag, tests it blocks alone, tests it appears in among the
    unselected, tests that supporting it alone would admit), most blocking first."""
    alone: Counter[str] = Counter()
    appears: Counter[str] = Counter()
    for test in tests:
        if why[test.id] is None:
            continue
        missing = unsupported_flags(test, lookup)
        appears.update(missing)
        if len(missing) == 1:
            alone[missing[0]] += 1
    selected = sum(1 for w in why.values() if w is None)
    rows = []
    for flag in appears:
        admitted = select(tests, lookup, frozenset([flag]))
        gained = sum(1 for w in admitted.values() if w is None) - selected
        rows.append((flag, alone[flag], appears[flag], gained))
    rows.sort(key=lambda r: (-r[1], -r[2], -r[3], r[0]))
    return rows


# --- Parsing and comparing outputs ----------------------------------------------------------


def number(token: str) -> float | None:
    """The token's value when it is a number (as VW prints them), else None."""
    return float(token) if _NUMBER.fullmatch(token) else None


def _last_digit(token: str) -> float:
    """One unit of the token's last printed decimal (0 for integers and exponents)."""
    if "." not in token or "e" in token.lower():
        return 0.0
    return float(10.0 ** -len(token.split(".", 1)[1]))


def close(ours: str, theirs: str) -> bool:
    """Two printed numbers agree within RTOL (ATOL near 0), plus half a unit of each one's last
    printed decimal: VW rounds its columns to 4 or 6 decimals, so values that agree within RTOL
    can still print one digit apart."""
    a, b = number(ours), number(theirs)
    if a is None or b is None:
        return ours == theirs
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
        return (math.isnan(a) and math.isnan(b)) or a == b
    rounding = 0.5 * (_last_digit(ours) + _last_digit(theirs))
    tol = max(ATOL, RTOL * max(abs(a), abs(b))) + rounding
    return abs(a - b) <= tol * (1 + 1e-9)


def compare_tokens(ours: str, theirs: str) -> bool:
    """Two tokens agree: numbers within tolerance, text equal; ``1:0.25,2:0.75`` part by part."""
    if close(ours, theirs):
        return True
    a, b = re.split(r"([:,])", ours), re.split(r"([:,])", theirs)
    return len(a) > 1 and len(a) == len(b) and all(close(x, y) for x, y in zip(a, b, strict=True))


def compare_line(ours: str, theirs: str) -> str | None:
    """None when two lines agree token by token, else the first differing token."""
    a, b = ours.split(), theirs.split()
    if len(a) != len(b):
        return f"{len(a)} tokens vs {len(b)}"
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if not compare_tokens(x, y):
            return f"token {i + 1}: ours {x!r} vs vw {y!r}"
    return None


def _lines(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def compare_outputs(ours: str, theirs: str) -> str | None:
    """A predictions (or other output) file, or stdout: None when they agree line by line and
    token by token, else the first difference."""
    a, b = _lines(ours), _lines(theirs)
    for n, (x, y) in enumerate(zip(a, b, strict=False), 1):
        diff = compare_line(x, y)
        if diff is not None:
            return f"line {n}: {diff} (ours {x.strip()!r}, vw {y.strip()!r})"
    if len(a) != len(b):
        return f"{len(a)} lines vs {len(b)}"
    return None


def _before_summary(text: str) -> list[str]:
    lines = text.splitlines()
    for n, line in enumerate(lines):
        if line.strip() == "finished run":
            return lines[:n]
    return lines


def _is_int(token: str) -> bool:
    return re.fullmatch(r"\d+", token) is not None


def table_rows(text: str) -> list[list[str]]:
    """The progressive table's rows in stderr, as token lists (a trailing "h" kept: holdout).

    A row: loss and since-last numbers (or "n.a."/"unknown"), an integer example counter, a
    numeric weight, label and prediction (any token: "unknown", "3", "0:1"; multilabel leaves
    one blank), an integer feature count. The header lines and VW's option echo match none."""
    rows: list[list[str]] = []
    for line in _before_summary(text):
        tokens = line.split()
        core = tokens[:-1] if tokens and tokens[-1] == "h" else tokens
        if (
            len(core) in (6, 7)
            and all(number(t) is not None or t in ("n.a.", "unknown") for t in core[:2])
            and _is_int(core[2])
            and number(core[3]) is not None
            and _is_int(core[6])
        ):
            rows.append(tokens)
    return rows


def compare_tables(ours: str, theirs: str) -> str | None:
    """None when the two stderr texts have the same progressive table, else the first
    difference (row, column, values)."""
    a, b = table_rows(ours), table_rows(theirs)
    for n, (x, y) in enumerate(zip(a, b, strict=False), 1):
        if len(x) != len(y):
            return f"table row {n}: ours {' '.join(x)!r} vs vw {' '.join(y)!r}"
        names = TABLE_COLUMNS if len(y) - (y[-1] == "h") == 7 else ()
        for k, (s, t) in enumerate(zip(x, y, strict=True)):
            if not compare_tokens(s, t):
                column = names[k] if k < len(names) else f"column {k + 1}"
                return f"table row {n} ({column}): ours {s} vs vw {t}"
    if len(a) != len(b):
        return f"table: {len(a)} rows vs {len(b)}"
    return None


def summary(text: str) -> dict[str, str]:
    """The ``key = value`` lines after "finished run" in stderr."""
    lines = text.splitlines()
    out: dict[str, str] = {}
    for n, line in enumerate(lines):
        if line.strip() == "finished run":
            for rest in lines[n + 1 :]:
                key, sep, value = rest.partition(" = ")
                if sep:
                    out[key.strip()] = value.strip()
            break
    return out


def compare_summaries(ours: str, theirs: str) -> str | None:
    """None when every summary key VW prints is printed by ours with an equal value."""
    a, b = summary(ours), summary(theirs)
    for key, value in b.items():
        if key not in a:
            return f"summary: {key!r} missing (vw {value!r})"
        if compare_line(a[key], value) is not None:
            return f"summary {key!r}: ours {a[key]!r} vs vw {value!r}"
    return None


# --- Running ---------------------------------------------------------------------------------


@dataclass
class Run:
    """What one program printed and wrote for one test."""

    code: int | None  # None: timed out
    stdout: str
    stderr: str
    files: dict[str, str | None] = field(default_factory=dict)  # None: not written

    def last_error(self) -> str:
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        return lines[-1].strip() if lines else ""


def compare_runs(ours: Run, theirs: Run, test: VwTest, lookup: FlagLookup) -> str | None:
    """None when ours printed and wrote what vw did, else the first difference."""
    if ours.code != 0 and theirs.code == 0:
        return f"exit code: ours {ours.code} ({ours.last_error()}), vw 0"
    if ours.code == 0 and theirs.code != 0:
        return f"exit code: ours 0, vw {theirs.code} ({theirs.last_error()})"
    diff = compare_tables(ours.stderr, theirs.stderr) or compare_summaries(
        ours.stderr, theirs.stderr
    )
    if diff:
        return diff
    for name in test.diff_files:
        if name in ("stdout", "stderr"):
            continue
        mine, vw = ours.files.get(name), theirs.files.get(name)
        if mine is None or vw is None:
            if mine is not vw:
                return f"{name}: written by {'vw' if mine is None else 'ours'} only"
            continue
        diff = compare_outputs(_without_writer(mine), _without_writer(vw))
        if diff:
            return f"{name} {diff}{_by_design(test, name, lookup)}"
    mine, vw = _without_log_lines(ours.stdout), _without_log_lines(theirs.stdout)
    if mine.strip() or vw.strip():
        diff = compare_outputs(mine, vw)
        if diff:
            return f"stdout {diff}"
    return None


def _without_writer(text: str) -> str:
    """A readable model (``--readable_model``, ``--invert_hash``) less the two header lines that
    name the program that wrote it, not the model: ``Version`` (vw's version, or ours) and
    ``Checksum`` (vw's hash of its own binary model file, which we do not write)."""
    if not text.startswith("Version "):
        return text
    lines = text.splitlines()
    return "\n".join(line for line in lines[1:] if not line.startswith("Checksum: "))


def _without_log_lines(text: str) -> str:
    """stdout less ``vw``'s log messages (``[info] ...``, ``[warning] ...``, and the lines that
    continue one, up to the next line that starts with a number, as predictions do): its logger
    writes them there, beside the predictions; they are notes to the user, not output."""
    kept, in_message = [], False
    for line in text.splitlines():
        if re.match(r"\[(info|warning)\]", line):
            in_message = True
        elif in_message and not re.match(r"\s*[-+.\d]", line):
            continue
        else:
            in_message = False
            kept.append(line)
    return "\n".join(kept)


def _by_design(test: VwTest, name: str, lookup: FlagLookup) -> str:
    """A note when the file is written by a flag the table marks "different"."""
    for flag, value in test.flags:
        entry = lookup(flag)
        if value == name and entry is not None and entry.status == "different":
            return f" [{flag} is 'different' by design]"
    return ""


def run_one(command: list[str], cwd: Path, test: VwTest, timeout: float) -> Run:
    """Runs a command in a scratch test folder, and reads back the test's output files."""
    outputs = [n for n in test.diff_files if n not in ("stdout", "stderr")]
    for name in outputs:  # a previous test's file must not pass for this one's
        (cwd / name).unlink(missing_ok=True)
    # VW's suite never pipes data in: a command reading standard input reads an empty stream.
    try:
        done = subprocess.run(
            command, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout
        )
        run = Run(
            done.returncode,
            done.stdout.decode("utf-8", "replace"),
            done.stderr.decode("utf-8", "replace"),
        )
    except subprocess.TimeoutExpired as err:
        out = err.stdout.decode("utf-8", "replace") if err.stdout else ""
        return Run(None, out, err.stderr.decode("utf-8", "replace") if err.stderr else "")
    for name in outputs:
        path = cwd / name
        run.files[name] = path.read_text("utf-8", "replace") if path.is_file() else None
    return run


@dataclass
class Result:
    id: int
    command: str
    status: str  # "match" | "differs" | "failed"
    detail: str = ""
    ours_code: int | None = None
    vw_code: int | None = None

    def line(self) -> str:
        head = {"match": "match", "differs": "DIFFERS: ", "failed": "FAILED: "}[self.status]
        return f"{self.id:>4} {head}{self.detail} | {self.command}"


def run_test(
    test: VwTest, folders: tuple[Path, Path], lookup: FlagLookup, timeout: float, self_check: bool
) -> Result:
    """Runs vw and ours on one test and compares them."""
    vw = [sys.executable, "-m", "vowpalwabbit", *test.args]
    ours = vw if self_check else [sys.executable, "-m", "polars_poly", "train", *test.args]
    theirs_run = run_one(vw, folders[0], test, timeout)
    ours_run = run_one(ours, folders[1], test, timeout)
    result = Result(test.id, test.command, "match", "", ours_run.code, theirs_run.code)
    if theirs_run.code is None:
        result.status, result.detail = "failed", f"vw timed out after {timeout:g} s"
    elif ours_run.code is None:
        result.status, result.detail = "failed", f"ours timed out after {timeout:g} s"
    elif ours_run.code != 0 and theirs_run.code == 0:
        result.status = "failed"
        result.detail = f"ours exited {ours_run.code}: {ours_run.last_error()}"
    else:
        diff = compare_runs(ours_run, theirs_run, test, lookup)
        if diff is not None:
            result.status, result.detail = "differs", diff
            if ours_run.code != 0:
                result.detail += f" (ours exited {ours_run.code}: {ours_run.last_error()})"
    return result


def scratch_copies(test_dir: Path, root: Path) -> tuple[Path, Path]:
    """Two copies of VW's test/ folder (vw's and ours), each with the models/ folder VW's own
    runner makes, so that relative paths work and each program keeps its own model files."""
    copies = []
    for who in ("vw", "ours"):
        copy = root / who / "test"
        shutil.copytree(test_dir, copy, symlinks=True)
        (copy / "models").mkdir(exist_ok=True)
        copies.append(copy)
    return copies[0], copies[1]


# --- Command line ----------------------------------------------------------------------------


def _ids(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"expected comma-separated ids, got {text!r}") from err


def _with_deps(ids: Iterable[int], tests: list[VwTest]) -> set[int]:
    by_id = {t.id: t for t in tests}
    wanted = set(ids)
    for i in list(wanted):
        if i in by_id:
            wanted.update(d.id for d in transitive_deps(by_id[i], by_id))
    return wanted


def main(argv: Sequence[str] | None = None) -> int:
    """Selects, runs and compares; prints the report. 0, or 2 on bad arguments."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vw-repo", type=Path, default=os.environ.get("VW_REPO"))
    parser.add_argument("--ids", type=_ids, help="run only these (and their dependencies)")
    parser.add_argument("--list", action="store_true", help="the selection only, no runs")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per command")
    parser.add_argument("--self-check", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.vw_repo is None:
        print("SKIPPED: needs a checkout of Vowpal Wabbit's repository (--vw-repo or $VW_REPO)")
        return 0
    suite = Path(args.vw_repo) / "test" / "core.vwtest.json"
    if not suite.is_file():
        parser.error(f"no {suite}")

    lookup = load_flag_table()
    tests, other = load_tests(suite)
    why = select(tests, lookup)
    chosen = [t for t in tests if why[t.id] is None]
    if args.ids is not None:
        wanted = _with_deps(args.ids, tests)
        chosen = [t for t in chosen if t.id in wanted]
        for i in args.ids:
            reason = why.get(i, "a bash_command test" if i in other else "no such test")
            if reason is not None:
                print(f"{i:>4} not selected: {reason}")

    results: list[Result] = []
    if args.list:
        for test in chosen:
            print(f"{test.id:>4} {test.command}")
        print(f"{len(chosen)} selected")
    else:
        with tempfile.TemporaryDirectory(prefix="vw-suite-") as tmp:
            folders = scratch_copies(Path(args.vw_repo) / "test", Path(tmp))
            for test in chosen:
                result = run_test(test, folders, lookup, args.timeout, args.self_check)
                results.append(result)
                print(result.line(), flush=True)
        matched = sum(1 for r in results if r.status == "match")
        print(f"{len(chosen)} selected, {matched} match")

    blocking = blocking_flags(tests, lookup, why)
    print("flags that would admit the next-most tests (alone: the only unsupported flag;")
    print("  in: among the unselected tests' flags; admits: tests selected if it alone were):")
    for flag, alone, appears, gained in blocking[:15]:
        print(f"  {flag:<32} alone {alone:>3}  in {appears:>3}  admits {gained:>3}")

    if args.json is not None:
        report = {
            "selected": len(chosen),
            "match": sum(1 for r in results if r.status == "match"),
            "self_check": args.self_check,
            "results": [r.__dict__ for r in results],
            "not_selected": {str(i): w for i, w in why.items() if w is not None},
            "blocking_flags": [
                {"flag": f, "alone": a, "in": n, "admits": g} for f, a, n, g in blocking
            ],
        }
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

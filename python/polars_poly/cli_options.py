"""The command line's flags, and what each of Vowpal Wabbit's flags does here.

This module imports nothing heavy (no numpy, no Polars, no extension), so that
``polars-poly --help`` and a usage error answer at once; the commands themselves run in
:mod:`polars_poly.cli`.

:data:`VW_FLAGS` is the one table of Vowpal Wabbit's flags: ``same`` (gives ``vw``'s output),
``different`` (accepted, differs by design: the note says how) or ``refused`` (exit 2 naming
the flag and why). docs/cli.md shows it and ``benches/suite/vw_suite.py`` selects Vowpal
Wabbit's own tests from it. A flag Vowpal Wabbit has and the table does not list is unknown
here: exit 2, naming it, as any unknown flag.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any, NoReturn

#: The environment variable the command line sets for its model commands
#: (``polars_poly.__main__.program``): they use nothing of scikit-learn, whose import is most
#: of a short run's time (2 s of a 1,000-row ``train``), so their estimators derive from
#: ``polars_poly._estimator``'s stand-ins.
WITHOUT_SKLEARN = "POLARS_POLY_WITHOUT_SKLEARN"

FORMATS = ("auto", "libsvm", "vw", "parquet")
LOSSES = ("squared", "logistic", "hinge", "quantile")
LINKS = ("identity", "logistic", "glf1", "poisson")


@dataclass(frozen=True)
class VwFlag:
    """One of Vowpal Wabbit's flags: its spellings, what ``train`` does with it, and (for flags
    whose value decides) the values accepted."""

    names: tuple[str, ...]
    status: str  # "same" | "different" | "refused"
    note: str
    values: tuple[str, ...] | None = None


def _flag(names: str, status: str, note: str, values: tuple[str, ...] | None = None) -> VwFlag:
    return VwFlag(tuple(names.split()), status, note, values)


#: Vowpal Wabbit's flags for simple-label learning, and a few beyond it that users type.
VW_FLAGS: tuple[VwFlag, ...] = (
    _flag("-d --data", "same", "a file, plain or gzip; `-` or none: standard input"),
    _flag("-f --final_regressor", "different", "our model file, not Vowpal Wabbit's"),
    _flag(
        "-i --initial_regressor",
        "different",
        "our model files; flags that change the model's features are refused",
    ),
    _flag("-t --testonly", "same", "scores the examples, learns nothing"),
    _flag("-p --predictions", "same", "while training: each prediction before learning"),
    _flag("-b --bit_precision", "same", "weight table of 2^b slots"),
    _flag("-l --learning_rate", "same", ""),
    _flag("--power_t", "same", ""),
    _flag("--initial_t", "same", ""),
    _flag("--l1", "same", ""),
    _flag("--l2", "same", ""),
    _flag("--loss_function", "same", "", LOSSES),
    _flag("--quantile_tau", "same", "the quantile loss's tau"),
    _flag("--passes", "same", "each pass reads the file again"),
    _flag("--holdout_off", "same", "passes learn every example"),
    _flag("--holdout_period", "same", "with passes, every N-th example is held out"),
    _flag("--early_terminate", "same", "passes without a better holdout loss before stopping"),
    _flag(
        "-c --cache",
        "different",
        "`DATA.cache`, read instead of the text when it exists, else written while reading it; "
        "our own compact format, not vw's (one of vw's is refused by name)",
    ),
    _flag("--cache_file", "different", "the cache at this path, as -c"),
    _flag("-k --kill_cache", "same", "the cache is written again"),
    _flag("--noconstant", "same", "no constant (bias) feature"),
    _flag("-q --quadratic", "same", "`-q ab`, `-q a:`, `-q ::`; `--quadratic` alone: all pairs"),
    _flag("--interactions", "same", "crosses of any number of namespaces: ab, abc, aaaaa"),
    _flag("--stage_poly", "different", "apple: our adaptive expansion (docs/apple.md)"),
    _flag("--cubic", "same", "`--cubic abc` as vw; alone (ours): all products up to degree 3"),
    _flag(
        "--oaa",
        "same",
        "K classes, numbered as vw numbers them while it reads: 1..K until a first label 0 "
        "(0..K-1 from that example on) or K; with -p, each predicted class (and tag) before "
        "learning it (not with -t, -P or a holdout)",
    ),
    _flag(
        "--indexing",
        "same",
        "--oaa's labels 0..K-1 or 1..K from the start; a label outside them is learned as no "
        "class's, with a warning (continuing a model with -i: an error naming its example)",
        ("0", "1"),
    ),
    _flag("--quiet", "same", "prints nothing on stderr"),
    _flag("-P --progress", "same", "table rows every N examples (integer) or at a factor"),
    _flag("--random_seed", "same", "accepted: plain SGD draws no random numbers"),
    _flag(
        "--adaptive --normalized --invariant",
        "same",
        "the update rule's switches; none given: all three (VW's default)",
    ),
    _flag(
        "--sgd",
        "different",
        "the same rule; its large default rate (10) makes long runs drift from vw's float32 sums",
    ),
    _flag("--save_resume", "same", "our model file always keeps what resuming needs"),
    _flag("--predict_only_model", "different", "accepted; the model keeps its state"),
    _flag("--no_stdin", "same", "no data: with -i, writes the model again; without, a new one"),
    _flag(
        "--readable_model",
        "same",
        "vw's layout (header, state, `slot:w G N`); its Version and Checksum name this program",
    ),
    _flag(
        "--binary",
        "same",
        "the sign as prediction, 0/1 loss on -1/+1 labels (VW text learned natively)",
    ),
    _flag(
        "--link", "same", "applied to what is shown and written (VW text learned natively)", LINKS
    ),
    _flag("--raw_predictions -r", "refused", "use predict --raw"),
    _flag(
        "--invert_hash",
        "same",
        "the readable model with names (`ns^x*b^y:slot:w G N`), read from the text again; "
        "not with n-grams or apple",
    ),
    _flag(
        "-a --audit",
        "same",
        "on stdout, each example's prediction and named features (`name:slot:x:w@G`) before "
        "it is learned; not with n-grams or apple",
    ),
    _flag("--initial_weight", "same", "every weight starts at this value"),
    _flag("--ignore --keep", "same", "namespaces dropped / kept, as vw reads the file"),
    _flag("--ignore_linear", "refused", "not implemented"),
    _flag(
        "--ngram --skips",
        "same",
        "as vw, and kept in the model (with --ignore, --keep, --hash) for -t, -i and predict",
    ),
    _flag("--hash", "same", "strings or all", ("strings", "all")),
    _flag(
        "--probabilities",
        "same",
        "with --oaa: each class's probability (its logistic link, normalized) in the table, in "
        "-p and as the summary's average multiclass log loss; a --link given is identity, as "
        "in vw; without --oaa refused (predict --probabilities scores a binary model)",
    ),
)


def plain_text(doc: str | None) -> str:
    """A docstring as ``--help`` shows it: Sphinx's roles and literal quotes taken off
    (``:mod:`polars_poly.cli``` -> polars_poly.cli, ````train```` -> train)."""
    import re

    text = re.sub(r":\w+:`~?([^`]+)`", r"\1", doc or "")
    return text.replace("``", "")


def flag_table() -> str:
    """:data:`VW_FLAGS` as the Markdown table of docs/cli.md."""
    rows = ["| flag | status | note |", "|---|---|---|"]
    for flag in VW_FLAGS:
        values = f" (values: {', '.join(flag.values)})" if flag.values else ""
        names = " ".join(f"`{name}`" for name in flag.names)
        rows.append(f"| {names} | {flag.status} | {flag.note}{values} |")
    return "\n".join(rows)


def vw_flag(name: str) -> VwFlag | None:
    """The table's entry of the flag spelled ``name`` (``--name`` or ``-x``)."""
    for flag in VW_FLAGS:
        if name in flag.names:
            return flag
    return None


class _Refused(argparse.Action):
    """A Vowpal Wabbit flag ``train`` does not support: exit 2 naming it and why."""

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> NoReturn:
        flag = vw_flag(self.option_strings[0])
        reason = flag.note if flag else "not supported"
        parser.error(f"Vowpal Wabbit's {'/'.join(self.option_strings)} is not supported: {reason}")


def add_commands(commands: Any) -> None:
    """The ``train``, ``predict`` and ``inspect`` subcommands, on an argparse subparsers."""
    data = argparse.ArgumentParser(add_help=False)
    data.add_argument(
        "-d",
        "--data",
        default="-",
        help="LIBSVM, VW text or parquet file, plain or gzip (default or '-': standard input)",
    )
    data.add_argument("--format", choices=FORMATS, default="auto", help="default: by suffix")
    data.add_argument("--label", default="label", help="label column of a parquet file")
    # Vowpal Wabbit's reader flags (VW text files).
    data.add_argument("--ignore", action="append", default=[], help="drop namespaces: --ignore ab")
    data.add_argument("--keep", action="append", default=[], help="keep only these namespaces")
    data.add_argument("--hash", choices=["strings", "all"], default="strings")
    data.add_argument("--ngram", action="append", default=[], help="N-grams: 2, or a2 for a")
    data.add_argument("--skips", action="append", default=[], help="skips in n-grams: 1 or a1")
    t = commands.add_parser("train", parents=[data], help="train a model (Vowpal Wabbit flags)")
    t.add_argument("-f", "--final_regressor", help="write the model here")
    t.add_argument("-i", "--initial_regressor", help="continue training this model")
    t.add_argument("-t", "--testonly", action="store_true", help="score only, learn nothing")
    t.add_argument("-p", "--predictions", help="write each prediction before learning here")
    t.add_argument("-b", "--bit_precision", "--bits", dest="bits", type=int, default=None)
    t.add_argument("-l", "--learning_rate", type=float, help="default 0.5 (10 with --sgd etc.)")
    t.add_argument("--power_t", type=float, default=0.5)
    t.add_argument("--initial_t", type=float, help="default 0 (1 with --sgd or --invariant)")
    t.add_argument("--l1", type=float, default=0.0)
    t.add_argument("--l2", type=float, default=0.0)
    t.add_argument("--passes", type=int, default=1)
    t.add_argument("--holdout_off", action="store_true", help="passes learn every example")
    t.add_argument(
        "--holdout_period", type=int, default=10, help="with passes, hold out every N-th example"
    )
    t.add_argument(
        "--early_terminate", type=int, default=3, help="passes without a better holdout loss"
    )
    t.add_argument("-c", "--cache", action="store_true", help="cache the parsed file as DATA.cache")
    t.add_argument("--cache_file", help="cache the parsed file at this path")
    t.add_argument("-k", "--kill_cache", action="store_true", help="write the cache again")
    t.add_argument("--loss_function", default="squared", choices=list(LOSSES))
    t.add_argument("--quantile_tau", type=float, default=0.5)
    t.add_argument("--noconstant", action="store_true", help="no constant (bias) feature")
    t.add_argument("--initial_weight", type=float, default=0.0, help="weights start here")
    t.add_argument(
        "-q", action="append", default=[], help="cross two namespaces: -q ab, -q a:, -q ::"
    )
    t.add_argument(
        "--interactions", action="append", default=[], help="a cross of namespaces: ab, abc"
    )
    t.add_argument("--stage_poly", action="store_true", help="apple, the adaptive expansion")
    t.add_argument(
        "--quadratic",
        nargs="?",
        const=True,
        default=False,
        metavar="AB",
        help="alone: all products x_i x_j; with two namespace letters: as -q",
    )
    t.add_argument(
        "--cubic",
        nargs="?",
        const=True,
        default=False,
        metavar="ABC",
        help="alone: all products up to degree 3; with three namespace letters: their cross",
    )
    t.add_argument(
        "--field_scales",
        action="store_true",
        help="learn a scale per namespace and cross (ours; off: Vowpal Wabbit's model)",
    )
    # fwumious_wabbit's flags of its field-aware factorization (a field is one namespace here).
    t.add_argument("--ffm_k", type=int, metavar="K", help="a field-aware factorization of K")
    t.add_argument(
        "--ffm_field",
        action="append",
        default=[],
        metavar="NS",
        help="a namespace it factorizes (repeat; none: every namespace)",
    )
    t.add_argument(
        "--ffm_pairs",
        choices=("all", "crosses"),
        default="all",
        help="its pairs of fields: all (fwumious_wabbit's) or those of -q / --stage_poly's crosses",
    )
    t.add_argument("--ffm_bit_precision", type=int, metavar="B", help="its table's rows: 2**B")
    t.add_argument("--ffm_learning_rate", type=float, help="its AdaGrad rate (0.1)")
    t.add_argument("--ffm_power_t", type=float, help="its AdaGrad exponent (0.5)")
    t.add_argument("--ffm_init_acc_gradient", type=float, help="where its AdaGrad sums start (1)")
    t.add_argument("--quiet", action="store_true", help="print nothing on stderr")
    t.add_argument(
        "-P",
        "--progress",
        help="table rows every N examples (an integer) or at N times the last (a decimal)",
    )
    t.add_argument("--oaa", type=int, metavar="K", help="K classes, labels 1..K (one against all)")
    t.add_argument("--indexing", type=int, choices=(0, 1), help="--oaa's labels from 0 or 1")
    for flag in ("--random_seed",):
        t.add_argument(flag, type=int, help="accepted as in vw (plain SGD draws no numbers)")
    for flag in ("--sgd", "--adaptive", "--normalized", "--invariant"):
        t.add_argument(flag, action="store_true", help="update rule switch, as in vw")
    for flag in ("--save_resume", "--predict_only_model"):
        t.add_argument(flag, action="store_true", help="accepted as in vw (see docs/cli.md)")
    t.add_argument("--binary", action="store_true", help="predict the sign; report 0/1 loss")
    t.add_argument(
        "--probabilities", action="store_true", help="with --oaa: each class's probability"
    )
    t.add_argument("--link", choices=list(LINKS), default="identity", help="of what is shown")
    t.add_argument("--no_stdin", action="store_true", help="no data (with -i: save it again)")
    t.add_argument("--readable_model", metavar="FILE", help="write the weights here (vw's layout)")
    t.add_argument("--invert_hash", metavar="FILE", help="the readable model with feature names")
    t.add_argument("-a", "--audit", action="store_true", help="each example's features on stdout")
    t.add_argument("--history", metavar="CSV", help="write the table's rows here")
    t.add_argument("--plot", metavar="PNG", help="plot the learning curve here (matplotlib)")
    for refused in VW_FLAGS:
        if refused.status == "refused":
            t.add_argument(*refused.names, nargs="?", action=_Refused, help=argparse.SUPPRESS)
    p = commands.add_parser("predict", parents=[data], help="score a file with a model")
    p.add_argument("-i", "--initial_regressor", required=True, help="the model")
    p.add_argument("-p", "--predictions", help="write predictions here (default: stdout)")
    p.add_argument("--raw", action="store_true", help="classifier margins, not labels")
    p.add_argument("--probabilities", action="store_true", help="P(larger class), logistic")
    # Vowpal Wabbit's spellings of the two: --link logistic, --link identity (margins).
    p.add_argument("--link", choices=list(LINKS[:2]), help="as vw: margins or P")
    p.add_argument("--binary", action="store_true", help="labels (the default), as vw")
    i = commands.add_parser("inspect", help="summarize a model, list apple's monomials")
    i.add_argument("-i", "--initial_regressor", required=True, help="the model")
    i.add_argument("--top", type=int, default=20, help="monomials listed")
    i.add_argument(
        "--readable_model", metavar="FILE", help="write the weights, by name where known, here"
    )
    i.add_argument("--plot", metavar="PNG", help="plot apple's --top monomials here (matplotlib)")


COMMANDS = ("train", "predict", "inspect")

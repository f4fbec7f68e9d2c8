"""Command line (``polars-poly`` or ``python -m polars_poly``): ``train``, ``predict`` and
``inspect`` (Vowpal Wabbit's flags, see :mod:`polars_poly.cli`), ``demo`` and ``compare``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from polars_poly import cli_options
from polars_poly.cli_options import WITHOUT_SKLEARN


def _floats(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from err


_FIELD_SCALES: dict[str, bool | str] = {"auto": "auto", "on": True, "off": False}


def _compare_flags(c: argparse.ArgumentParser) -> None:
    """The compare command's description and flags: polars_poly.compare (NumPy, SciPy, the
    learners) gives their defaults."""
    from polars_poly import compare as cmp

    c.description = cli_options.plain_text(cmp.__doc__)
    c.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="benchmark data directory (default: $POLARS_POLY_DATA or ../shared/data)",
    )
    c.add_argument("--datasets", default=None, help="comma-separated names (default: all found)")
    c.add_argument("--bundled", action="store_true", help="only the bundled german.numer set")
    c.add_argument("--vw", action="store_true", help="also run Vowpal Wabbit on the same splits")
    c.add_argument(
        "--vw-algorithms",
        default=None,
        help="comma-separated: run only these of --algorithms on Vowpal Wabbit (default: all)",
    )
    c.add_argument("--out", type=Path, default=Path("compare-out"), help="CSV and PNG directory")
    c.add_argument("--rates", type=_floats, default=list(cmp.DEFAULT_RATES))
    c.add_argument("--alphas", type=_floats, default=list(cmp.DEFAULT_ALPHAS))
    c.add_argument("--algorithms", default=",".join(cmp.ALGORITHMS))
    c.add_argument(
        "--seeds",
        type=lambda text: [int(x) for x in text.split(",") if x.strip()],
        default=[0],
        help="comma-separated seeds of the 80/20 split (one run per seed; default 0)",
    )
    c.add_argument(
        "--average-tail",
        type=float,
        default=0.0,
        help="tail averaging of our learners (SGDRegressor's average_tail; default 0: off)",
    )
    c.add_argument(
        "--field-scales",
        choices=["auto", "on", "off"],
        default="auto",
        help="our learners' field scales (SGDRegressor's field_scales; 'auto' is off here)",
    )


def main(argv: list[str] | None = None) -> int:
    """Runs a command; its exit code (0 success, 1 error, 2 usage, 130 Ctrl-C)."""
    parser = argparse.ArgumentParser(
        prog="polars-poly", description=cli_options.plain_text(__doc__)
    )
    commands = parser.add_subparsers(dest="command", required=True)
    cli_options.add_commands(commands)
    commands.add_parser("demo", help="the apple comparison on the bundled data set, and a tour")
    c = commands.add_parser(
        "compare",
        help="the apple paper's comparison (lin, quad, cubic, apple) over benchmark data sets",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # Each command imports what it runs; the compare command's flags only when the command line
    # names it (as the command, or as a value: then they go unused).
    if "compare" in (sys.argv[1:] if argv is None else argv):
        _compare_flags(c)
    args = parser.parse_args(argv)
    if args.command in cli_options.COMMANDS:
        from polars_poly import cli

        return cli.run(args)
    if args.command == "demo":
        from polars_poly.demo import run_demo

        run_demo()
        return 0
    from polars_poly import compare as cmp

    data_dir = None if args.bundled else (args.data_dir or cmp.default_data_dir())
    if data_dir is None and not args.bundled:
        print("no benchmark data directory found: using the bundled german.numer set")
    datasets = args.datasets.split(",") if args.datasets else None
    table = cmp.compare(
        datasets,
        data_dir,
        algorithms=[a for a in args.algorithms.split(",") if a],
        rates=args.rates,
        alphas=args.alphas,
        vw=args.vw,
        vw_algorithms=[a for a in args.vw_algorithms.split(",") if a]
        if args.vw_algorithms
        else None,
        seeds=args.seeds,
        average_tail=args.average_tail,
        field_scales=_FIELD_SCALES[args.field_scales],
        out_dir=args.out,
    )
    import polars as pl

    with pl.Config(tbl_rows=-1, tbl_cols=-1, float_precision=4):
        print(cmp.printable(table))
    print(cmp.format_summary(table))
    print(f"written: {args.out}/compare.csv, rel_err_time_cdf.png, tradeoff.png")
    return 0


def program() -> int:
    """The ``polars-poly`` program (the console script, ``python -m polars_poly``): ``main``,
    its model commands without scikit-learn, which they do not use and whose import would be
    most of a short run's time (``polars_poly._estimator``), and on its own allocator.
    ``main`` itself, called in a process that has other uses for the estimators, leaves them
    as they are."""
    if sys.argv[1:2] and sys.argv[1] in cli_options.COMMANDS:
        os.environ.setdefault(WITHOUT_SKLEARN, "1")
        # numpy's BLAS threads spin at import, taking a core from the reading thread; the
        # commands do no linear algebra.
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        # Runs on Vowpal Wabbit text never import Polars; the extension would, for its
        # allocator, but for this (src/python/allocator.rs: mimalloc, its arenas committed as
        # they are used: committed at once they held 600 MB at the peak of a 380 MB run).
        os.environ.setdefault("POLARS_POLY_ALLOCATOR", "own")
        os.environ.setdefault("MIMALLOC_ARENA_EAGER_COMMIT", "0")
    return main()


if __name__ == "__main__":
    sys.exit(program())

//! Bindings of a run on Vowpal Wabbit text or our cache of it ([`crate::vw_run`]): the file's
//! scan before a model is made (`vw_scan`), and the run itself (`vw_train`), which calls back
//! into Python only to print the table's rows.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use pyo3::prelude::*;

use super::error::{poisoned, py_error};
use super::guard::guarded;
use super::learner::PyLearner;
use crate::error::PolyError;
use crate::learner::{Loss, LossParams, OverflowPolicy, RowRecord};
use crate::readers::vw::{self, VwOptions, VwScan};
use crate::vw_run::cache::CacheReader;
use crate::vw_run::invert_hash::{feature_names, NamedModel};
use crate::vw_run::readable::{write_readable, ReadableHeader};
use crate::vw_run::report::{Progress, ReportedRow, TableRow, VwReport};
use crate::vw_run::scorer::{Link, Scorer};
use crate::vw_run::{push_prediction, run, RunOptions, Source};

/// A scan for Python: namespaces, labels, more labels than listed.
type ScanTuple = (Vec<String>, Vec<f64>, bool);

/// A `--history` row for Python: examples, weight, average loss, since last, holdout, label,
/// prediction, features.
type HistoryRow = (u64, f64, Option<f64>, Option<f64>, bool, Option<f64>, f64, u64);

fn reader_options(options: &Bound<'_, PyAny>) -> PyResult<VwOptions> {
    vw::options(&mut pythonize::Depythonizer::from_object(options)).map_err(py_error)
}

/// The namespaces and labels of a text file, or those a cache's header records.
#[pyfunction]
#[pyo3(signature = (path, options, cache = false))]
fn vw_scan(
    py: Python<'_>,
    path: PathBuf,
    options: &Bound<'_, PyAny>,
    cache: bool,
) -> PyResult<ScanTuple> {
    let options = reader_options(options)?;
    py.detach(|| {
        guarded(|| {
            let scan = if cache {
                CacheReader::open(&path).map_err(py_error)?.header().scan.clone()
            } else {
                vw::scan_file(&path, &options).map_err(py_error)?
            };
            Ok((scan.namespaces, scan.labels, scan.more_labels))
        })
    })
}

/// What `vw_train` returns: passes run, rows read, the summary's lines, the table's rows (with
/// `history`), and the report (for a readable model's state).
type RunResult = (usize, u64, Vec<String>, Vec<HistoryRow>, PyVwReport);

/// Trains `learner` on the text file `data` (writing the cache `cache` on the way when
/// `write_cache`) or, with `data` None, on the cache; prints the table's rows through `print`.
/// Returns (passes run, rows read, the summary's lines, the table's rows when `history`).
#[pyfunction]
#[pyo3(signature = (
    learner, data, cache, options, *, write_cache, scan, passes, holdout_period, early_terminate,
    test_only, classes, batch_rows, progress, quiet, history, predictions, print,
    link = "identity", binary = false, audit = None, overflow = "vw"
))]
#[allow(clippy::too_many_arguments)]
fn vw_train(
    py: Python<'_>,
    learner: &PyLearner,
    data: Option<PathBuf>,
    cache: Option<PathBuf>,
    options: &Bound<'_, PyAny>,
    write_cache: bool,
    scan: Option<ScanTuple>,
    passes: usize,
    holdout_period: u64,
    early_terminate: usize,
    test_only: bool,
    classes: Option<(f64, f64)>,
    batch_rows: usize,
    progress: Option<String>,
    quiet: bool,
    history: bool,
    predictions: Option<PathBuf>,
    print: Py<PyAny>,
    link: &str,
    binary: bool,
    audit: Option<Py<PyAny>>,
    overflow: &str,
) -> PyResult<RunResult> {
    let options = reader_options(options)?;
    let overflow = OverflowPolicy::parse(overflow).map_err(py_error)?;
    let Some(link) = Link::parse(link) else {
        return Err(py_error(PolyError::InvalidInput(format!(
            "link={link:?} is not one of identity, logistic, glf1, poisson"
        ))));
    };
    let source = match (data, &cache) {
        (Some(path), _) => Source::Text { path, options: options.clone() },
        (None, Some(path)) => Source::Cache { path: path.clone(), options: options.clone() },
        (None, None) => {
            return Err(py_error(PolyError::InvalidInput(
                "a run needs a data file or a cache".into(),
            )))
        }
    };
    let write_cache = match (write_cache, cache, scan) {
        (true, Some(path), Some((namespaces, labels, more_labels))) => {
            Some((path, VwScan { namespaces, labels, more_labels }))
        }
        (true, _, _) => {
            return Err(py_error(PolyError::InvalidInput(
                "writing a cache needs its path and the file's scan".into(),
            )))
        }
        (false, _, _) => None,
    };
    let run_options = RunOptions {
        passes,
        holdout_period,
        early_terminate,
        test_only,
        classes,
        batch_rows,
        scorer: Scorer { link, binary },
        write_cache,
        overflow,
    };
    let progress =
        progress.as_deref().map(Progress::parse).transpose().map_err(py_error)?.unwrap_or_default();
    let shared = learner.shared();
    py.detach(|| {
        guarded(|| {
            let mut model = shared.write().map_err(poisoned)?;
            let loss: Loss = model.config().loss;
            let mut report = VwReport::new(loss, holdout_period > 0, progress, !quiet, history);
            let mut sink = predictions
                .as_ref()
                .map(|path| {
                    File::create(path)
                        .map(BufWriter::new)
                        .map_err(|error| PolyError::io(path.display(), "cannot write", &error))
                })
                .transpose()
                .map_err(py_error)?;
            let mut print_lines = |lines: &[String]| {
                Python::attach(|py| print.call1(py, (lines.to_vec(),)).map(|_| ())).map_err(
                    |error| PolyError::InvalidInput(format!("printing the table: {error}")),
                )
            };
            let mut audit_sink = audit.map(|write| BufWriter::new(PythonWriter(write)));
            let end = run(
                &mut model,
                &source,
                &run_options,
                &mut report,
                sink.as_mut().map(|sink| sink as &mut dyn Write),
                audit_sink.as_mut().map(|sink| sink as &mut dyn Write),
                &mut print_lines,
            )
            .map_err(py_error)?;
            if let Some(mut sink) = audit_sink {
                sink.flush()
                    .map_err(|error| PolyError::io("the audit", "cannot write", &error))
                    .map_err(py_error)?;
            }
            if let Some(mut sink) = sink {
                sink.flush()
                    .map_err(|error| PolyError::io("the predictions", "cannot write", &error))
                    .map_err(py_error)?;
            }
            let summary = report.summary();
            let rows = history_rows(&report);
            Ok((end.passes_run, end.rows, summary, rows, PyVwReport { inner: report }))
        })
    })
}

/// Text written through a Python callable taking a `str` (`--audit`'s stdout, which Python
/// owns).
struct PythonWriter(Py<PyAny>);

impl Write for PythonWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(bytes);
        Python::attach(|py| self.0.call1(py, (text.as_ref(),)).map(|_| ()))
            .map_err(|error| std::io::Error::other(error.to_string()))?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Slot -> feature name for the Vowpal Wabbit text `path` read with `options` by a model of
/// these namespace columns, crosses (column numbers), constant and bits (`--invert_hash`).
#[pyfunction]
#[pyo3(signature = (path, options, *, namespaces, crosses, constant, bits))]
fn vw_feature_names(
    py: Python<'_>,
    path: PathBuf,
    options: &Bound<'_, PyAny>,
    namespaces: Vec<String>,
    crosses: Vec<Vec<usize>>,
    constant: bool,
    bits: u32,
) -> PyResult<HashMap<u32, String>> {
    let options = reader_options(options)?;
    py.detach(|| {
        guarded(|| {
            let model = NamedModel { namespaces: &namespaces, crosses: &crosses, constant, bits };
            feature_names(&path, &options, &model).map_err(py_error)
        })
    })
}

/// Writes `learner` to `path` in Vowpal Wabbit's readable layout (`crate::vw_run::readable`):
/// with the shared data of `report` (None: no run), the state when `save_resume`, and the
/// names of `names` (slot -> name, `--invert_hash`).
#[pyfunction]
#[pyo3(signature = (learner, path, report, *, version, options, ngram, skips, save_resume, names = None))]
#[allow(clippy::too_many_arguments)]
fn vw_readable_model(
    py: Python<'_>,
    learner: &PyLearner,
    path: PathBuf,
    report: Option<PyRef<'_, PyVwReport>>,
    version: String,
    options: String,
    ngram: Vec<String>,
    skips: Vec<String>,
    save_resume: bool,
    names: Option<HashMap<u32, String>>,
) -> PyResult<()> {
    let header = ReadableHeader { version, options, ngram, skips };
    let report = report.map(|report| report.inner.clone());
    let shared = learner.shared();
    py.detach(|| {
        guarded(|| {
            let model = shared.read().map_err(poisoned)?;
            let file = File::create(&path)
                .map_err(|error| py_error(PolyError::io(path.display(), "cannot write", &error)))?;
            let mut out = BufWriter::new(file);
            write_readable(&mut out, &model, report.as_ref(), &header, save_resume, names.as_ref())
                .and_then(|()| out.flush())
                .map_err(|error| py_error(PolyError::io(path.display(), "cannot write", &error)))
        })
    })
}

fn history_rows(report: &VwReport) -> Vec<HistoryRow> {
    let row = |r: &TableRow| {
        let numbers = (r.examples, r.weight, r.average_loss, r.loss_since_last);
        (numbers.0, numbers.1, numbers.2, numbers.3, r.holdout, r.label, r.prediction, r.features)
    };
    report.rows().iter().map(row).collect()
}

/// Vowpal Wabbit's report of a run learned from frames (the command line's other formats):
/// the learner's records of each batch in, the table's lines out.
#[pyclass(module = "polars_poly._internal", name = "VwReport")]
struct PyVwReport {
    inner: VwReport,
}

#[pymethods]
impl PyVwReport {
    #[new]
    #[pyo3(signature = (loss, quantile_tau = 0.5, holdout = false, progress = None, quiet = false, history = false))]
    fn new(
        loss: &str,
        quantile_tau: f64,
        holdout: bool,
        progress: Option<String>,
        quiet: bool,
        history: bool,
    ) -> PyResult<Self> {
        let loss = Loss::new(loss, &LossParams { quantile_tau }).map_err(py_error)?;
        let progress = progress
            .as_deref()
            .map(Progress::parse)
            .transpose()
            .map_err(py_error)?
            .unwrap_or_default();
        Ok(PyVwReport { inner: VwReport::new(loss, holdout, progress, !quiet, history) })
    }

    /// Takes a batch's rows in order (labels NaN where there is none); returns the table's
    /// lines they print.
    fn add(
        &mut self,
        labels: Vec<f64>,
        weights: Vec<f64>,
        predictions: Vec<f64>,
        losses: Vec<f64>,
        features: Vec<u64>,
        holdout: Vec<bool>,
    ) -> PyResult<Vec<String>> {
        let n = labels.len();
        if [weights.len(), predictions.len(), losses.len(), features.len(), holdout.len()]
            .iter()
            .any(|&len| len != n)
        {
            return Err(py_error(PolyError::InvalidInput(
                "a report's columns must have one entry per row".into(),
            )));
        }
        let mut lines = Vec::new();
        for k in 0..n {
            let row = ReportedRow {
                label: Some(labels[k]).filter(|label| !label.is_nan()),
                weight: weights[k],
                record: RowRecord {
                    prediction: predictions[k],
                    weighted_loss: losses[k],
                    features: features[k],
                    held_out: holdout[k],
                },
                holdout: holdout[k],
            };
            self.inner.add(&row, &mut lines);
        }
        Ok(lines)
    }

    /// A pass ended: whether its holdout loss is the best so far.
    fn end_pass(&mut self) -> bool {
        self.inner.end_pass()
    }

    /// The lines after `finished run`, from the blank line before it.
    fn summary(&self) -> Vec<String> {
        self.inner.summary()
    }

    /// The table's rows as numbers (with `history`).
    fn rows(&self) -> Vec<HistoryRow> {
        history_rows(&self.inner)
    }
}

/// Vowpal Wabbit's `-p` lines of `predictions` (with their `tags`).
#[pyfunction]
#[pyo3(signature = (predictions, tags = None))]
fn vw_prediction_lines(predictions: Vec<f64>, tags: Option<Vec<Option<String>>>) -> String {
    let mut text = String::new();
    for (k, &prediction) in predictions.iter().enumerate() {
        let tag = tags.as_ref().and_then(|tags| tags.get(k)).and_then(|tag| tag.as_deref());
        push_prediction(&mut text, prediction, tag);
    }
    text
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(vw_scan, m)?)?;
    m.add_function(wrap_pyfunction!(vw_train, m)?)?;
    m.add_function(wrap_pyfunction!(vw_prediction_lines, m)?)?;
    m.add_function(wrap_pyfunction!(vw_readable_model, m)?)?;
    m.add_function(wrap_pyfunction!(vw_feature_names, m)?)?;
    m.add_class::<PyVwReport>()?;
    Ok(())
}

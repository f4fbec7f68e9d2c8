//! A run of `polars-poly train` on Vowpal Wabbit text, or on our cache of it, in Rust from end
//! to end: a thread beside the learner parses and hashes the next batch (`readers::vw`, itself
//! parallel) or reads it from the cache ([`cache`]) while the learner learns this one; each row's
//! record feeds Vowpal Wabbit's report ([`report`]) and `-p`'s predictions as it comes. Memory is
//! bounded by a few batches whatever the file's length; Ctrl-C stops both threads.
//!
//! Multi-pass runs read the source again each pass, from the cache once it is written. The
//! learner's namespaces are the columns read: a text file is read with them (others dropped),
//! a cache's columns are matched to them by name (a namespace the cache lacks is empty).

pub mod audit;
pub mod cache;
pub mod invert_hash;
pub mod readable;
pub mod report;
pub mod scorer;

use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver};

use crate::error::{PolyError, PolyResult};
use crate::learner::{
    Batch, Expansion, InOrderRows, Learner, NamespaceRows, OverflowPolicy, RowRecord,
};
use crate::readers::vw::{VwColumns, VwOptions, VwReader, VwScan};
use crate::sparse::{SparseMatrix, SparseRows};
use audit::Auditor;
use cache::{fingerprint, CacheHeader, CacheReader, CacheWriter};
use report::{ReportedRow, VwReport};
use scorer::Scorer;

/// Where the examples come from.
#[derive(Clone, Debug)]
pub enum Source {
    /// A (plain or gzip) Vowpal Wabbit text file, read with `options` (their `namespaces` are
    /// the learner's).
    Text { path: PathBuf, options: VwOptions },
    /// Our cache, written with the reader options `options` (checked against its own).
    Cache { path: PathBuf, options: VwOptions },
}

/// How a run goes.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub passes: usize,
    /// Every `holdout_period`-th example of a pass is held out (scored, its loss the holdout
    /// loss); 0: none.
    pub holdout_period: u64,
    /// Passes without a better holdout loss before the run stops.
    pub early_terminate: usize,
    /// Score every row, learn none (`-t`).
    pub test_only: bool,
    /// `Some((negative, positive))`: the labels are these two classes, learned as -1 / +1;
    /// any other label is an error. `None`: labels as they are.
    pub classes: Option<(f64, f64)>,
    /// Rows per batch.
    pub batch_rows: usize,
    /// How rows are shown and written (`--link`, `--binary`).
    pub scorer: Scorer,
    /// With a text source: the cache to write while reading it (and the file's scan for its
    /// header); later passes then read the cache.
    pub write_cache: Option<(PathBuf, VwScan)>,
    /// A row whose numbers overflow: predicted 0, not learned and warned of, as `vw` does
    /// (`polars-poly train`), or an error naming it, as the estimators' other inputs give.
    pub overflow: OverflowPolicy,
}

/// What a run did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunEnd {
    pub passes_run: usize,
    /// Rows read (every pass).
    pub rows: u64,
}

/// Batches in flight between the reading thread and the learner.
const QUEUED_BATCHES: usize = 1;

/// Runs `options.passes` passes of `source` through `learner`, reporting to `report` (whose
/// table lines go to `lines` as they are printed), writing each scored row's prediction to
/// `predictions` in Vowpal Wabbit's `-p` layout and, with `audit`, each row's audit
/// ([`audit`]) before it is learned.
pub fn run<E: Expansion>(
    learner: &mut Learner<E>,
    source: &Source,
    options: &RunOptions,
    report: &mut VwReport,
    predictions: Option<&mut dyn Write>,
    audit: Option<&mut dyn Write>,
    lines: &mut dyn FnMut(&[String]) -> PolyResult<()>,
) -> PolyResult<RunEnd> {
    if options.batch_rows == 0 {
        return crate::invalid!("batch_rows must be at least 1");
    }
    let policy = learner.set_overflow_policy(options.overflow);
    let result = run_passes(learner, source, options, report, predictions, audit, lines);
    learner.set_overflow_policy(policy);
    learner.take_overflowed_rows();
    result
}

/// [`run`] under the run's overflow policy.
fn run_passes<E: Expansion>(
    learner: &mut Learner<E>,
    source: &Source,
    options: &RunOptions,
    report: &mut VwReport,
    mut predictions: Option<&mut dyn Write>,
    mut audit: Option<&mut dyn Write>,
    lines: &mut dyn FnMut(&[String]) -> PolyResult<()>,
) -> PolyResult<RunEnd> {
    let auditor = audit.is_some().then(|| Auditor::new(learner)).transpose()?;
    let names = learner.config().namespaces.clone();
    let holdout = options.holdout_period > 0;
    let mut source = source.clone();
    let (mut no_better, mut end) = (0, RunEnd { passes_run: 0, rows: 0 });
    let mut scratch = Scratch::default();
    for pass in 0..options.passes {
        let write_cache = if pass == 0 { options.write_cache.clone() } else { None };
        let wrote_cache = write_cache.as_ref().map(|(path, _)| path.clone());
        let mut counter = 0u64;
        std::thread::scope(|scope| -> PolyResult<()> {
            let (sender, receiver) = sync_channel::<PolyResult<VwColumns>>(QUEUED_BATCHES);
            let reading = source.clone();
            let columns = names.clone();
            let batch_rows = options.batch_rows;
            let names_kept = auditor.is_some();
            scope.spawn(move || {
                let deliver = |batch| sender.send(Ok(batch)).is_ok();
                let result =
                    read_batches(&reading, &columns, batch_rows, write_cache, names_kept, deliver);
                if let Err(error) = result {
                    let _ = sender.send(Err(error));
                }
            });
            learn_batches(
                learner,
                &receiver,
                options,
                &names,
                &mut counter,
                &mut end.rows,
                report,
                &mut predictions,
                auditor.as_ref(),
                &mut audit,
                lines,
                &mut scratch,
            )
        })?;
        if let (Some(path), Source::Text { options, .. }) = (wrote_cache, &source) {
            source = Source::Cache { path, options: options.clone() };
        }
        end.passes_run += 1;
        if report.end_pass() || !holdout {
            no_better = 0;
        } else {
            no_better += 1;
        }
        if holdout && no_better >= options.early_terminate {
            break;
        }
    }
    Ok(end)
}

/// Reads `source` batch by batch into `deliver` (which says whether to go on), as the
/// learner's `columns`, with the features' names when `names` (text only); writes the cache
/// `write_cache` on the way.
fn read_batches(
    source: &Source,
    columns: &[String],
    batch_rows: usize,
    write_cache: Option<(PathBuf, VwScan)>,
    names: bool,
    mut deliver: impl FnMut(VwColumns) -> bool,
) -> PolyResult<()> {
    match source {
        Source::Text { path, options } => {
            let options = VwOptions { namespaces: Some(columns.to_vec()), ..options.clone() };
            let mut writer = match write_cache {
                Some((cache, scan)) => {
                    let header = CacheHeader {
                        options: fingerprint(&options),
                        scan: VwScan { namespaces: columns.to_vec(), ..scan },
                    };
                    Some(CacheWriter::create(&cache, &header)?)
                }
                None => None,
            };
            let mut reader = VwReader::open(path, options)?.for_learner();
            if names {
                reader = reader.with_names()?;
            }
            while let Some(batch) = reader.next_columns(batch_rows)? {
                if let Some(writer) = &mut writer {
                    writer.append(&batch)?;
                }
                if !deliver(batch) {
                    return Ok(());
                }
            }
            if let Some(writer) = writer {
                writer.finish()?;
            }
        }
        Source::Cache { path, options } => {
            let mut reader = CacheReader::open(path)?;
            let header = reader.header().clone();
            let wanted = fingerprint(options);
            if header.options != wanted {
                return crate::invalid!(
                    "{}: the cache was written with other reader options ({}) than this run's \
                     ({wanted}); -k writes it again",
                    path.display(),
                    header.options
                );
            }
            let from: Vec<Option<usize>> = columns
                .iter()
                .map(|name| header.scan.namespaces.iter().position(|cached| cached == name))
                .collect();
            while let Some(mut batch) = reader.next_columns()? {
                let rows = batch.n_rows();
                let mut cached: Vec<Option<SparseMatrix<u32, f64>>> =
                    std::mem::take(&mut batch.columns).into_iter().map(Some).collect();
                batch.columns = from
                    .iter()
                    .map(|k| {
                        k.and_then(|k| cached[k].take()).unwrap_or_else(|| SparseMatrix {
                            offsets: vec![0; rows + 1],
                            indices: Vec::new(),
                            values: Vec::new(),
                        })
                    })
                    .collect();
                if !deliver(batch) {
                    return Ok(());
                }
            }
        }
    }
    Ok(())
}

/// Buffers reused from batch to batch.
#[derive(Default)]
struct Scratch {
    labels: Vec<f64>,
    scored_only: Vec<bool>,
    holdout: Vec<bool>,
    records: Vec<RowRecord>,
    lines: Vec<String>,
    text: String,
    /// Whether the run has warned of header fields read in part (once a run).
    warned_partly_read: bool,
}

/// Learns the batches `receiver` delivers until it is closed.
#[allow(clippy::too_many_arguments)]
fn learn_batches<E: Expansion>(
    learner: &mut Learner<E>,
    receiver: &Receiver<PolyResult<VwColumns>>,
    options: &RunOptions,
    names: &[String],
    counter: &mut u64,
    rows_read: &mut u64,
    report: &mut VwReport,
    predictions: &mut Option<&mut dyn Write>,
    auditor: Option<&Auditor>,
    audit: &mut Option<&mut dyn Write>,
    lines: &mut dyn FnMut(&[String]) -> PolyResult<()>,
    scratch: &mut Scratch,
) -> PolyResult<()> {
    for batch in receiver {
        let batch = batch?;
        crate::interrupt::check()?;
        if !scratch.warned_partly_read {
            if let Some(warning) = batch.partly_read.warning() {
                lines(&[format!("[warning] {warning}")])?;
                scratch.warned_partly_read = true;
            }
        }
        let n = batch.n_rows();
        let first_row = *rows_read as usize;
        scratch.labels.clear();
        scratch.scored_only.clear();
        scratch.holdout.clear();
        for (k, label) in batch.labels.iter().enumerate() {
            *counter += 1;
            let held = options.holdout_period > 0 && *counter % options.holdout_period == 0;
            scratch.holdout.push(held);
            scratch.scored_only.push(held || label.is_none() || options.test_only);
            scratch.labels.push(engine_label(*label, options.classes, first_row + k)?);
        }
        // Vowpal Wabbit's rows: features learned in file order, repeats apart.
        let rows: Vec<InOrderRows<'_, u32, f64>> = batch
            .columns
            .iter()
            .map(|c| {
                let rows = SparseRows::new(&c.offsets, &c.indices, &c.values)?;
                Ok(InOrderRows(rows.with_first_row(first_row)))
            })
            .collect::<PolyResult<_>>()?;
        let namespaces: Vec<&dyn NamespaceRows> =
            rows.iter().map(|r| r as &dyn NamespaceRows).collect();
        let examples = Batch::new(&namespaces, &scratch.labels, Some(&batch.importance))?
            .with_first_row(first_row)
            .with_names(names);
        scratch.records.clear();
        match (auditor, audit.as_mut()) {
            (Some(auditor), Some(out)) => {
                // Row by row: each row's audit shows the weights it is predicted with.
                for row in 0..n {
                    let features = auditor.features(learner, &batch, row);
                    let one = one_row(&rows, row);
                    let namespaces: Vec<&dyn NamespaceRows> =
                        one.iter().map(|r| r as &dyn NamespaceRows).collect();
                    let labels = &scratch.labels[row..=row];
                    let example =
                        Batch::new(&namespaces, labels, Some(&batch.importance[row..=row]))?
                            .with_first_row(first_row + row)
                            .with_names(names);
                    let scored_only = &scratch.scored_only[row..=row];
                    learner.learn_batch_scored(&example, scored_only, &mut scratch.records)?;
                    let prediction = scratch.records[row].prediction;
                    let mut text = String::new();
                    push_prediction(&mut text, prediction, batch.tags[row].as_deref());
                    text.push_str(&features);
                    text.push('\n');
                    out.write_all(text.as_bytes())
                        .map_err(|error| PolyError::io("the audit", "cannot write", &error))?;
                }
            }
            _ => {
                learner.learn_batch_scored(&examples, &scratch.scored_only, &mut scratch.records)?
            }
        }
        *rows_read += n as u64;
        scratch.lines.clear();
        for skipped in learner.take_overflowed_rows() {
            scratch.lines.push(format!(
                "[warning] example {}: {}: predicted 0 and not learned, as vw does",
                skipped.row + 1,
                skipped.reason
            ));
        }
        for (k, record) in scratch.records.iter_mut().enumerate() {
            let (label, weight) = (batch.labels[k], batch.importance[k]);
            *record = options.scorer.score(*record, label, weight);
            let row = ReportedRow { label, weight, record: *record, holdout: scratch.holdout[k] };
            report.add(&row, &mut scratch.lines);
        }
        if !scratch.lines.is_empty() {
            lines(&scratch.lines)?;
        }
        if let Some(out) = predictions {
            scratch.text.clear();
            for (record, tag) in scratch.records.iter().zip(&batch.tags) {
                push_prediction(&mut scratch.text, record.prediction, tag.as_deref());
            }
            out.write_all(scratch.text.as_bytes())
                .map_err(|error| PolyError::io("the predictions", "cannot write", &error))?;
        }
    }
    Ok(())
}

/// Row `row` of each of `rows` alone (its offsets' window over the same entries).
fn one_row<'a>(rows: &[InOrderRows<'a, u32, f64>], row: usize) -> Vec<InOrderRows<'a, u32, f64>> {
    rows.iter().map(|r| InOrderRows(r.0.window(row))).collect()
}

/// The label the engine learns: as it is, or a class as -1 / +1 (a row without a label is
/// scored only; any label will do).
fn engine_label(label: Option<f64>, classes: Option<(f64, f64)>, row: usize) -> PolyResult<f64> {
    match (label, classes) {
        (None, None) => Ok(0.0),
        (None, Some(_)) => Ok(-1.0),
        (Some(label), None) => Ok(label),
        (Some(label), Some((negative, positive))) => {
            if label == positive {
                Ok(1.0)
            } else if label == negative {
                Ok(-1.0)
            } else {
                crate::invalid!(
                    "row {row}: label {label} is not one of the model's classes \
                     ({negative}, {positive})"
                )
            }
        }
    }
}

/// Vowpal Wabbit's `-p` line: the prediction as a float (no decimals when whole, else six),
/// then the tag when the example has one.
pub fn push_prediction(text: &mut String, prediction: f64, tag: Option<&str>) {
    use std::fmt::Write as _;
    let value = f64::from(prediction as f32);
    let _ =
        if value.fract() == 0.0 { write!(text, "{value:.0}") } else { write!(text, "{value:.6}") };
    if let Some(tag) = tag.filter(|tag| !tag.is_empty()) {
        text.push(' ');
        text.push_str(tag);
    }
    text.push('\n');
}

#[cfg(test)]
mod tests;

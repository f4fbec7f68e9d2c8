//! What a run reports as it learns, in Vowpal Wabbit's words: the progressive table, the
//! holdout loss of multi-pass runs and the summary (`vw`'s shared data, rebuilt from the rows
//! the learner reports, [`RowRecord`]).
//!
//! The table prints a row when the weight of the examples seen reaches the next report point:
//! 1, 2, 4, ... by default, `-P N` every N, `-P 1.5` at 1.5 times the last. From the second pass
//! on, a run with a holdout prints the holdout loss, marked `h`, as `vw` does. The sums are
//! kept row by row in `vw`'s order (a double sum compared with a float report point), so the
//! table's rows fall where `vw`'s do.

use crate::error::PolyResult;
use crate::learner::{Loss, RowRecord};

/// Vowpal Wabbit's columns: (width, left-aligned), and their two-line titles.
const COLUMNS: [(usize, bool); 7] =
    [(8, true), (8, true), (12, false), (14, false), (14, false), (14, false), (8, false)];
const TITLES: [[&str; 7]; 2] = [
    ["average", "since", "example", "example", "current", "current", "current"],
    ["loss", "last", "counter", "weight", "label", "predict", "features"],
];

/// How often the table prints a row (`-P`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Progress {
    /// At `first`, then each point `factor` times the last (`vw`'s default: 1, 2, 4, ...).
    Times(f64),
    /// Every `step` of weight (`-P N`, a whole number).
    Every(f64),
}

impl Progress {
    /// `-P`'s text: a number with a `.` multiplies, one without adds (as in `vw`).
    pub fn parse(text: &str) -> PolyResult<Self> {
        let Ok(value) = text.parse::<f64>() else {
            return crate::invalid!("-P / --progress takes a number, got {text:?}");
        };
        if !value.is_finite() {
            return crate::invalid!("-P / --progress takes a finite number, got {text:?}");
        }
        Ok(if text.contains('.') {
            Progress::Times(if value <= 1.0 { value + 1.0 } else { value })
        } else {
            Progress::Every(value.max(1.0))
        })
    }
}

impl Default for Progress {
    fn default() -> Self {
        Progress::Times(2.0)
    }
}

/// One printed table row as numbers (`--history`).
#[derive(Clone, Debug, PartialEq)]
pub struct TableRow {
    pub examples: u64,
    pub weight: f64,
    /// `None` where the table prints a word ("n.a.", "unknown").
    pub average_loss: Option<f64>,
    pub loss_since_last: Option<f64>,
    pub holdout: bool,
    pub label: Option<f64>,
    pub prediction: f64,
    pub features: u64,
}

/// A row of a batch as the report takes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReportedRow {
    /// `None`: an example without a label (scored, not learned; no loss).
    pub label: Option<f64>,
    pub weight: f64,
    pub record: RowRecord,
    /// Held out of the pass (its loss is the holdout loss), not merely scored.
    pub holdout: bool,
}

/// The sums of [`VwReport`] a readable model keeps (`super::readable`), vw's names.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SharedData {
    pub sum_loss: f64,
    pub sum_loss_since_last_dump: f64,
    pub dump_interval: f64,
    pub weighted_labeled_examples: f64,
    pub weighted_labels: f64,
    pub weighted_unlabeled_examples: f64,
    pub example_number: u64,
    pub total_features: u64,
    pub old_weighted_labeled_examples: f64,
    pub current_pass: u32,
}

impl SharedData {
    /// A run of no data (`--no_stdin`): vw ends its one pass with the first report point.
    pub fn no_run() -> Self {
        SharedData { dump_interval: 1.0, current_pass: 1, ..SharedData::default() }
    }
}

/// Vowpal Wabbit's shared data of a run: sums, report points, the labels seen.
#[derive(Clone, Debug)]
pub struct VwReport {
    loss: Loss,
    holdout: bool,
    progress: Progress,
    /// Whether rows are printed (`--quiet` prints none) and kept (`--history`).
    printing: bool,
    keep_rows: bool,
    // Learned (or test) examples; held-out examples apart.
    examples: u64,
    weighted_labeled: f64,
    weighted_unlabeled: f64,
    weighted_labels: f64,
    sum_loss: f64,
    total_features: u64,
    holdout_loss: f64,
    holdout_weight: f64,
    holdout_best: f64,
    current_pass: u32,
    // Since the last table row, and since the pass began.
    loss_since_dump: f64,
    old_weighted_labeled: f64,
    holdout_loss_since_dump: f64,
    holdout_weight_since_dump: f64,
    holdout_loss_this_pass: f64,
    holdout_weight_this_pass: f64,
    // The first two distinct labels (as floats), and whether there were more.
    observed: Vec<f32>,
    more_labels: bool,
    dump_interval: f64,
    header_printed: bool,
    rows: Vec<TableRow>,
}

impl VwReport {
    /// A report of a run with `loss`; `holdout`: a multi-pass run that holds examples out.
    pub fn new(
        loss: Loss,
        holdout: bool,
        progress: Progress,
        printing: bool,
        keep_rows: bool,
    ) -> Self {
        let dump_interval = match progress {
            Progress::Times(_) => 1.0,
            Progress::Every(step) => step,
        };
        VwReport {
            loss,
            holdout,
            progress,
            printing,
            keep_rows,
            examples: 0,
            weighted_labeled: 0.0,
            weighted_unlabeled: 0.0,
            weighted_labels: 0.0,
            sum_loss: 0.0,
            total_features: 0,
            holdout_loss: 0.0,
            holdout_weight: 0.0,
            holdout_best: f64::INFINITY,
            current_pass: 0,
            loss_since_dump: 0.0,
            old_weighted_labeled: 0.0,
            holdout_loss_since_dump: 0.0,
            holdout_weight_since_dump: 0.0,
            holdout_loss_this_pass: 0.0,
            holdout_weight_this_pass: 0.0,
            observed: Vec::new(),
            more_labels: false,
            dump_interval,
            header_printed: false,
            rows: Vec::new(),
        }
    }

    fn weighted_examples(&self) -> f64 {
        self.weighted_labeled + self.weighted_unlabeled
    }

    /// The sums a readable model keeps.
    pub fn shared_data(&self) -> SharedData {
        SharedData {
            sum_loss: self.sum_loss,
            sum_loss_since_last_dump: self.loss_since_dump,
            dump_interval: self.dump_interval,
            weighted_labeled_examples: self.weighted_labeled,
            weighted_labels: self.weighted_labels,
            weighted_unlabeled_examples: self.weighted_unlabeled,
            example_number: self.examples,
            total_features: self.total_features,
            old_weighted_labeled_examples: self.old_weighted_labeled,
            current_pass: self.current_pass,
        }
    }

    /// Examples counted so far (learned or tested, not held out).
    pub fn examples(&self) -> u64 {
        self.examples
    }

    /// The table rows printed so far, as numbers (kept when asked for).
    pub fn rows(&self) -> &[TableRow] {
        &self.rows
    }

    /// Takes one row, in order; returns the table's lines it prints (none, or a row, after
    /// the title on the first).
    pub fn add(&mut self, row: &ReportedRow, out: &mut Vec<String>) {
        let labeled = row.label.is_some();
        if let Some(label) = row.label {
            self.observe(label as f32);
        }
        // A held-out row without a label counts as vw's do.
        let counted = !row.holdout || !labeled;
        let (w, loss) = (row.weight, if labeled { row.record.weighted_loss } else { 0.0 });
        if counted {
            self.examples += 1;
            if labeled {
                self.weighted_labeled += w;
            } else {
                self.weighted_unlabeled += w;
            }
            self.sum_loss += loss;
            self.loss_since_dump += loss;
            self.total_features += row.record.features;
            if let Some(label) = row.label {
                // vw's labels are floats, their sum a double.
                self.weighted_labels += f64::from(label as f32) * w;
            }
        } else {
            self.holdout_loss += loss;
            self.holdout_weight += w;
            self.holdout_loss_since_dump += loss;
            self.holdout_weight_since_dump += w;
            self.holdout_loss_this_pass += loss;
            self.holdout_weight_this_pass += w;
        }
        if counted
            && (self.printing || self.keep_rows)
            && self.weighted_examples() >= self.dump_interval
        {
            self.table_row(row.label, row.record.prediction, row.record.features, out);
        }
    }

    fn observe(&mut self, label: f32) {
        if self.more_labels || self.observed.contains(&label) {
            return;
        }
        if self.observed.len() == 2 {
            self.more_labels = true;
        } else {
            self.observed.push(label);
        }
    }

    fn table_row(
        &mut self,
        label: Option<f64>,
        prediction: f64,
        features: u64,
        out: &mut Vec<String>,
    ) {
        if self.printing && !self.header_printed {
            out.extend(TITLES.iter().map(cells));
            self.header_printed = true;
        }
        let holding_out = self.holdout && self.current_pass >= 1;
        let (average, since) = if holding_out {
            let average = ratio(self.holdout_loss, self.holdout_weight, "unknown");
            let since =
                ratio(self.holdout_loss_since_dump, self.holdout_weight_since_dump, "unknown");
            self.holdout_loss_since_dump = 0.0;
            self.holdout_weight_since_dump = 0.0;
            (average, since)
        } else {
            let average = ratio(self.sum_loss, self.weighted_labeled, "n.a.");
            let gained = self.weighted_labeled - self.old_weighted_labeled;
            let since = if gained != 0.0 {
                ratio(self.loss_since_dump, gained, "n.a.")
            } else {
                "n.a.".to_owned()
            };
            (average, since)
        };
        let texts = [
            average.clone(),
            since.clone(),
            self.examples.to_string(),
            format!("{:.1}", self.weighted_examples()),
            label.map_or_else(|| "unknown".to_owned(), |label| format!("{label:.4}")),
            format!("{prediction:.4}"),
            features.to_string(),
        ];
        if self.printing {
            let line = cells(&texts.each_ref().map(String::as_str));
            out.push(if holding_out { line + " h" } else { line });
        }
        if self.keep_rows {
            self.rows.push(TableRow {
                examples: self.examples,
                weight: self.weighted_examples(),
                average_loss: average.parse().ok(),
                loss_since_last: since.parse().ok(),
                holdout: holding_out,
                label,
                prediction,
                features,
            });
        }
        self.loss_since_dump = 0.0;
        self.old_weighted_labeled = self.weighted_labeled;
        let now = self.weighted_examples();
        // vw's report point is a float.
        self.dump_interval = match self.progress {
            Progress::Every(step) => f64::from((now + step) as f32),
            Progress::Times(factor) => f64::from((now * factor) as f32),
        };
    }

    /// A pass ended: whether its holdout loss is the best so far (vw's rule; a pass with no
    /// holdout example is no better).
    pub fn end_pass(&mut self) -> bool {
        self.current_pass += 1;
        if !self.holdout {
            return false;
        }
        let weight = self.holdout_weight_this_pass;
        let loss = if weight > 0.0 { self.holdout_loss_this_pass / weight } else { f64::INFINITY };
        self.holdout_loss_this_pass = 0.0;
        self.holdout_weight_this_pass = 0.0;
        if loss < self.holdout_best {
            self.holdout_best = loss;
            return true;
        }
        false
    }

    /// Vowpal Wabbit's lines after `finished run`, from the blank line before it.
    pub fn summary(&self) -> Vec<String> {
        let mut lines = vec![String::new(), "finished run".to_owned()];
        if self.current_pass <= 1 {
            lines.push(format!("number of examples = {}", self.examples));
        } else {
            let per_pass = self.examples / u64::from(self.current_pass);
            lines.push(format!("number of examples per pass = {per_pass}"));
            lines.push(format!("passes used = {}", self.current_pass));
        }
        lines.push(format!("weighted example sum = {:.6}", self.weighted_examples()));
        lines.push(format!("weighted label sum = {:.6}", self.weighted_labels));
        let average = if !self.holdout {
            ratio(self.sum_loss, self.weighted_labeled, "n.a.")
        } else if self.holdout_best.is_infinite() {
            "undefined (no holdout)".to_owned()
        } else {
            format!("{:.6} h", self.holdout_best)
        };
        lines.push(format!("average loss = {average}"));
        if let Some((constant, loss)) = self.best_constant() {
            lines.push(format!("best constant = {constant:.6}"));
            if let Some(loss) = loss {
                lines.push(format!("best constant's loss = {loss:.6}"));
            }
        }
        lines.push(format!("total feature number = {}", self.total_features));
        lines
    }

    /// Vowpal Wabbit's best constant prediction and its loss (`None` where vw prints none;
    /// a loss of `None` where it prints the constant alone).
    pub fn best_constant(&self) -> Option<(f64, Option<f64>)> {
        let first = f64::from(*self.observed.first()?);
        let second = self.observed.get(1).map_or(0.0, |&label| f64::from(label));
        let (mut low, mut high) = (first.min(second), first.max(second));
        if low == high {
            return None;
        }
        let total = self.weighted_labeled;
        let low_count = (self.weighted_labels - high * total) / (low - high);
        let high_count = total - low_count;
        if low_count + high_count <= 0.0 {
            return None;
        }
        if self.more_labels && !matches!(self.loss, Loss::Squared(_)) {
            return None;
        }
        let constant = match self.loss {
            Loss::Squared(_) => self.weighted_labels / total,
            Loss::Hinge(_) => {
                if high_count <= low_count {
                    -1.0
                } else {
                    1.0
                }
            }
            Loss::Logistic(_) => {
                (low, high) = (-1.0, 1.0);
                if low_count <= 0.0 {
                    1.0
                } else if high_count <= 0.0 {
                    -1.0
                } else {
                    (high_count / low_count).ln()
                }
            }
            Loss::Quantile(quantile) => {
                if quantile.tau * (low_count + high_count) < high_count {
                    high
                } else {
                    low
                }
            }
        };
        if self.more_labels {
            return Some((constant, None));
        }
        let mut loss = 0.0;
        if low_count > 0.0 {
            loss += self.loss.value(constant, low) * low_count;
        }
        if high_count > 0.0 {
            loss += self.loss.value(constant, high) * high_count;
        }
        Some((constant, Some(loss / (low_count + high_count))))
    }
}

/// One table line: each text cut to its column's width and aligned, trailing spaces dropped.
fn cells(texts: &[&str; 7]) -> String {
    let mut line = String::new();
    for (k, (text, &(width, left))) in texts.iter().zip(COLUMNS.iter()).enumerate() {
        if k > 0 {
            line.push(' ');
        }
        let text: String = text.chars().take(width).collect();
        if left {
            line.push_str(&format!("{text:<width$}"));
        } else {
            line.push_str(&format!("{text:>width$}"));
        }
    }
    line.truncate(line.trim_end().len());
    line
}

fn ratio(total: f64, weight: f64, otherwise: &str) -> String {
    if total == 0.0 && weight == 0.0 {
        return otherwise.to_owned();
    }
    if weight != 0.0 {
        format!("{:.6}", total / weight)
    } else {
        otherwise.to_owned()
    }
}

#[cfg(test)]
mod tests;

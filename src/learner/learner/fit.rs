//! [`Learner::fit`]: several passes over in-memory data, with a seeded shuffle, a holdout set for
//! early stopping and tail averaging.

use super::*;

impl<E: Expansion> Learner<E> {
    /// Multi-pass training over in-memory data (see [`FitOptions`]).
    pub fn fit(&mut self, batch: &Batch<'_>, options: &FitOptions) -> PolyResult<FitReport> {
        if options.passes == 0 {
            return crate::invalid!("passes must be at least 1, got 0");
        }
        let tail = options.average_tail;
        if !(0.0..=1.0).contains(&tail) {
            return crate::invalid!("average_tail must be in [0, 1], got {tail}");
        }
        if tail > 0.0 && (self.config.l1 > 0.0 || self.config.l2 > 0.0) {
            return crate::invalid!(
                "average_tail cannot be combined with l1/l2 (their lazy scaling rewrites the \
                 whole table); set average_tail=0 or l1=l2=0"
            );
        }
        self.check_batch(batch)?;
        let n = batch.n_rows();
        let period = if options.passes > 1 { options.holdout } else { 0 };
        let is_holdout = |row: usize| period > 0 && row % period == period - 1;
        let learned_per_pass = (0..n).filter(|&row| !is_holdout(row)).count() as u64;
        let run_length = learned_per_pass * options.passes as u64;
        self.begin_run(run_length)?;
        self.average = None;
        if tail > 0.0 {
            let window = ((run_length as f64 * tail).ceil() as u64).min(run_length);
            let start = self.progress.examples + run_length - window;
            self.average = Some(TailAverage::new(start, self.weights.n_slots())?);
        }
        let mut order: Vec<usize> = (0..n).collect();
        let mut rng = options.rng();
        let mut report = FitReport::default();
        let mut best = f64::INFINITY;
        let mut since_best = 0;
        let result = (|| {
            for _ in 0..options.passes {
                if options.shuffle {
                    rng.shuffle(&mut order);
                }
                let before = (self.progress.weighted_loss, self.progress.weight);
                let record = |row: Visited<'_>| {
                    if let Visited::Learned { progress, .. } = row {
                        if progress.examples.is_power_of_two() {
                            report.progress.push(progress.clone());
                        }
                    }
                };
                let (holdout_loss, holdout_weight) =
                    self.learn_rows(batch, order.iter().copied(), is_holdout, record)?;
                if report.progress.last() != Some(&self.progress) {
                    report.progress.push(self.progress.clone());
                }
                report.passes_run += 1;
                let learned = self.progress.weight - before.1;
                report.pass_loss.push(if learned > 0.0 {
                    (self.progress.weighted_loss - before.0) / learned
                } else {
                    f64::NAN
                });
                if period > 0 && holdout_weight > 0.0 {
                    let loss = holdout_loss / holdout_weight;
                    report.holdout_loss.push(loss);
                    if loss < best {
                        best = loss;
                        since_best = 0;
                    } else {
                        since_best += 1;
                        if options.n_iter_no_change > 0 && since_best >= options.n_iter_no_change {
                            report.stopped_early = true;
                            break;
                        }
                    }
                }
            }
            Ok(())
        })();
        if let Some(average) = self.average.take() {
            if result.is_ok() && self.weights.is_allocated() {
                let stride = self.weights.stride();
                average.finish(self.progress.examples, self.weights.data_mut(), stride);
            }
        }
        result.map(|()| report)
    }
}

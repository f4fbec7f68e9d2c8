//! What Vowpal Wabbit's `scorer` and `binary` reductions make of a learned row: the prediction
//! shown in the table and written by `-p` (`--link`), and with `--binary` a class and a 0/1
//! loss. Learning never sees either: the learner learns from its raw prediction, as in Vowpal
//! Wabbit, whose average loss `--link` leaves unchanged.

use crate::learner::RowRecord;

/// `--link`: the function applied to the raw prediction before it is shown or written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Link {
    #[default]
    Identity,
    /// `1 / (1 + e^-p)`.
    Logistic,
    /// `2 / (1 + e^-p) - 1`, the logistic squashed into (-1, 1).
    Glf1,
    /// `e^p`.
    Poisson,
}

impl Link {
    /// The link named as Vowpal Wabbit names it.
    pub fn parse(name: &str) -> Option<Link> {
        match name {
            "identity" => Some(Link::Identity),
            "logistic" => Some(Link::Logistic),
            "glf1" => Some(Link::Glf1),
            "poisson" => Some(Link::Poisson),
            _ => None,
        }
    }

    /// In single precision, as Vowpal Wabbit computes it.
    pub fn apply(self, raw: f64) -> f64 {
        let raw = raw as f32;
        let linked = match self {
            Link::Identity => raw,
            Link::Logistic => 1.0 / (1.0 + (-raw).exp()),
            Link::Glf1 => 2.0 / (1.0 + (-raw).exp()) - 1.0,
            Link::Poisson => raw.exp(),
        };
        f64::from(linked)
    }
}

/// How a run's rows are shown: `--link` and `--binary`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scorer {
    pub link: Link,
    /// `--binary`: the class (+1 when the linked prediction is positive, else -1), and a loss
    /// of the row's weight when a -1/+1 label differs from it, 0 when equal (a label that is
    /// neither keeps the learner's loss, as in Vowpal Wabbit).
    pub binary: bool,
}

impl Scorer {
    /// `record` as shown, for a row labelled `label` of importance `weight`.
    pub fn score(&self, mut record: RowRecord, label: Option<f64>, weight: f64) -> RowRecord {
        record.prediction = self.link.apply(record.prediction);
        if self.binary {
            record.prediction = if record.prediction > 0.0 { 1.0 } else { -1.0 };
            if let Some(label) = label.filter(|label| label.abs() == 1.0) {
                record.weighted_loss = if label == record.prediction { 0.0 } else { weight };
            }
        }
        record
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(prediction: f64) -> RowRecord {
        RowRecord { prediction, weighted_loss: 0.25, features: 3, held_out: false }
    }

    #[test]
    fn links_are_vowpal_wabbits_functions() {
        for raw in [-3.0f64, -0.5, 0.0, 0.31, 2.0] {
            let p = 1.0 / (1.0 + (-raw).exp());
            assert!((Link::Logistic.apply(raw) - p).abs() < 1e-6);
            assert!((Link::Glf1.apply(raw) - (2.0 * p - 1.0)).abs() < 1e-6);
            assert!((Link::Poisson.apply(raw) - raw.exp()).abs() < 1e-5 * raw.exp());
            assert_eq!(Link::Identity.apply(raw), f64::from(raw as f32));
        }
        assert_eq!(Link::parse("glf1"), Some(Link::Glf1));
        assert_eq!(Link::parse("probit"), None);
    }

    #[test]
    fn binary_shows_the_class_and_a_zero_one_loss_for_signed_labels_only() {
        let binary = Scorer { link: Link::Identity, binary: true };
        let shown = binary.score(record(0.3), Some(-1.0), 2.0);
        assert_eq!((shown.prediction, shown.weighted_loss), (1.0, 2.0));
        let shown = binary.score(record(0.0), Some(-1.0), 2.0);
        assert_eq!((shown.prediction, shown.weighted_loss), (-1.0, 0.0));
        // A 0/1 label keeps the learner's loss; an unlabelled row has none to change.
        assert_eq!(binary.score(record(0.3), Some(0.0), 1.0).weighted_loss, 0.25);
        assert_eq!(binary.score(record(-0.3), None, 1.0).prediction, -1.0);
        // The link comes first: a logistic link is always positive.
        let both = Scorer { link: Link::Logistic, binary: true };
        assert_eq!(both.score(record(-5.0), Some(1.0), 1.0).prediction, 1.0);
    }
}

//! The model layer, above the learners: what a saved model is and how it is stored.
//!
//! * [`feature_set`]: [`FeatureSet`], the registry of feature enumerators (fixed interactions,
//!   apple) the online learner can train with; the learner itself knows only the
//!   [`crate::learner::Expansion`] trait and never names apple.
//! * [`options`]: [`LearnerOptions`], the typed options of an online model (a passive-aggressive
//!   classifier's are [`crate::dos::PassiveAggressiveOptions`]).
//! * [`file`]: the one model-file container (versioned, checksummed, one section per
//!   component); [`legacy`]: the reader of the older flat format.
//!
//! Import direction: `model` → `learner`, `apple`, `dos` → `codec`, `error`; nothing below
//! imports `model`.

pub mod average;
pub mod feature_set;
pub mod file;
pub(crate) mod legacy;
pub mod options;

use std::path::Path;

pub use feature_set::{FeatureSet, FeatureSetOptions};
pub use options::LearnerOptions;

use crate::codec::bad;
use crate::dos::PassiveAggressive;
use crate::error::PolyResult;
use crate::learner::Learner;
use crate::versions;
use file::{Checked, ReadSections, Sections};

/// An online model: the hashed learner with its feature enumerator.
pub type OnlineModel = Learner<FeatureSet>;

/// Every kind of model a file can hold.
// A model is read once and moved into its owner; boxing the large variant would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Model {
    Online(OnlineModel),
    /// A multiclass model: one online model per class, each learning "this class or not"
    /// (Vowpal Wabbit's `--oaa`, scikit-learn's one-vs-rest), in the order of the classes.
    OneAgainstAll(Vec<OnlineModel>),
    PassiveAggressive(PassiveAggressive),
}

const LEARNER: &str = "learner";
const FEATURES: &str = "features";
const PASSIVE_AGGRESSIVE: &str = "passive_aggressive";
const ONE_AGAINST_ALL: &str = "one_against_all";
/// Most classes a one-against-all model may hold (bounds what a damaged count can allocate).
pub const MAX_CLASSES: usize = 1 << 16;
const ESTIMATOR: &str = "estimator";

/// A borrowed [`Model`], what writing takes (a model is never copied to be saved).
#[derive(Clone, Copy)]
pub enum ModelRef<'a> {
    Online(&'a OnlineModel),
    OneAgainstAll(&'a [&'a OnlineModel]),
    PassiveAggressive(&'a PassiveAggressive),
}

impl<'m> ModelRef<'m> {
    /// The model file's bytes, with `estimator` (the Python layer's own state) in its section.
    pub fn to_bytes(self, estimator: &str) -> Vec<u8> {
        self.file(estimator).to_bytes()
    }

    /// Writes the model file, each section streamed to it (see [`Sections`]).
    pub fn save(self, estimator: &str, path: &Path) -> PolyResult<()> {
        file::save_sections(&self.file(estimator), path)
    }

    /// The model file as [`Sections`] (to size it, then write it into a buffer of that size).
    pub fn file<'s>(self, estimator: &'s str) -> Sections<'s>
    where
        'm: 's,
    {
        let mut sections = Sections::new();
        match self {
            ModelRef::Online(learner) => {
                sections.add(LEARNER, |w| learner.write_section(w));
                let features = learner.expansion();
                sections.add(FEATURES, |w| {
                    w.str(features.kind());
                    features.write_section(w);
                });
            }
            // One section: the class count, then each class's enumerator and learner.
            ModelRef::OneAgainstAll(heads) => {
                sections.add(ONE_AGAINST_ALL, move |w| {
                    w.u32(heads.len() as u32);
                    for head in heads {
                        let features = head.expansion();
                        w.str(features.kind());
                        features.write_section(w);
                        head.write_section(w);
                    }
                });
            }
            ModelRef::PassiveAggressive(classifier) => {
                sections.add(PASSIVE_AGGRESSIVE, |w| classifier.write_section(w));
            }
        }
        sections.add(ESTIMATOR, |w| w.str(estimator));
        sections
    }
}

impl Model {
    /// The model file's bytes (see [`ModelRef::to_bytes`]).
    pub fn to_bytes(&self, estimator: &str) -> Vec<u8> {
        match self {
            Model::Online(learner) => ModelRef::Online(learner).to_bytes(estimator),
            Model::OneAgainstAll(models) => {
                let heads: Vec<&OnlineModel> = models.iter().collect();
                ModelRef::OneAgainstAll(&heads).to_bytes(estimator)
            }
            Model::PassiveAggressive(classifier) => {
                ModelRef::PassiveAggressive(classifier).to_bytes(estimator)
            }
        }
    }

    /// A model and its estimator text from a model file's bytes (any supported version).
    pub fn from_bytes(bytes: &[u8]) -> PolyResult<(Model, String)> {
        let Checked { version, payload } = file::check(bytes)?;
        if version < versions::SECTIONED {
            let (learner, metadata) = legacy::read(version, payload)?;
            return Ok((Model::Online(learner), metadata));
        }
        let sections = ReadSections::parse(payload)?;
        let estimator = sections.read(ESTIMATOR, |r| r.string("estimator"))?;
        let model = if sections.has(LEARNER) {
            let features = sections.read(FEATURES, |r| {
                let kind = r.string("feature enumerator")?;
                FeatureSet::read_section(&kind, r, version)
            })?;
            Model::Online(sections.read(LEARNER, |r| Learner::read_section(r, features, version))?)
        } else if sections.has(ONE_AGAINST_ALL) {
            Model::OneAgainstAll(sections.read(ONE_AGAINST_ALL, |r| {
                let n = r.u32("class count")? as usize;
                if !(2..=MAX_CLASSES).contains(&n) {
                    return Err(bad(format!("a one-against-all model of {n} classes")));
                }
                (0..n)
                    .map(|_| {
                        let kind = r.string("feature enumerator")?;
                        let features = FeatureSet::read_section(&kind, r, version)?;
                        Learner::read_section(r, features, version)
                    })
                    .collect::<PolyResult<Vec<_>>>()
            })?)
        } else if sections.has(PASSIVE_AGGRESSIVE) {
            Model::PassiveAggressive(
                sections
                    .read(PASSIVE_AGGRESSIVE, |r| PassiveAggressive::read_section(r, version))?,
            )
        } else {
            return Err(bad("the file holds no model section this build knows"));
        };
        Ok((model, estimator))
    }

    /// Reads a model file.
    pub fn load(path: &Path) -> PolyResult<(Model, String)> {
        Model::from_bytes(&file::read_file(path)?).map_err(file::in_file(path))
    }
}

#[cfg(test)]
mod tests;

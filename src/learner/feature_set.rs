//! [`FeatureSet`]: the enumerators a saved model can have: a fixed expansion ([`Interactions`])
//! or apple's adaptive one. The Python layer and the model file work with this one type.

use super::example::Example;
use super::expansion::{ExpandedFeatures, Expansion, Interactions, Learned};
use crate::apple::Apple;
use crate::error::PolyResult;

#[derive(Clone, Debug, PartialEq)]
pub enum FeatureSet {
    Fixed(Interactions),
    Apple(Box<Apple>),
}

impl FeatureSet {
    /// The apple state, when the model grows its features.
    pub fn apple(&self) -> Option<&Apple> {
        match self {
            FeatureSet::Apple(apple) => Some(apple),
            FeatureSet::Fixed(_) => None,
        }
    }
}

impl From<Interactions> for FeatureSet {
    fn from(fixed: Interactions) -> Self {
        FeatureSet::Fixed(fixed)
    }
}

impl From<Apple> for FeatureSet {
    fn from(apple: Apple) -> Self {
        FeatureSet::Apple(Box::new(apple))
    }
}

impl Expansion for FeatureSet {
    #[inline]
    fn expand(&self, example: &Example<'_>, out: &mut ExpandedFeatures) {
        match self {
            FeatureSet::Fixed(e) => e.expand(example, out),
            FeatureSet::Apple(e) => e.expand(example, out),
        }
    }

    fn validate(&self, n_namespaces: usize) -> PolyResult<()> {
        match self {
            FeatureSet::Fixed(e) => e.validate(n_namespaces),
            FeatureSet::Apple(e) => e.validate(n_namespaces),
        }
    }

    fn check(&self, example: &Example<'_>, row: usize) -> PolyResult<()> {
        match self {
            FeatureSet::Fixed(e) => e.check(example, row),
            FeatureSet::Apple(e) => e.check(example, row),
        }
    }

    fn begin_run(&mut self, examples: u64) {
        if let FeatureSet::Apple(e) = self {
            e.begin_run(examples);
        }
    }

    #[inline]
    fn after_learn(&mut self, example: &Example<'_>, learned: &Learned<'_>) {
        if let FeatureSet::Apple(e) = self {
            e.after_learn(example, learned);
        }
    }
}

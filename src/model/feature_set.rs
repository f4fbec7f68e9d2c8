//! [`FeatureSet`]: the registry of feature enumerators a model can have — the learner's fixed
//! expansion ([`Interactions`]), apple's adaptive one, field-level apple's crosses of fields, or
//! apple with field crosses (both at once: apple's monomials over the whole example, and crosses
//! of its fields found by screening). The learner knows only the
//! [`Expansion`] trait; this layer above it names the enumerators, builds them from options and
//! stores each in its own model-file section, written and read by the enumerator itself.
//! Adding an enumerator: its variant and its arm in each `match` here (no catch-all arm).

use crate::apple::categorical::CategoricalNamespaces;
use crate::apple::{Apple, AppleConfig};
use crate::codec::{bad, ByteReader, ByteWriter};
use crate::error::PolyResult;
use crate::field_apple::{FieldApple, FieldAppleConfig};
use crate::learner::expansion::vw_crosses;
use crate::learner::{
    BlockRows, Example, ExampleEnd, ExampleShape, ExpandedFeatures, Expansion, Interactions,
    Learned,
};
use crate::versions;

/// The section's last byte: apple's categorical namespaces are not stored (apple takes parents
/// from every namespace), left to the field crosses as parents (formats 6 and 7), or as
/// parents and as factors of children (format 8 on; see [`crate::apple::categorical`]).
const CATEGORICAL_NONE: u8 = 0;
const CATEGORICAL_PARENTS: u8 = 1;
const CATEGORICAL_PARENTS_AND_FACTORS: u8 = 2;

#[derive(Clone, Debug, PartialEq)]
pub enum FeatureSet {
    Interactions(Interactions),
    Apple(Box<Apple>),
    FieldApple(Box<FieldApple>),
    /// apple (its linear features, monomials and constant) plus the field crosses a
    /// [`FieldApple`] without linear features finds.
    AppleFields(Box<Apple>, Box<FieldApple>),
}

/// How the Python layer (and any caller) describes a feature set: the serde form, tagged by
/// `kind` (`{"kind": "interactions", "degree": 2, "namespace_crosses": [[0, 1], [0, 1, 2]]}` or
/// `{"kind": "apple", "alpha": 1.0, ...}`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum FeatureSetOptions {
    /// All monomials up to `degree` (1..=3) plus the namespace crosses (each of two or more
    /// namespaces, made canonical by Vowpal Wabbit's rules: [`vw_crosses`]).
    Interactions { degree: u8, namespace_crosses: Vec<Vec<usize>> },
    /// apple's adaptive expansion.
    Apple(AppleConfig),
    /// field-level apple: crosses of fields found by screening.
    FieldApple(FieldAppleConfig),
    /// apple with field crosses (`{"kind": "apple_fields", "apple": {...}, "fields": {...}}`).
    AppleFields { apple: AppleConfig, fields: FieldAppleConfig },
}

impl FeatureSet {
    /// The enumerator these options describe; `constant` adds the constant feature.
    pub fn new(options: FeatureSetOptions, constant: bool) -> PolyResult<Self> {
        Ok(match options {
            FeatureSetOptions::Interactions { degree, namespace_crosses } => {
                let namespace_crosses = vw_crosses(namespace_crosses);
                FeatureSet::Interactions(Interactions { degree, namespace_crosses, constant })
            }
            FeatureSetOptions::Apple(config) => {
                FeatureSet::from(Apple::new(AppleConfig { constant, ..config })?)
            }
            FeatureSetOptions::FieldApple(config) => {
                FeatureSet::FieldApple(Box::new(FieldApple::new(FieldAppleConfig {
                    constant,
                    ..config
                })?))
            }
            FeatureSetOptions::AppleFields { apple, fields } => {
                let mut apple = Apple::new(AppleConfig { constant, ..apple })?;
                apple.leave_categorical_to_field_crosses(CategoricalNamespaces::default());
                FeatureSet::AppleFields(
                    Box::new(apple),
                    // apple emits the linear features and the constant.
                    Box::new(FieldApple::new(FieldAppleConfig { constant: false, ..fields })?),
                )
            }
        })
    }

    /// The options that rebuild this enumerator (untrained), and its constant flag.
    pub fn options(&self) -> (FeatureSetOptions, bool) {
        match self {
            FeatureSet::Interactions(fixed) => (
                FeatureSetOptions::Interactions {
                    degree: fixed.degree,
                    namespace_crosses: fixed.namespace_crosses.clone(),
                },
                fixed.constant,
            ),
            FeatureSet::Apple(apple) => {
                (FeatureSetOptions::Apple(apple.config().clone()), apple.config().constant)
            }
            FeatureSet::FieldApple(fields) => {
                (FeatureSetOptions::FieldApple(fields.config().clone()), fields.config().constant)
            }
            FeatureSet::AppleFields(apple, fields) => (
                FeatureSetOptions::AppleFields {
                    apple: apple.config().clone(),
                    fields: fields.config().clone(),
                },
                apple.config().constant,
            ),
        }
    }

    /// The apple state, when the model grows its features.
    pub fn apple(&self) -> Option<&Apple> {
        match self {
            FeatureSet::Apple(apple) | FeatureSet::AppleFields(apple, _) => Some(apple),
            FeatureSet::Interactions(_) | FeatureSet::FieldApple(_) => None,
        }
    }

    /// The apple state, mutable (to change its ranking: [`Apple::set_ranking`]).
    pub fn apple_mut(&mut self) -> Option<&mut Apple> {
        match self {
            FeatureSet::Apple(apple) | FeatureSet::AppleFields(apple, _) => Some(apple),
            FeatureSet::Interactions(_) | FeatureSet::FieldApple(_) => None,
        }
    }

    /// The field-level apple state, when the model grows crosses of fields.
    pub fn field_apple(&self) -> Option<&FieldApple> {
        match self {
            FeatureSet::FieldApple(fields) | FeatureSet::AppleFields(_, fields) => Some(fields),
            FeatureSet::Interactions(_) | FeatureSet::Apple(_) => None,
        }
    }

    /// The name of the enumerator's model-file section.
    pub fn kind(&self) -> &'static str {
        match self {
            FeatureSet::Interactions(_) => "interactions",
            FeatureSet::Apple(_) => "apple",
            FeatureSet::FieldApple(_) => "field_apple",
            FeatureSet::AppleFields(..) => "apple_fields",
        }
    }

    /// Writes the enumerator's own section.
    pub fn write_section(&self, w: &mut ByteWriter) {
        match self {
            FeatureSet::Interactions(fixed) => fixed.write_section(w),
            FeatureSet::Apple(apple) => apple.write_section(w),
            FeatureSet::FieldApple(fields) => fields.write_section(w),
            // Each component's own bytes, apple's first, then (format 6 on) what apple leaves
            // to the crosses: a `CATEGORICAL_*` byte, then the namespaces' flags unless
            // `CATEGORICAL_NONE` (a model first saved by format 5 or earlier).
            FeatureSet::AppleFields(apple, fields) => {
                apple.write_section(w);
                fields.write_section(w);
                match apple.categorical() {
                    Some(categorical) => {
                        w.u8(if categorical.not_factors() {
                            CATEGORICAL_PARENTS_AND_FACTORS
                        } else {
                            CATEGORICAL_PARENTS
                        });
                        categorical.write(w);
                    }
                    None => w.u8(CATEGORICAL_NONE),
                }
            }
        }
    }

    /// Reads the section of the enumerator called `kind` from a file of format `version`.
    pub fn read_section(kind: &str, r: &mut ByteReader<'_>, version: u32) -> PolyResult<Self> {
        match kind {
            "interactions" => Ok(FeatureSet::Interactions(Interactions::read_section(r, version)?)),
            "apple" => Ok(FeatureSet::from(Apple::read_section(r, version)?)),
            "field_apple" => {
                Ok(FeatureSet::FieldApple(Box::new(FieldApple::read_section(r, version)?)))
            }
            "apple_fields" => {
                let mut apple = Apple::read_section(r, version)?;
                let fields = FieldApple::read_section(r, version)?;
                if version >= versions::CATEGORICAL {
                    match r.u8("apple categorical flag")? {
                        CATEGORICAL_NONE => {}
                        CATEGORICAL_PARENTS => apple.leave_categorical_to_field_crosses(
                            CategoricalNamespaces::read(r)?.parents_only(),
                        ),
                        CATEGORICAL_PARENTS_AND_FACTORS => apple
                            .leave_categorical_to_field_crosses(CategoricalNamespaces::read(r)?),
                        other => {
                            return Err(bad(format!(
                                "apple categorical flag {other} is not 0, 1 or 2"
                            )))
                        }
                    }
                }
                Ok(FeatureSet::AppleFields(Box::new(apple), Box::new(fields)))
            }
            other => Err(bad(format!(
                "unknown feature enumerator {other:?} (this build knows \"interactions\", \
                 \"apple\", \"field_apple\" and \"apple_fields\")"
            ))),
        }
    }
}

impl From<Interactions> for FeatureSet {
    fn from(fixed: Interactions) -> Self {
        FeatureSet::Interactions(fixed)
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
            FeatureSet::Interactions(e) => e.expand(example, out),
            FeatureSet::Apple(e) => e.expand(example, out),
            FeatureSet::FieldApple(e) => e.expand(example, out),
            FeatureSet::AppleFields(apple, fields) => {
                if apple.parents().is_empty() {
                    fields.expand_linear(example, out, apple.config().constant);
                } else {
                    apple.expand(example, out);
                    fields.expand_crosses(example, out);
                }
            }
        }
    }

    fn uses_feature_set(&self) -> bool {
        match self {
            FeatureSet::Interactions(e) => e.uses_feature_set(),
            FeatureSet::Apple(e) => e.uses_feature_set(),
            FeatureSet::FieldApple(e) => e.uses_feature_set(),
            FeatureSet::AppleFields(apple, fields) => {
                apple.uses_feature_set() || fields.uses_feature_set()
            }
        }
    }

    fn validate(&self, n_namespaces: usize) -> PolyResult<()> {
        match self {
            FeatureSet::Interactions(e) => e.validate(n_namespaces),
            FeatureSet::Apple(e) => e.validate(n_namespaces),
            FeatureSet::FieldApple(e) => e.validate(n_namespaces),
            FeatureSet::AppleFields(apple, fields) => {
                apple.validate(n_namespaces)?;
                fields.validate(n_namespaces)
            }
        }
    }

    fn check(&self, example: &Example<'_>, row: usize) -> PolyResult<()> {
        match self {
            FeatureSet::Interactions(e) => e.check(example, row),
            FeatureSet::Apple(e) => e.check(example, row),
            FeatureSet::FieldApple(e) => e.check(example, row),
            FeatureSet::AppleFields(apple, fields) => {
                apple.check(example, row)?;
                fields.check(example, row)
            }
        }
    }

    fn begin_run(&mut self, examples: u64) {
        match self {
            FeatureSet::Interactions(e) => e.begin_run(examples),
            FeatureSet::Apple(e) => e.begin_run(examples),
            FeatureSet::FieldApple(e) => e.begin_run(examples),
            FeatureSet::AppleFields(apple, fields) => {
                apple.begin_run(examples);
                fields.begin_run(examples);
            }
        }
    }

    fn generation(&self) -> u64 {
        match self {
            FeatureSet::Interactions(e) => e.generation(),
            FeatureSet::Apple(e) => e.generation(),
            FeatureSet::FieldApple(e) => e.generation(),
            // Both only grow, so their sum changes whenever either does.
            FeatureSet::AppleFields(apple, fields) => apple.generation() + fields.generation(),
        }
    }

    fn crossed_namespaces(&self) -> Vec<Vec<usize>> {
        match self {
            FeatureSet::Interactions(e) => e.crossed_namespaces(),
            FeatureSet::Apple(e) => e.crossed_namespaces(),
            FeatureSet::FieldApple(e) => e.crossed_namespaces(),
            FeatureSet::AppleFields(_, fields) => fields.crossed_namespaces(),
        }
    }

    fn learns_from_examples(&self) -> bool {
        match self {
            FeatureSet::Interactions(e) => e.learns_from_examples(),
            FeatureSet::Apple(e) => e.learns_from_examples(),
            FeatureSet::FieldApple(e) => e.learns_from_examples(),
            FeatureSet::AppleFields(apple, fields) => {
                apple.learns_from_examples() || fields.learns_from_examples()
            }
        }
    }

    fn recent_examples_wanted(&self) -> usize {
        match self {
            FeatureSet::Interactions(e) => e.recent_examples_wanted(),
            FeatureSet::Apple(e) => e.recent_examples_wanted(),
            FeatureSet::FieldApple(e) => e.recent_examples_wanted(),
            FeatureSet::AppleFields(apple, fields) => {
                apple.recent_examples_wanted().max(fields.recent_examples_wanted())
            }
        }
    }

    fn catch_up_due(&self) -> bool {
        match self {
            FeatureSet::Interactions(e) => e.catch_up_due(),
            FeatureSet::Apple(e) => e.catch_up_due(),
            FeatureSet::FieldApple(e) => e.catch_up_due(),
            // Each then gives its own additions, if any.
            FeatureSet::AppleFields(apple, fields) => apple.catch_up_due() || fields.catch_up_due(),
        }
    }

    fn expand_block(
        &self,
        rows: &BlockRows<'_>,
        out: &mut ExpandedFeatures,
        ends: &mut Vec<ExampleEnd>,
    ) {
        match self {
            FeatureSet::Interactions(e) => e.expand_block(rows, out, ends),
            FeatureSet::Apple(e) => e.expand_block(rows, out, ends),
            FeatureSet::FieldApple(e) => e.expand_block(rows, out, ends),
            FeatureSet::AppleFields(apple, fields) => {
                if let Some(linear) = apple_fields_linear(apple, fields) {
                    linear.expand_block(rows, out, ends);
                }
            }
        }
    }

    fn block_expansion(&self) -> Option<Interactions> {
        match self {
            FeatureSet::Interactions(e) => e.block_expansion(),
            FeatureSet::Apple(e) => e.block_expansion(),
            FeatureSet::FieldApple(e) => e.block_expansion(),
            FeatureSet::AppleFields(apple, fields) => apple_fields_linear(apple, fields),
        }
    }

    fn expand_added(&self, example: &Example<'_>, out: &mut ExpandedFeatures) {
        match self {
            FeatureSet::Interactions(e) => e.expand_added(example, out),
            FeatureSet::Apple(e) => e.expand_added(example, out),
            FeatureSet::FieldApple(e) => e.expand_added(example, out),
            FeatureSet::AppleFields(apple, fields) => {
                apple.expand_added(example, out);
                fields.expand_added(example, out);
            }
        }
    }

    fn expand_for_catch_up(
        &self,
        example: &Example<'_>,
        added: &mut ExpandedFeatures,
        all: &mut ExpandedFeatures,
    ) {
        match self {
            FeatureSet::Interactions(e) => e.expand_for_catch_up(example, added, all),
            FeatureSet::Apple(e) => e.expand_for_catch_up(example, added, all),
            FeatureSet::FieldApple(e) => e.expand_for_catch_up(example, added, all),
            FeatureSet::AppleFields(apple, fields) if apple.parents().is_empty() => {
                fields.expand_added(example, added);
                self.expand(example, all);
            }
            FeatureSet::AppleFields(apple, fields) => {
                apple.expand_for_catch_up(example, added, all);
                fields.expand_added(example, added);
                fields.expand_crosses(example, all);
            }
        }
    }

    #[inline]
    fn after_learn(&mut self, example: &Example<'_>, learned: &Learned<'_>) {
        match self {
            FeatureSet::Interactions(e) => e.after_learn(example, learned),
            FeatureSet::Apple(e) => e.after_learn(example, learned),
            FeatureSet::FieldApple(e) => e.after_learn(example, learned),
            FeatureSet::AppleFields(apple, fields) => {
                apple.after_learn(example, learned);
                fields.after_learn(example, learned);
            }
        }
    }

    fn reads_example(&self, shape: &ExampleShape) -> bool {
        match self {
            FeatureSet::Interactions(e) => e.reads_example(shape),
            FeatureSet::Apple(e) => e.reads_example(shape),
            FeatureSet::FieldApple(e) => e.reads_example(shape),
            // Both learn of the example the same way: read if either reads it.
            FeatureSet::AppleFields(apple, fields) => {
                apple.reads_example(shape) || fields.reads_example(shape)
            }
        }
    }

    fn after_learn_unread(&mut self, shape: &ExampleShape, learned: &Learned<'_>) {
        match self {
            FeatureSet::Interactions(e) => e.after_learn_unread(shape, learned),
            FeatureSet::Apple(e) => e.after_learn_unread(shape, learned),
            FeatureSet::FieldApple(e) => e.after_learn_unread(shape, learned),
            FeatureSet::AppleFields(apple, fields) => {
                apple.after_learn_unread(shape, learned);
                fields.after_learn_unread(shape, learned);
            }
        }
    }
}

/// Apple with field crosses while apple has no parents (always, when every field is categorical)
/// is linear plus the crosses: fixed interactions, which the learner expands a block at a time
/// (its features and their order are those of [`FieldApple::expand_linear`]).
fn apple_fields_linear(apple: &Apple, fields: &FieldApple) -> Option<Interactions> {
    apple.parents().is_empty().then(|| fields.linear_form(apple.config().constant))
}

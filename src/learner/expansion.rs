//! Feature enumerators: what the learner trains on, generated per example and never stored.
//!
//! An [`Expansion`] turns an [`Example`] into (weight slot, value) pairs in a reused
//! [`ExpandedFeatures`] buffer. The update rule only ever sees that buffer, so linear, quadratic,
//! cubic, namespace crosses and (next) apple are interchangeable enumerators feeding one learning
//! loop, the way Vowpal Wabbit's reductions rewrite an example's features before the base learner.
//!
//! ## Interaction hashing
//! A monomial's hash is built from its factors' feature hashes `h` in canonical (increasing hash)
//! order with Vowpal Wabbit's multiply-by-prime-and-xor step (`interactions_predict.h`):
//!
//! * degree 1: `h_i`;
//! * degree 2 (`i <= j`): `(h_i · P) ^ h_j`;
//! * degree 3 (`i <= j <= l`): `(((h_i · P) ^ h_j) · P) ^ h_l`,
//!
//! with `P = 16777619` (the 32-bit FNV prime), wrapping u64 arithmetic, and the weight slot the low
//! `bits` bits. Because the factors are always combined in sorted order, a monomial has exactly one
//! hash (x_a·x_b and x_b·x_a are one weight); and because the step is Vowpal Wabbit's, the slots
//! equal those of `vw -q` / `--cubic` on the same (sorted) features. The constant (bias) feature
//! is [`crate::hashing::CONSTANT_FEATURE`], never part of a product.
//!
//! ## Namespace crosses
//! A cross of namespaces `c_1 … c_k` (`k >= 2`; Vowpal Wabbit's `-q ab`, `--cubic abc`,
//! `--interactions abcd`) takes one feature of each namespace, in the cross's order, and hashes
//! the product with the same chain in that order (`interactions_predict.h`:
//! `process_quadratic_interaction`, `process_cubic_interaction`,
//! `process_generic_interaction`): `((h_1 · P) ^ h_2) · P ^ … ^ h_k`, the value
//! `((x_1 · x_2) · …) · x_k` in single precision. Where a namespace follows itself in the cross
//! (`aa`, `aab`), its features are taken as combinations with repetition by their position in
//! the namespace (`i <= j`: every unordered pair once, squares included), not as all ordered
//! tuples (Vowpal Wabbit's default, without `--leave_duplicate_interactions`); equal namespaces
//! apart (`aba`) are independent. How a list of crosses is made canonical (Vowpal Wabbit's
//! `sort_and_filter_duplicate_interactions`): [`vw_crosses`].

use std::fmt::Debug;

use super::batch::{BlockRows, OneHotColumns, BLOCK_FEATURES};
use super::example::{Example, ExampleShape};
pub use super::features::ExpandedFeatures;
use super::features::{cross_field, degree_field, namespace_field, ExampleEnd, CONSTANT_FIELD};
use super::loss::Loss;
use super::update::{trunc_weight, GdState};
use super::weights::WeightTable;
use crate::error::PolyResult;
use crate::hashing::CONSTANT_FEATURE;

/// Vowpal Wabbit's interaction multiplier (the 32-bit FNV prime).
pub const INTERACTION_PRIME: u64 = 16_777_619;

/// A feature enumerator (see the module docs). Implementations must emit each feature of an
/// example once; equal slots from distinct features (hash collisions) are fine.
pub trait Expansion: Debug + Send + Sync {
    /// Writes the features of `example` into `out` (cleared by the caller).
    fn expand(&self, example: &Example<'_>, out: &mut ExpandedFeatures);

    /// Whether [`Expansion::expand`] reads the example's feature set
    /// ([`Example::features`], the union of its namespaces) rather than only its namespaces.
    /// When it does not, the learner skips sorting and merging the namespaces into it.
    fn uses_feature_set(&self) -> bool {
        true
    }

    /// Checks the enumerator against the number of namespaces examples will have.
    fn validate(&self, n_namespaces: usize) -> PolyResult<()>;

    /// Checks that `example` (row `row`) can be expanded, e.g. that its expansion fits in
    /// memory; called before [`Expansion::expand`] by the learner's fallible entry points.
    fn check(&self, _example: &Example<'_>, _row: usize) -> PolyResult<()> {
        Ok(())
    }

    /// A run of `examples` learned examples starts ([`super::Learner::fit`] knows its length):
    /// enumerators that grow on a schedule (apple) plan it here.
    fn begin_run(&mut self, _examples: u64) {}

    /// Called after every learned example (not for holdout rows) with the model as it is after
    /// the update; enumerators that grow (apple) count examples and grow here.
    fn after_learn(&mut self, _example: &Example<'_>, _learned: &Learned<'_>) {}

    /// Whether [`Expansion::after_learn`] must read the next learned example, of shape `shape`
    /// (true, the default, for every example). When it need not, the learner skips assembling
    /// the example and calls [`Expansion::after_learn_unread`] instead: on a large table the
    /// example's namespaces, written by the builder thread on the other core, are misses, and
    /// apple with field crosses screens only some examples.
    fn reads_example(&self, _shape: &ExampleShape) -> bool {
        true
    }

    /// [`Expansion::after_learn`] for an example [`Expansion::reads_example`] said it need not
    /// read: it must leave the enumerator exactly as `after_learn` would.
    fn after_learn_unread(&mut self, _shape: &ExampleShape, _learned: &Learned<'_>) {}

    /// Whether the learner must hand this enumerator the examples it learns: false only for
    /// one whose [`Expansion::after_learn`] does nothing and which never wants recent
    /// examples (fixed enumerators). The learner then takes a learned example's label and
    /// weight alone and skips assembling its view of the namespaces (on a large table that
    /// view's lines, written by the builder thread, were a miss per example).
    fn learns_from_examples(&self) -> bool {
        true
    }

    /// A count that changes whenever [`Expansion::expand`] may give other features for the same
    /// example than before (apple grew); constant for fixed enumerators. The learner expands an
    /// example ahead of its turn and expands it again when this changed in between, so an
    /// enumerator that grows must change it whenever it grows.
    fn generation(&self) -> u64 {
        0
    }

    /// The crosses of namespaces the enumerator computes now (each two or more namespaces):
    /// a factorization over crossed pairs alone follows them.
    fn crossed_namespaces(&self) -> Vec<Vec<usize>> {
        Vec::new()
    }

    /// How many of the most recent learned examples the enumerator may ask the learner to
    /// replay for features it adds (0, the default: none). The learner keeps that many
    /// ([`super::recent`]) while this is above 0, and forgets them when it falls to 0.
    fn recent_examples_wanted(&self) -> usize {
        0
    }

    /// Whether the example just learned made features join that the kept recent examples
    /// should catch up on; asked after every [`Expansion::after_learn`]. The learner then
    /// replays them, stepping only [`Expansion::expand_added`]'s features.
    fn catch_up_due(&self) -> bool {
        false
    }

    /// Only the features the enumerator's last growth added (for the catch-up), marked with
    /// the fields [`Expansion::expand`] gives them.
    fn expand_added(&self, _example: &Example<'_>, _out: &mut ExpandedFeatures) {}

    /// For a catch-up replay: [`Expansion::expand_added`] into `added` and, when that is not
    /// empty, [`Expansion::expand`] into `all` (an enumerator whose walk finds both at once
    /// gives both in one).
    fn expand_for_catch_up(
        &self,
        example: &Example<'_>,
        added: &mut ExpandedFeatures,
        all: &mut ExpandedFeatures,
    ) {
        self.expand_added(example, added);
        if !added.is_empty() {
            self.expand(example, all);
        }
    }

    /// Expands the leading examples of a block at once, in order, into `out` (each example's
    /// features exactly as [`Expansion::expand`] gives them, fields marked when `out` tracks
    /// them), pushing where each ends to `ends`; none when the enumerator has no block form (the
    /// default). It may stop before the block's end, at a row [`Expansion::check`] refuses or
    /// one that would take `out` past [`BLOCK_FEATURES`]: that row and the rest are then
    /// expanded one by one (which reports the refused row). On hashed
    /// categorical data the per-example work around the learning step costs more than the
    /// step's own arithmetic, and a block form moves it to the builder thread.
    fn expand_block(
        &self,
        _rows: &BlockRows<'_>,
        _out: &mut ExpandedFeatures,
        _ends: &mut Vec<ExampleEnd>,
    ) {
    }

    /// A copy of the enumerator's block form as it is now ([`Expansion::generation`] tells
    /// when it changes), which expands blocks exactly as [`Expansion::expand_block`] does: a
    /// builder thread expands blocks ahead with it while the learner runs. `None` (the
    /// default) when there is no block form.
    fn block_expansion(&self) -> Option<Interactions> {
        None
    }
}

/// What the learner tells [`Expansion::after_learn`].
pub struct Learned<'a> {
    /// The progressive prediction (made before the update), the label and the loss.
    pub prediction: f64,
    pub label: f64,
    pub loss: Loss,
    pub weights: &'a WeightTable,
    pub state: &'a GdState,
    /// The update rule normalizes by the largest `|x|` per slot.
    pub normalized: bool,
}

impl Learned<'_> {
    /// Minus the loss derivative at the progressive prediction (`y - p` for squared loss, up to
    /// a constant factor): the residual the SSM ranking correlates with.
    pub fn residual(&self) -> f64 {
        -self.loss.evaluate(self.prediction, self.label).1
    }

    /// `|w|` of the feature with (unmasked) hash `hash`, with the lazy L1/L2 state applied.
    pub fn weight_magnitude(&self, hash: u64) -> f64 {
        let slot = (hash & self.weights.mask()) as u32;
        let w = trunc_weight(self.weights.weight(slot), self.state.gravity as f32);
        f64::from(w).abs() * self.state.contraction
    }

    /// The feature's normalizer (largest `|x|` seen) under the normalized update rule, else 1.
    pub fn feature_normalizer(&self, hash: u64) -> f64 {
        let normalizer = f64::from(self.weights.normalizer((hash & self.weights.mask()) as u32));
        if self.normalized && normalizer > 0.0 {
            normalizer
        } else {
            1.0
        }
    }
}

/// Most features one example may expand to (2^28: 2 GiB of scratch buffer).
pub const MAX_EXPANDED_FEATURES: u64 = 1 << 28;

/// Checks that the scratch buffers of an example expanding to `count` features (row `row`) fit
/// in memory (only asked for the rare huge examples).
pub(crate) fn check_scratch_fits(count: u64, row: usize) -> PolyResult<()> {
    // A slot and a value per feature, in the current and the staged example's buffers.
    crate::memory::check_large_fits(
        count,
        16,
        || format!("row {row}, which expands to {count} features,"),
        "use a lower degree or fewer features per example",
    )
}

/// The polynomial baselines plus namespace crosses: all monomials of the feature set up to
/// `degree` (1 = linear; 2 = linear + all x_i·x_j, i <= j; 3 = also all x_i·x_j·x_l,
/// i <= j <= l), plus the features of each namespace cross (see the module docs: `[a, b]` is
/// every product of a feature of `a` with one of `b`, `[a, a]` the pairs i <= j inside `a`,
/// `[a, b, c]` every product of one feature of each), plus the constant feature.
///
/// Note on definitions: our cubic contains the degree-2 terms; Vowpal Wabbit's `--cubic aaa` adds
/// only degree-3 products to the base features (here the cross `[a, a, a]`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interactions {
    pub degree: u8,
    /// Namespace crosses of two or more namespaces each, in the order they are expanded (see
    /// [`vw_crosses`] for the canonical list options give).
    pub namespace_crosses: Vec<Vec<usize>>,
    pub constant: bool,
}

impl Interactions {
    pub fn linear() -> Self {
        Self { degree: 1, namespace_crosses: Vec::new(), constant: true }
    }

    pub fn quadratic() -> Self {
        Self { degree: 2, ..Self::linear() }
    }

    pub fn cubic() -> Self {
        Self { degree: 3, ..Self::linear() }
    }

    /// Number of features this expansion emits for an example with `n` features in its feature
    /// set and namespace sizes `sizes` (used to reserve the buffer, and by tests).
    pub fn count(&self, n: usize, sizes: &[usize]) -> usize {
        let mut total = n;
        if self.degree >= 2 {
            total += n * (n + 1) / 2;
        }
        if self.degree >= 3 {
            total += n * (n + 1) * (n + 2) / 6;
        }
        for cross in &self.namespace_crosses {
            let size = |k: usize| sizes.get(k).copied().unwrap_or(0) as u64;
            let count = cross_count(cross, size).map_or(usize::MAX, |c| c as usize);
            total = total.saturating_add(count);
        }
        total + usize::from(self.constant)
    }
}

/// Vowpal Wabbit's rules for a list of namespace crosses as options give it (`parse_args.cc`,
/// `parse_feature_tweaks`, and `interactions.h`, `sort_and_filter_duplicate_interactions`, as
/// applied by default, without `--leave_duplicate_interactions`), on namespace numbers in place
/// of its namespace letters:
///
/// * crosses of the same namespaces in another order (`ab` and `ba`, `abc` and `cab`) are one:
///   the lexicographically smallest of them is kept (Vowpal Wabbit sorts its list by length,
///   then lexicographically, before it drops the later ones);
/// * a cross that repeats a namespace and has another (`aba`, `baa`) is sorted (`aab`), so that
///   the repeats follow each other and are taken as combinations; one of a single namespace
///   (`aaa`) or of distinct ones (`cba`) keeps its order.
///
/// The crosses keep the order they were given in (each where its first equivalent was): Vowpal
/// Wabbit expands them sorted by length, which changes only the order of the sums.
pub fn vw_crosses(crosses: Vec<Vec<usize>>) -> Vec<Vec<usize>> {
    let sorted = |cross: &[usize]| {
        let mut key = cross.to_vec();
        key.sort_unstable();
        key
    };
    let mut kept: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
    for cross in crosses {
        let key = sorted(&cross);
        match kept.iter_mut().find(|(k, _)| *k == key) {
            Some((_, smallest)) => {
                if cross < *smallest {
                    *smallest = cross;
                }
            }
            None => kept.push((key, cross)),
        }
    }
    kept.into_iter()
        .map(|(key, cross)| {
            let repeats = key.windows(2).any(|w| w[0] == w[1]);
            let one_namespace = key.first() == key.last();
            if repeats && !one_namespace {
                key
            } else {
                cross
            }
        })
        .collect()
}

/// Features of the cross `cross` for namespaces of `size(k)` features: the product over runs of
/// a namespace following itself (`r` times, `n` features) of the combinations with repetition
/// `C(n + r - 1, r)`; `None` when it overflows u64.
pub(crate) fn cross_count(cross: &[usize], size: impl Fn(usize) -> u64) -> Option<u64> {
    let mut total = 1u64;
    for run in cross.chunk_by(|a, b| a == b) {
        total = total.checked_mul(multichoose(size(run[0]), run.len() as u64)?)?;
    }
    Some(total)
}

/// `C(n + r - 1, r)`, the multisets of `r` of `n` things; `None` when it overflows u64.
fn multichoose(n: u64, r: u64) -> Option<u64> {
    if n == 0 {
        return Some(u64::from(r == 0));
    }
    // C(n + i - 1, i) = C(n + i - 2, i - 1) (n + i - 1) / i, an integer at every step.
    let mut c: u128 = 1;
    for i in 1..=u128::from(r) {
        c = c * (u128::from(n) + i - 1) / i;
        if c > u128::from(u64::MAX) {
            return None;
        }
    }
    Some(c as u64)
}

impl Interactions {
    /// [`Expansion::expand_block`] of one-hot rows (degree 1, the crosses within the
    /// namespaces), column by column into the row-major block.
    fn expand_one_hot_columns(
        &self,
        columns: &OneHotColumns<'_>,
        out: &mut ExpandedFeatures,
        ends: &mut Vec<ExampleEnd>,
    ) {
        // Vowpal Wabbit's order (see `Expansion::expand`): linear terms, constant, crosses.
        let n = columns.n_namespaces();
        let mut fields: Vec<u32> = (0..n).map(namespace_field).collect();
        if self.constant {
            fields.push(CONSTANT_FIELD);
        }
        let first_cross = fields.len();
        fields.extend((0..self.namespace_crosses.len()).map(|i| cross_field(n, i)));
        let per_example = fields.len();
        out.append_rows(columns.n_rows(), &fields, ends, |slots, values| {
            // Column by column into the row-major block: feature j of every row in turn.
            for k in 0..n {
                let (hashes, xs) = columns.column(k);
                for ((row_slots, row_values), (&h, &x)) in
                    block_rows(slots, values, per_example).zip(hashes.iter().zip(xs))
                {
                    row_slots[k] = h as u32;
                    row_values[k] = x;
                }
            }
            if self.constant {
                for (row_slots, row_values) in block_rows(slots, values, per_example) {
                    row_slots[n] = CONSTANT_FEATURE;
                    row_values[n] = 1.0;
                }
            }
            for (i, cross) in self.namespace_crosses.iter().enumerate() {
                // One feature per namespace: every cross is one product per row (a namespace
                // following itself gives the square, its one combination).
                if let [a, b] = cross[..] {
                    let ((ha, xa), (hb, xb)) = (columns.column(a), columns.column(b));
                    let pairs = ha.iter().zip(xa).zip(hb.iter().zip(xb));
                    for ((row_slots, row_values), ((&ha, &xa), (&hb, &xb))) in
                        block_rows(slots, values, per_example).zip(pairs)
                    {
                        row_slots[first_cross + i] =
                            (ha.wrapping_mul(INTERACTION_PRIME) ^ hb) as u32;
                        row_values[first_cross + i] = xa * xb;
                    }
                    continue;
                }
                let Some((first, rest)) = cross.split_first() else { continue };
                for (p, (row_slots, row_values)) in
                    block_rows(slots, values, per_example).enumerate()
                {
                    let (mut hash, mut x) = (columns.hash(*first, p), columns.value(*first, p));
                    for &k in rest {
                        hash = hash.wrapping_mul(INTERACTION_PRIME) ^ columns.hash(k, p);
                        x *= columns.value(k, p);
                    }
                    row_slots[first_cross + i] = hash as u32;
                    row_values[first_cross + i] = x;
                }
            }
        });
    }

    /// [`Interactions::count`] in u64 with overflow checks (`None` on overflow).
    pub(crate) fn checked_count(&self, n: u64, size: impl Fn(usize) -> u64) -> Option<u64> {
        let mut total = n.checked_add(u64::from(self.constant))?;
        if self.degree >= 2 {
            total = total.checked_add(n.checked_mul(n + 1)? / 2)?;
        }
        if self.degree >= 3 {
            total = total.checked_add(n.checked_mul(n + 1)?.checked_mul(n + 2)? / 6)?;
        }
        for cross in &self.namespace_crosses {
            total = total.checked_add(cross_count(cross, &size)?)?;
        }
        Some(total)
    }
}

impl Expansion for Interactions {
    fn learns_from_examples(&self) -> bool {
        false
    }

    fn crossed_namespaces(&self) -> Vec<Vec<usize>> {
        self.namespace_crosses.clone()
    }

    fn check(&self, example: &Example<'_>, row: usize) -> PolyResult<()> {
        let n = example.n_features() as u64;
        match self.checked_count(n, |k| example.namespace(k).hashes.len() as u64) {
            Some(count) if count <= MAX_EXPANDED_FEATURES => check_scratch_fits(count, row),
            count => {
                let crosses = match self.namespace_crosses.iter().map(Vec::len).max() {
                    Some(order) => format!(
                        ", {} namespace cross(es) of up to {order} namespaces",
                        self.namespace_crosses.len()
                    ),
                    None => String::new(),
                };
                crate::invalid!(
                    "row {row}: {n} features expand to {} terms (degree {}{crosses}), more than \
                     the limit of {MAX_EXPANDED_FEATURES} per example; use a lower degree, fewer \
                     or shorter namespace crosses, or fewer features",
                    count.map_or_else(|| "more than 2^64".to_owned(), |c| c.to_string()),
                    self.degree
                )
            }
        }
    }

    /// Linear terms and namespace crosses read the namespaces alone (see
    /// [`Interactions::expand`]); polynomial terms need the feature set.
    fn uses_feature_set(&self) -> bool {
        self.degree >= 2
    }

    /// Vowpal Wabbit's order for linear terms and crosses: the linear terms, the constant, then
    /// the crosses. The order
    /// matters where two features of one example share a slot: each sees the other's update of
    /// the slot's sensitivity.
    fn expand(&self, example: &Example<'_>, out: &mut ExpandedFeatures) {
        let n = example.n_features();
        if self.degree <= 1 {
            // Linear terms namespace by namespace, as Vowpal Wabbit lists them (equal hashes in
            // two namespaces are two features on one slot, its rule too): the union is not
            // needed, so the learner does not build it.
            out.reserve(n + 1);
            push_linear(example, out);
            if self.constant {
                push_constant(out);
            }
            push_namespace_crosses(example, &self.namespace_crosses, out);
        } else {
            let (hashes, values) = example.features();
            let sizes: [usize; 0] = [];
            out.reserve(if self.namespace_crosses.is_empty() { self.count(n, &sizes) } else { n });
            out.begin_field(degree_field(1));
            out.push_products(0, 1.0, hashes, values);
            if self.degree >= 2 {
                out.begin_field(degree_field(2));
                for i in 0..n {
                    let hi = hashes[i].wrapping_mul(INTERACTION_PRIME);
                    out.push_products(hi, values[i], &hashes[i..], &values[i..]);
                }
            }
            if self.degree >= 3 {
                out.begin_field(degree_field(3));
                for i in 0..n {
                    let (hi, xi) = (hashes[i].wrapping_mul(INTERACTION_PRIME), values[i]);
                    for j in i..n {
                        let hij = (hi ^ hashes[j]).wrapping_mul(INTERACTION_PRIME);
                        out.push_products(hij, xi * values[j], &hashes[j..], &values[j..]);
                    }
                }
            }
            push_namespace_crosses(example, &self.namespace_crosses, out);
            // Last, as models of format 2 summed their predictions (no Vowpal Wabbit peer).
            if self.constant {
                push_constant(out);
            }
        }
    }

    fn block_expansion(&self) -> Option<Interactions> {
        (self.degree <= 1).then(|| self.clone())
    }

    /// Linear terms and namespace crosses (degree 1), example by example as
    /// [`Interactions::expand`] orders them: one-hot rows column by column (every example's
    /// count is then `namespaces + crosses + constant`), others row by row.
    fn expand_block(
        &self,
        rows: &BlockRows<'_>,
        out: &mut ExpandedFeatures,
        ends: &mut Vec<ExampleEnd>,
    ) {
        let n = rows.n_namespaces();
        if self.degree > 1 || self.namespace_crosses.iter().flatten().any(|&k| k >= n) {
            return;
        }
        match rows.one_hot_columns() {
            Some(columns) => self.expand_one_hot_columns(&columns, out, ends),
            None => {
                for p in 0..rows.n_rows() {
                    let example = rows.example(p);
                    let size = |k: usize| example.namespace(k).hashes.len() as u64;
                    let count = self.checked_count(example.n_features() as u64, size);
                    // So small a row is one `check` accepts.
                    if count.is_none_or(|count| out.len() as u64 + count > BLOCK_FEATURES as u64) {
                        return;
                    }
                    self.expand(&example, out);
                    ends.push(out.end());
                }
            }
        }
    }

    fn validate(&self, n_namespaces: usize) -> PolyResult<()> {
        if !(1..=3).contains(&self.degree) {
            return crate::invalid!(
                "expansion degree must be 1 (linear), 2 (quadratic) or 3 (cubic), got {}",
                self.degree
            );
        }
        for cross in &self.namespace_crosses {
            if cross.len() < 2 {
                return crate::invalid!(
                    "namespace cross {cross:?} has {} namespace(s); a cross takes two or more",
                    cross.len()
                );
            }
            if cross.iter().any(|&k| k >= n_namespaces) {
                return crate::invalid!(
                    "namespace cross {cross:?} refers to a namespace that does not exist: the \
                     examples have {n_namespaces} namespace(s), numbered from 0"
                );
            }
        }
        Ok(())
    }
}

/// The rows of a row-major block of `per_example` features each, as (slots, values) pairs.
fn block_rows<'a>(
    slots: &'a mut [u32],
    values: &'a mut [f32],
    per_example: usize,
) -> impl Iterator<Item = (&'a mut [u32], &'a mut [f32])> {
    slots.chunks_exact_mut(per_example).zip(values.chunks_exact_mut(per_example))
}

/// The constant feature, in its own field.
#[inline]
pub fn push_constant(out: &mut ExpandedFeatures) {
    out.begin_field(CONSTANT_FIELD);
    out.push(u64::from(CONSTANT_FEATURE), 1.0);
}

/// The linear terms, namespace by namespace, each in its own field.
pub fn push_linear(example: &Example<'_>, out: &mut ExpandedFeatures) {
    for k in 0..example.n_namespaces() {
        let namespace = example.namespace(k);
        out.begin_field(namespace_field(k));
        out.push_products(0, 1.0, namespace.hashes, namespace.values);
    }
}

/// The features of namespace crosses `crosses` (Vowpal Wabbit's `-q ab`, `--interactions abc`;
/// see the module docs), each in its own field.
pub fn push_namespace_crosses(
    example: &Example<'_>,
    crosses: &[Vec<usize>],
    out: &mut ExpandedFeatures,
) {
    for (p, cross) in crosses.iter().enumerate() {
        push_namespace_cross(example, p, cross, out);
    }
}

/// The features of the `p`-th namespace cross `cross` (see [`push_namespace_crosses`]).
pub fn push_namespace_cross(
    example: &Example<'_>,
    p: usize,
    cross: &[usize],
    out: &mut ExpandedFeatures,
) {
    out.begin_field(cross_field(example.n_namespaces(), p));
    if cross.len() < 2 {
        // Refused by `validate`; nothing to cross.
        return;
    }
    if let [a, b] = *cross {
        let first = example.namespace(a);
        let second = example.namespace(b);
        for (i, (&ha, &xa)) in first.hashes.iter().zip(first.values).enumerate() {
            let ha = ha.wrapping_mul(INTERACTION_PRIME);
            let start = if a == b { i } else { 0 };
            out.push_products(ha, xa, &second.hashes[start..], &second.values[start..]);
        }
    } else if cross.iter().all(|&k| !example.namespace(k).hashes.is_empty()) {
        push_cross_from(example, cross, 0, 0, 0, 1.0, out);
    }
}

/// The products of a cross of three or more namespaces from its factor `depth` on, the factors
/// before it chained into `hash` and multiplied into `x`, the one before at position `previous`
/// of its namespace (Vowpal Wabbit's `process_generic_interaction`).
fn push_cross_from(
    example: &Example<'_>,
    cross: &[usize],
    depth: usize,
    previous: usize,
    hash: u64,
    x: f32,
    out: &mut ExpandedFeatures,
) {
    let namespace = example.namespace(cross[depth]);
    // A namespace following itself starts at the position its previous factor took.
    let start = if depth > 0 && cross[depth] == cross[depth - 1] { previous } else { 0 };
    let (hashes, values) = (&namespace.hashes[start..], &namespace.values[start..]);
    if depth + 1 == cross.len() {
        out.push_products(hash.wrapping_mul(INTERACTION_PRIME), x, hashes, values);
        return;
    }
    for (i, (&h, &v)) in hashes.iter().zip(values).enumerate() {
        let (hash, x) =
            if depth == 0 { (h, v) } else { (hash.wrapping_mul(INTERACTION_PRIME) ^ h, x * v) };
        push_cross_from(example, cross, depth + 1, start + i, hash, x, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learner::example::ExampleBuffer;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// The slot hash of a sorted factor-hash tuple as [`Interactions`] computes it (Vowpal
    /// Wabbit's chain), written independently of the expansion's loops.
    fn monomial_slot_hash(sorted_hashes: &[u64]) -> u64 {
        let mut iter = sorted_hashes.iter();
        let Some(&first) = iter.next() else { return 0 };
        iter.fold(first, |acc, &h| acc.wrapping_mul(INTERACTION_PRIME) ^ h)
    }

    fn expand_to_map(exp: &Interactions, buf: &mut ExampleBuffer) -> BTreeMap<u32, f64> {
        let ex = buf.finish(0.0, 1.0, 0).unwrap();
        let mut out = ExpandedFeatures::new(18);
        exp.expand(&ex, &mut out);
        let mut map = BTreeMap::new();
        for (&s, &v) in out.slots().iter().zip(out.values()) {
            *map.entry(s).or_insert(0.0) += f64::from(v);
        }
        map
    }

    /// Brute force: every multiset of size 1..=degree over the sorted features, hashed with
    /// `monomial_slot_hash`.
    fn brute_force(indices: &[u64], values: &[f32], degree: u8) -> BTreeMap<u32, f64> {
        let n = indices.len();
        let mut map = BTreeMap::new();
        let mut add = |tuple: &[usize]| {
            let hashes: Vec<u64> = tuple.iter().map(|&t| indices[t]).collect();
            let value: f32 = tuple.iter().map(|&t| values[t]).product();
            let slot = (monomial_slot_hash(&hashes) & ((1 << 18) - 1)) as u32;
            *map.entry(slot).or_insert(0.0) += f64::from(value);
        };
        for i in 0..n {
            add(&[i]);
            if degree >= 2 {
                for j in i..n {
                    add(&[i, j]);
                    if degree >= 3 {
                        for l in j..n {
                            add(&[i, j, l]);
                        }
                    }
                }
            }
        }
        let constant = (u64::from(CONSTANT_FEATURE) & ((1 << 18) - 1)) as u32;
        *map.entry(constant).or_insert(0.0) += 1.0;
        map
    }

    proptest! {
        #[test]
        fn polynomial_expansion_equals_brute_force(
            entries in proptest::collection::btree_map(0u64..5000, -4i32..5, 0..12),
            degree in 1u8..=3,
        ) {
            let entries: Vec<(u64, f32)> =
                entries.into_iter().filter(|e| e.1 != 0).map(|(i, v)| (i, v as f32)).collect();
            let indices: Vec<u64> = entries.iter().map(|e| e.0).collect();
            let values: Vec<f32> = entries.iter().map(|e| e.1).collect();
            // Feed the row reversed: the expansion must not depend on input order.
            let rev_i: Vec<u64> = indices.iter().rev().copied().collect();
            let rev_v: Vec<f32> = values.iter().rev().copied().collect();
            let mut buf = ExampleBuffer::new();
            buf.clear();
            buf.push_namespace(0, &rev_i, &rev_v, 0).unwrap();
            let exp = Interactions { degree, ..Interactions::linear() };
            let got = expand_to_map(&exp, &mut buf);
            prop_assert_eq!(got, brute_force(&indices, &values, degree));
            let ex = buf.finish(0.0, 1.0, 0).unwrap();
            let mut out = ExpandedFeatures::new(18);
            exp.expand(&ex, &mut out);
            prop_assert_eq!(out.len(), exp.count(indices.len(), &[]));
        }
    }

    #[test]
    fn quadratic_is_symmetric_and_matches_vw_step() {
        let mut buf = ExampleBuffer::new();
        buf.clear();
        buf.push_namespace(0, &[9u32, 4], &[2.0f32, 3.0], 0).unwrap();
        let ex = buf.finish(0.0, 1.0, 0).unwrap();
        let mut out = ExpandedFeatures::new(18);
        Interactions::quadratic().expand(&ex, &mut out);
        let mask = (1u64 << 18) - 1;
        let pair = (((4 * INTERACTION_PRIME) ^ 9) & mask) as u32;
        let square = (((4 * INTERACTION_PRIME) ^ 4) & mask) as u32;
        assert_eq!(
            out.slots(),
            &[
                4,
                9,
                square,
                pair,
                (((9 * INTERACTION_PRIME) ^ 9) & mask) as u32,
                (u64::from(CONSTANT_FEATURE) & mask) as u32
            ]
        );
        assert_eq!(out.values(), &[3.0, 2.0, 9.0, 6.0, 4.0, 1.0]);
    }

    #[test]
    fn namespace_pairs_cross_namespaces() {
        let mut buf = ExampleBuffer::new();
        buf.clear();
        buf.push_namespace(0, &[1u32, 2], &[1.0f32, 2.0], 0).unwrap();
        buf.push_namespace(1000, &[5u32], &[3.0f32], 0).unwrap();
        let ex = buf.finish(0.0, 1.0, 0).unwrap();
        let exp = Interactions {
            degree: 1,
            namespace_crosses: vec![vec![0, 1], vec![1, 1]],
            constant: false,
        };
        exp.validate(2).unwrap();
        let mut out = ExpandedFeatures::new(24);
        exp.expand(&ex, &mut out);
        let m = (1u64 << 24) - 1;
        let expected: Vec<u32> = vec![
            1,
            2,
            1005,
            ((INTERACTION_PRIME ^ 1005) & m) as u32,
            (((2 * INTERACTION_PRIME) ^ 1005) & m) as u32,
            (((1005 * INTERACTION_PRIME) ^ 1005) & m) as u32,
        ];
        assert_eq!(out.slots(), &expected[..]);
        assert_eq!(out.values(), &[1.0, 2.0, 3.0, 3.0, 6.0, 9.0]);
        assert_eq!(out.len(), exp.count(3, &[2, 1]));
        let err = exp.validate(1).unwrap_err();
        assert!(err.to_string().contains("namespace cross [0, 1] refers"), "{err}");
        let err = Interactions { degree: 4, ..Interactions::linear() }.validate(1).unwrap_err();
        assert!(err.to_string().contains("got 4"), "{err}");
        let short = Interactions { namespace_crosses: vec![vec![0]], ..Interactions::linear() };
        let err = short.validate(1).unwrap_err();
        assert!(err.to_string().contains("takes two or more"), "{err}");
    }

    /// Vowpal Wabbit's enumeration of a cross, written independently of the expansion: every
    /// tuple of positions, one per factor, kept when each factor of the namespace of the factor
    /// before it is not before that one's position; hashed with the chain in the cross's order.
    fn brute_force_cross(
        namespaces: &[Vec<(u64, f32)>],
        cross: &[usize],
        bits: u32,
    ) -> Vec<(u32, f32)> {
        let mut out = Vec::new();
        let mut positions = vec![0usize; cross.len()];
        let sizes: Vec<usize> = cross.iter().map(|&k| namespaces[k].len()).collect();
        if sizes.contains(&0) {
            return out;
        }
        loop {
            let kept = (1..cross.len())
                .all(|d| cross[d] != cross[d - 1] || positions[d] >= positions[d - 1]);
            if kept {
                let factors: Vec<(u64, f32)> =
                    cross.iter().zip(&positions).map(|(&k, &i)| namespaces[k][i]).collect();
                let hashes: Vec<u64> = factors.iter().map(|f| f.0).collect();
                let value = factors[1..].iter().fold(factors[0].1, |x, f| x * f.1);
                out.push(((monomial_slot_hash(&hashes) & ((1 << bits) - 1)) as u32, value));
            }
            // The next tuple, the last factor fastest.
            let mut d = cross.len();
            loop {
                if d == 0 {
                    return out;
                }
                d -= 1;
                positions[d] += 1;
                if positions[d] < sizes[d] {
                    break;
                }
                positions[d] = 0;
            }
        }
    }

    fn example_of(namespaces: &[Vec<(u64, f32)>]) -> ExampleBuffer {
        let mut buf = ExampleBuffer::new();
        buf.clear();
        for features in namespaces {
            let indices: Vec<u64> = features.iter().map(|f| f.0).collect();
            let values: Vec<f32> = features.iter().map(|f| f.1).collect();
            buf.push_namespace(0, &indices, &values, 0).unwrap();
        }
        buf
    }

    proptest! {
        /// Crosses of 2 to 5 namespaces, repeated ones included, give exactly Vowpal Wabbit's
        /// products (slots, values, order and count) on canonical namespaces, after the linear
        /// terms and the constant.
        #[test]
        fn crosses_equal_a_brute_force_of_vowpal_wabbits_rule(
            namespaces in proptest::collection::vec(
                proptest::collection::btree_map(0u64..1_000_000, -3i32..4, 0..5), 1..4),
            crosses in proptest::collection::vec(
                proptest::collection::vec(0usize..3, 2..=5), 0..4),
        ) {
            let namespaces: Vec<Vec<(u64, f32)>> = namespaces
                .into_iter()
                .map(|m| m.into_iter().filter(|e| e.1 != 0).map(|(i, v)| (i, v as f32 / 2.0)).collect())
                .collect();
            let n = namespaces.len();
            let crosses: Vec<Vec<usize>> =
                crosses.into_iter().map(|c| c.into_iter().map(|k| k % n).collect()).collect();
            let exp = Interactions { namespace_crosses: crosses.clone(), ..Interactions::linear() };
            exp.validate(n).unwrap();
            let mut buf = example_of(&namespaces);
            let ex = buf.finish(0.0, 1.0, 0).unwrap();
            let mut out = ExpandedFeatures::new(18);
            exp.expand(&ex, &mut out);
            let mut expected: Vec<(u32, f32)> =
                namespaces.iter().flatten().map(|&(h, x)| ((h & ((1 << 18) - 1)) as u32, x)).collect();
            expected.push(((u64::from(CONSTANT_FEATURE) & ((1 << 18) - 1)) as u32, 1.0));
            for cross in &crosses {
                expected.extend(brute_force_cross(&namespaces, cross, 18));
            }
            let got: Vec<(u32, f32)> =
                out.slots().iter().copied().zip(out.values().iter().copied()).collect();
            prop_assert_eq!(&got, &expected);
            let sizes: Vec<usize> = namespaces.iter().map(Vec::len).collect();
            let total: usize = sizes.iter().sum();
            prop_assert_eq!(exp.count(total, &sizes), got.len());
            let size = |k: usize| sizes[k] as u64;
            prop_assert_eq!(exp.checked_count(total as u64, size), Some(got.len() as u64));
        }
    }

    #[test]
    fn a_three_way_cross_chains_vowpal_wabbits_step() {
        let namespaces = vec![vec![(3, 2.0)], vec![(10, 0.5), (11, 1.0)], vec![(7, 3.0)]];
        let mut buf = example_of(&namespaces);
        let ex = buf.finish(0.0, 1.0, 0).unwrap();
        let exp = Interactions {
            namespace_crosses: vec![vec![2, 0, 1], vec![1, 1, 1]],
            constant: false,
            ..Interactions::linear()
        };
        let mut out = ExpandedFeatures::new(32);
        exp.expand(&ex, &mut out);
        let p = INTERACTION_PRIME;
        let chain = |a: u64, b: u64, c: u64| (((a * p) ^ b).wrapping_mul(p) ^ c) as u32;
        assert_eq!(
            &out.slots()[4..],
            &[
                chain(7, 3, 10),
                chain(7, 3, 11),
                chain(10, 10, 10),
                chain(10, 10, 11),
                chain(10, 11, 11),
                chain(11, 11, 11)
            ]
        );
        assert_eq!(&out.values()[4..], &[3.0, 6.0, 0.125, 0.25, 0.5, 1.0]);
    }

    #[test]
    fn vowpal_wabbits_rules_make_crosses_canonical() {
        type Crosses = Vec<Vec<usize>>;
        let cases: [(Crosses, Crosses); 7] = [
            (vec![vec![1, 0]], vec![vec![1, 0]]),
            (vec![vec![1, 0], vec![0, 1]], vec![vec![0, 1]]),
            (vec![vec![0, 1], vec![1, 0], vec![0, 1]], vec![vec![0, 1]]),
            (vec![vec![2, 1, 0], vec![1, 2, 0], vec![0, 0]], vec![vec![1, 2, 0], vec![0, 0]]),
            (vec![vec![1, 0, 1], vec![1, 1, 0]], vec![vec![0, 1, 1]]),
            (
                vec![vec![2, 2, 2], vec![0, 1, 2], vec![1, 1]],
                vec![vec![2, 2, 2], vec![0, 1, 2], vec![1, 1]],
            ),
            (vec![vec![1, 0, 0, 1, 2]], vec![vec![0, 0, 1, 1, 2]]),
        ];
        for (given, canonical) in cases {
            assert_eq!(vw_crosses(given.clone()), canonical, "{given:?}");
            assert_eq!(vw_crosses(canonical.clone()), canonical, "idempotent");
        }
    }

    #[test]
    fn crosses_too_large_to_expand_are_refused() {
        let features: Vec<(u64, f32)> = (0..1_000).map(|i| (i, 1.0)).collect();
        let mut buf = example_of(&[features]);
        let ex = buf.finish(0.0, 1.0, 0).unwrap();
        // C(1004, 5) = 8.4e12 terms; a self cross of 20 overflows u64.
        for (order, count) in [(5, "8416958751201 terms"), (20, "more than 2^64 terms")] {
            let exp =
                Interactions { namespace_crosses: vec![vec![0; order]], ..Interactions::linear() };
            let err = exp.check(&ex, 7).unwrap_err().to_string();
            assert!(err.contains("row 7") && err.contains(count), "{err}");
            assert!(err.contains(&format!("1 namespace cross(es) of up to {order}")), "{err}");
        }
        let small = Interactions { namespace_crosses: vec![vec![0; 2]], ..Interactions::linear() };
        small.check(&ex, 0).unwrap();
        assert_eq!(multichoose(1_000, 5), Some(8_416_958_750_200));
        assert_eq!(multichoose(0, 3), Some(0));
        assert_eq!(multichoose(1, 40), Some(1));
        assert_eq!(multichoose(u64::MAX, 1), Some(u64::MAX));
        assert_eq!(multichoose(u64::MAX, 2), None);
    }

    #[test]
    fn slots_are_masked() {
        let mut out = ExpandedFeatures::new(4);
        out.push(u64::MAX, 1.0);
        assert_eq!(out.slots(), &[15]);
        let mut wide = ExpandedFeatures::new(32);
        wide.push(u64::MAX, 1.0);
        assert_eq!(wide.slots(), &[u32::MAX]);
    }
}

//! [`ExpandedFeatures`]: the per-example buffer of (weight slot, value) pairs that feature
//! enumerators fill and the update rule reads. It sits below both, so neither imports the other.
//!
//! Enumerators also mark which *field* each run of features comes from (a namespace, a
//! namespace cross, apple's monomials, ...; the ids below), which the learner's field scales
//! ([`super::field_scales`]) read. Ids are small and stable for a model's lifetime.

use std::ops::Range;

/// The constant feature's field (never scaled).
pub const CONSTANT_FIELD: u32 = 0;
/// The field of namespace `k`'s own features.
pub fn namespace_field(k: usize) -> u32 {
    1 + k as u32
}

/// The field of the polynomial terms of degree `d` (1..=3) over the feature set.
pub fn degree_field(d: u32) -> u32 {
    d
}

/// The field of apple's generated monomials, for examples of `n_namespaces` namespaces: after
/// every namespace and degree field.
pub fn monomial_field(n_namespaces: usize) -> u32 {
    (1 + n_namespaces.max(3)) as u32
}

/// The field of the `p`-th namespace cross of an example of `n_namespaces` namespaces: after
/// apple's monomials.
pub fn cross_field(n_namespaces: usize, p: usize) -> u32 {
    monomial_field(n_namespaces) + 1 + p as u32
}

/// [`ExpandedFeatures::field_runs`]'s iterator (a plain loop over the marks: it runs twice per
/// learned example).
pub struct FieldRuns<'a> {
    marks: &'a [(u32, u32)],
    next: usize,
    /// The unmarked leading run, until it is given.
    leading: Option<Range<usize>>,
    /// Where the last run ends.
    n: usize,
}

impl Iterator for FieldRuns<'_> {
    type Item = (u32, std::ops::Range<usize>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if let Some(range) = self.leading.take() {
            return Some((CONSTANT_FIELD, range));
        }
        let &(start, field) = self.marks.get(self.next)?;
        self.next += 1;
        let end = self.marks.get(self.next).map_or(self.n, |m| m.0 as usize);
        Some((field, start as usize..end))
    }
}

/// Where an example ends in a buffer holding many in turn (a block expanded whole, see
/// [`super::batch`]): after how many features and how many field marks. The marks are counted
/// apart because a namespace with no features in a row still opens its (empty) run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExampleEnd {
    pub(crate) features: usize,
    pub(crate) marks: usize,
}

impl ExampleEnd {
    /// Where example `p` of a buffer whose examples end at `ends` starts and ends.
    #[inline]
    pub(crate) fn bounds(ends: &[ExampleEnd], p: usize) -> (ExampleEnd, ExampleEnd) {
        let from = if p == 0 { ExampleEnd::default() } else { ends[p - 1] };
        (from, ends[p])
    }
}

/// The per-example output of a feature enumerator (`super::Expansion`): weight slots (already masked to the table) and
/// values. Slots are private so that every stored slot is `<= mask` by construction, which the
/// learner's inner loops rely on.
#[derive(Clone, Debug)]
pub struct ExpandedFeatures {
    mask: u64,
    slots: Vec<u32>,
    values: Vec<f32>,
    /// (first feature, field) of each run of features, in order (see the module docs); kept
    /// only while `tracks_fields` (a model with field scales), so that other models pay one
    /// predictable branch per run instead of a push.
    fields: Vec<(u32, u32)>,
    tracks_fields: bool,
    /// Per feature, the bits of its hash above the mask ([`ExpandedFeatures::owners`]); kept
    /// only for a table that may grow, when `notes_owners`.
    owners: Vec<u32>,
    notes_owners: bool,
}

/// The table an expansion buffer is for: `2^bits` slots, and whether it notes the features'
/// owners ([`ExpandedFeatures::owners`], for a table that may grow).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableSlots {
    pub bits: u32,
    pub owners: bool,
}

/// The bits of a hash above a table's slot that [`ExpandedFeatures::owners`] keeps: enough for
/// any growth (a table grows by at most `32 - 1` bits).
pub const OWNER_BITS: u32 = 22;

/// `hash`'s bits above the `shift` bits of a slot, as [`ExpandedFeatures::owners`] holds them.
#[inline(always)]
fn owner_of(hash: u64, shift: u32) -> u32 {
    ((hash >> shift) as u32) & ((1 << OWNER_BITS) - 1)
}

impl ExpandedFeatures {
    /// An empty buffer for a table of `2^bits` slots (`bits <= 32`).
    pub fn new(bits: u32) -> Self {
        let mask = if bits >= 32 { u64::from(u32::MAX) } else { (1u64 << bits) - 1 };
        Self {
            mask,
            slots: Vec::new(),
            values: Vec::new(),
            fields: Vec::new(),
            tracks_fields: false,
            owners: Vec::new(),
            notes_owners: false,
        }
    }

    /// An empty buffer for `table`.
    pub fn for_table(table: TableSlots) -> Self {
        Self::new(table.bits).noting_owners(table.owners)
    }

    /// The buffer noting each feature's owner bits ([`ExpandedFeatures::owners`]) when `on`.
    pub fn noting_owners(mut self, on: bool) -> Self {
        self.notes_owners = on && self.mask < u64::from(u32::MAX);
        self
    }

    /// Whether it notes owners (see [`ExpandedFeatures::noting_owners`]).
    pub fn notes_owners(&self) -> bool {
        self.notes_owners
    }

    /// The slots' bits (`self.mask.count_ones()`).
    fn shift(&self) -> u32 {
        self.mask.count_ones()
    }

    pub fn clear(&mut self) {
        self.slots.clear();
        self.values.clear();
        self.fields.clear();
        self.owners.clear();
    }

    /// Whether [`ExpandedFeatures::begin_field`] records fields (off by default).
    #[inline]
    pub fn track_fields(&mut self, on: bool) {
        self.tracks_fields = on;
    }

    /// The features pushed from now on come from field `field` (see the module docs); recorded
    /// only when tracking fields.
    #[inline]
    pub fn begin_field(&mut self, field: u32) {
        if self.tracks_fields {
            self.fields.push((self.slots.len() as u32, field));
        }
    }

    /// `(field, feature range)` of each run of features, in order; features pushed before the
    /// first [`ExpandedFeatures::begin_field`] count as [`CONSTANT_FIELD`]'s.
    #[inline]
    pub fn field_runs(&self) -> FieldRuns<'_> {
        self.field_runs_between(ExampleEnd::default(), self.end())
    }

    /// [`ExpandedFeatures::field_runs`] of the example from `from` to `to` in a buffer of many
    /// (see [`ExampleEnd`]), in place: the runs of its copy, at the features' positions here.
    #[inline]
    pub(crate) fn field_runs_between(&self, from: ExampleEnd, to: ExampleEnd) -> FieldRuns<'_> {
        let marks = &self.fields[from.marks..to.marks];
        let first = marks.first().map_or(to.features, |f| f.0 as usize);
        let leading = (first > from.features).then_some(from.features..first);
        FieldRuns { marks, next: 0, leading, n: to.features }
    }

    pub fn reserve(&mut self, additional: usize) {
        self.slots.reserve(additional);
        self.values.reserve(additional);
    }

    /// Appends the feature with hash `hash` (masked to a slot) and value `value`.
    #[inline(always)]
    pub fn push(&mut self, hash: u64, value: f32) {
        self.slots.push((hash & self.mask) as u32);
        self.values.push(value);
        if self.notes_owners {
            self.owners.push(owner_of(hash, self.shift()));
        }
    }

    /// Removes the features from index `from` on whose value's square single precision cannot
    /// hold, keeping the others in order; returns how many it removed. A max reduction first
    /// (vectorized), so the common case costs one read of the values.
    pub fn drop_overflowing(&mut self, from: usize) -> usize {
        let fits = |x: f32| (x * x).is_finite();
        let largest = self.values[from..].iter().fold(0.0f32, |m, x| m.max(x.abs()));
        if fits(largest) {
            return 0;
        }
        let before = self.values.len();
        let mut kept = from;
        let mut mark = self.fields.partition_point(|f| (f.0 as usize) < from);
        for k in from..before {
            // A field run starting at k now starts where k's survivors go.
            while mark < self.fields.len() && self.fields[mark].0 as usize == k {
                self.fields[mark].0 = kept as u32;
                mark += 1;
            }
            if fits(self.values[k]) {
                self.slots[kept] = self.slots[k];
                self.values[kept] = self.values[k];
                if self.notes_owners {
                    self.owners[kept] = self.owners[k];
                }
                kept += 1;
            }
        }
        for f in &mut self.fields[mark..] {
            f.0 = kept as u32;
        }
        self.slots.truncate(kept);
        self.values.truncate(kept);
        self.owners.truncate(kept.min(self.owners.len()));
        before - kept
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Appends the products `first · x_j` with hashes `first_hash ^ h_j` for every `(h_j, x_j)`
    /// of `hashes` / `values`: the inner loop of every interaction, written as two `extend`s of
    /// exact length (no per-element capacity check; the hashing loop vectorizes).
    #[inline(always)]
    pub fn push_products(&mut self, first_hash: u64, first: f32, hashes: &[u64], values: &[f32]) {
        let mask = self.mask;
        if let ([hash], [value]) = (hashes, values) {
            // One feature (a one-hot field): two pushes cost less than two extends' set-up.
            self.slots.push(((first_hash ^ hash) & mask) as u32);
            self.values.push(first * value);
            if self.notes_owners {
                self.owners.push(owner_of(first_hash ^ hash, self.shift()));
            }
            return;
        }
        self.slots.extend(hashes.iter().map(|&h| ((first_hash ^ h) & mask) as u32));
        self.values.extend(values.iter().map(|&x| first * x));
        if self.notes_owners {
            let shift = self.shift();
            self.owners.extend(hashes.iter().map(|&h| owner_of(first_hash ^ h, shift)));
        }
    }

    /// Where the features pushed so far end (see [`ExampleEnd`]).
    #[inline]
    pub fn end(&self) -> ExampleEnd {
        ExampleEnd { features: self.slots.len(), marks: self.fields.len() }
    }

    /// Appends `n_rows` examples of `fields.len()` features each, feature `j` of every example
    /// in a run of field `fields[j]` (marked when tracking fields), and each example's end to
    /// `ends`: `write` fills the new features row-major (example `p`'s feature `j` at
    /// `p * fields.len() + j`), each slot as its hash's low 32 bits, masked here. A block of
    /// examples written column by column costs no capacity check per feature.
    pub(crate) fn append_rows(
        &mut self,
        n_rows: usize,
        fields: &[u32],
        ends: &mut Vec<ExampleEnd>,
        write: impl FnOnce(&mut [u32], &mut [f32]),
    ) {
        let first = self.end();
        let per_example = fields.len();
        let end = first.features + n_rows * per_example;
        if self.tracks_fields {
            self.fields.reserve(n_rows * per_example);
            for p in 0..n_rows {
                let start = first.features + p * per_example;
                self.fields
                    .extend(fields.iter().enumerate().map(|(j, &f)| ((start + j) as u32, f)));
            }
        }
        let marks_each = if self.tracks_fields { per_example } else { 0 };
        ends.extend((1..=n_rows).map(|p| ExampleEnd {
            features: first.features + p * per_example,
            marks: first.marks + p * marks_each,
        }));
        self.slots.resize(end, 0);
        self.values.resize(end, 0.0);
        write(&mut self.slots[first.features..], &mut self.values[first.features..]);
        if self.notes_owners {
            let shift = self.shift();
            let hashes = &self.slots[first.features..];
            self.owners.extend(hashes.iter().map(|&h| owner_of(u64::from(h), shift)));
        }
        // The mask is below 2^32: masking the low 32 bits is masking the hash.
        let mask = self.mask as u32;
        self.slots[first.features..].iter_mut().for_each(|slot| *slot &= mask);
    }

    /// Appends the example of `other` (expanded for a table of the same size) that starts at
    /// `from` and ends at `to`, with its field marks when tracking fields: exactly the features
    /// and runs its expansion pushed, an empty run at either edge included.
    pub(crate) fn extend_from_example(
        &mut self,
        other: &ExpandedFeatures,
        from: ExampleEnd,
        to: ExampleEnd,
    ) {
        let base = self.slots.len() as u32;
        if self.tracks_fields {
            let marks = &other.fields[from.marks..to.marks];
            let offset = from.features as u32;
            self.fields.extend(marks.iter().map(|&(start, field)| (base + start - offset, field)));
        }
        let mask = self.mask as u32;
        // Masked again: the same size gives the same mask, and the invariant holds whatever.
        let range = from.features..to.features;
        self.slots.extend(other.slots[range.clone()].iter().map(|&slot| slot & mask));
        if self.notes_owners {
            // Both buffers are for one table; one that notes no owners gives none to copy.
            self.owners.extend_from_slice(other.owners.get(range.clone()).unwrap_or_default());
        }
        self.values.extend_from_slice(&other.values[range]);
    }

    /// Prefetches the cache lines of the features in `range`, their slots and their values.
    pub(crate) fn prefetch_range(&self, range: Range<usize>) {
        if range.is_empty() {
            return;
        }
        // 16 slots or values to a 64-byte line; the last feature's line may be one more.
        for at in range.clone().step_by(16).chain([range.end - 1]) {
            crate::memory::prefetch(self.slots.as_ptr().wrapping_add(at));
            crate::memory::prefetch(self.values.as_ptr().wrapping_add(at));
        }
    }

    /// The mask every slot is within.
    pub fn mask(&self) -> u64 {
        self.mask
    }

    #[inline]
    pub fn slots(&self) -> &[u32] {
        &self.slots
    }

    /// Per feature, its hash's [`OWNER_BITS`] bits above the slot's (empty unless
    /// [`ExpandedFeatures::noting_owners`]): which slot the feature will have in a table grown
    /// from this one (see `crate::learner::learner::growth`).
    #[inline]
    pub fn owners(&self) -> &[u32] {
        &self.owners
    }

    #[inline]
    pub fn values(&self) -> &[f32] {
        &self.values
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drop_overflowing_keeps_the_rest_in_order() {
        let mut f = ExpandedFeatures::new(8);
        for (h, x) in [(1, 1e20f32), (2, 3.0), (3, -2e19), (4, 1e19), (5, f32::INFINITY), (6, -1.0)]
        {
            f.push(h, x);
        }
        assert_eq!(f.drop_overflowing(2), 2, "from index 2: -2e19 and inf");
        assert_eq!(f.slots(), &[1, 2, 4, 6]);
        assert_eq!(f.values(), &[1e20, 3.0, 1e19, -1.0]);
        assert_eq!(f.drop_overflowing(0), 1);
        assert_eq!(f.values(), &[3.0, 1e19, -1.0]);
        assert_eq!(f.drop_overflowing(0), 0);
    }

    #[test]
    fn appended_rows_equal_the_same_features_pushed_one_by_one() {
        let fields = [3u32, 5, 0];
        let hashes = |p: u64| [(p << 40) | 0x1_2345_6789, p * 7 + 1, 11];
        let values = |p: u64| [p as f32, -0.5, 1.0];
        for track in [false, true] {
            let mut pushed = ExpandedFeatures::new(12);
            pushed.track_fields(track);
            pushed.push(99, 2.0);
            let mut appended = pushed.clone();
            for p in 0..4u64 {
                for ((&field, hash), value) in fields.iter().zip(hashes(p)).zip(values(p)) {
                    pushed.begin_field(field);
                    pushed.push(hash, value);
                }
            }
            let (mut ends, mut from) = (Vec::new(), appended.end());
            appended.append_rows(4, &fields, &mut ends, |slots, xs| {
                for (p, (slots, xs)) in slots.chunks_mut(3).zip(xs.chunks_mut(3)).enumerate() {
                    let p = p as u64;
                    for (slot, hash) in slots.iter_mut().zip(hashes(p)) {
                        *slot = hash as u32;
                    }
                    xs.copy_from_slice(&values(p));
                }
            });
            assert_eq!(appended.slots(), pushed.slots(), "masked to 12 bits as push does");
            assert_eq!(appended.values(), pushed.values());
            let runs = |f: &ExpandedFeatures| f.field_runs().collect::<Vec<_>>();
            assert_eq!(runs(&appended), runs(&pushed));
            assert_eq!(runs(&appended).len(), if track { 13 } else { 1 });
            // Each example copied out alone is the one pushed alone.
            for (p, &to) in ends.iter().enumerate() {
                let mut alone = ExpandedFeatures::new(12);
                alone.track_fields(track);
                for ((&field, hash), value) in
                    fields.iter().zip(hashes(p as u64)).zip(values(p as u64))
                {
                    alone.begin_field(field);
                    alone.push(hash, value);
                }
                let mut copied = ExpandedFeatures::new(12);
                copied.track_fields(track);
                copied.extend_from_example(&appended, from, to);
                assert_eq!((copied.slots(), copied.values()), (alone.slots(), alone.values()));
                assert_eq!(runs(&copied), runs(&alone));
                from = to;
            }
        }
    }

    /// Examples pushed one after another, some with an empty run first or last, copied out by
    /// their ends are the examples pushed alone, empty runs included (a run that ends one
    /// example and one that starts the next share a position; the marks tell them apart).
    #[test]
    fn examples_copied_by_their_ends_keep_their_empty_runs() {
        type Example = &'static [(u32, &'static [u64])];
        let examples: [Example; 4] = [
            &[(1, &[5]), (2, &[]), (3, &[])],
            &[(1, &[]), (2, &[7, 8]), (3, &[9])],
            &[(1, &[]), (2, &[]), (3, &[])],
            &[(1, &[4]), (2, &[6]), (3, &[])],
        ];
        let push = |out: &mut ExpandedFeatures, example: Example| {
            for &(field, hashes) in example {
                out.begin_field(field);
                hashes.iter().for_each(|&h| out.push(h, h as f32));
            }
        };
        let runs = |f: &ExpandedFeatures| f.field_runs().collect::<Vec<_>>();
        let mut block = ExpandedFeatures::new(8);
        block.track_fields(true);
        let ends: Vec<ExampleEnd> = examples
            .iter()
            .map(|&example| {
                push(&mut block, example);
                block.end()
            })
            .collect();
        let mut from = ExampleEnd::default();
        for (&example, &to) in examples.iter().zip(&ends) {
            let (mut alone, mut copied) = (ExpandedFeatures::new(8), ExpandedFeatures::new(8));
            alone.track_fields(true);
            copied.track_fields(true);
            push(&mut alone, example);
            copied.extend_from_example(&block, from, to);
            assert_eq!((copied.slots(), copied.values()), (alone.slots(), alone.values()));
            assert_eq!(runs(&copied), runs(&alone));
            assert_eq!(runs(&alone).len(), 3);
            from = to;
        }
    }

    #[test]
    fn field_runs_follow_the_marks_and_survive_dropping() {
        let mut f = ExpandedFeatures::new(8);
        f.begin_field(3);
        assert_eq!(f.field_runs().count(), 0, "not tracking: nothing recorded");
        f.track_fields(true);
        f.push(9, 1.0);
        f.begin_field(3);
        f.push(1, 1e20);
        f.push(2, 2.0);
        f.begin_field(5);
        f.begin_field(7);
        f.push(3, 1e20);
        f.push(4, 4.0);
        let runs = |f: &ExpandedFeatures| f.field_runs().collect::<Vec<_>>();
        assert_eq!(runs(&f), vec![(0, 0..1), (3, 1..3), (5, 3..3), (7, 3..5)]);
        assert_eq!(f.drop_overflowing(1), 2);
        assert_eq!(runs(&f), vec![(0, 0..1), (3, 1..2), (5, 2..2), (7, 2..3)]);
        assert_eq!(f.values(), &[1.0, 2.0, 4.0]);
        f.clear();
        f.push(1, 1.0);
        assert_eq!(runs(&f), vec![(0, 0..1)], "unmarked features are the constant field's");
    }
}

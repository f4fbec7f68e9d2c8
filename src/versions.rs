//! Every version of the model file's format, in one place. [`CURRENT`] is what `save` writes;
//! each other constant is the first version of a change that readers of older files must
//! know about (an older file is read in its own layout, and the model continues as it was
//! trained). A change to what a model file holds adds a version here, and nowhere else.

/// The version `save` writes.
pub const CURRENT: u32 = GROWING_TABLE;

/// Version 1 chained apple's slots of degree >= 3 (`model::legacy` reads it, unless such slots
/// moved; version 2 hashes a monomial's slot from its parent's).
pub const CHAINED_SLOTS: u32 = 1;
/// The sectioned layout: each component (learner, feature set, apple, DoS, ...) owns a named
/// section of its bytes (older files: `model::legacy`).
pub const SECTIONED: u32 = 3;
/// The learner stores its lazy L1/L2 state beside unscaled weights (so an L1 model resumes bit
/// for bit after save and load).
pub const LAZY_SCALES: u32 = 4;
/// The learner stores its field scales.
pub const FIELD_SCALES: u32 = 5;
/// Field-level apple stores `catch_up`.
pub const FIELD_CATCH_UP: u32 = 6;
/// Apple beside field crosses keeps categorical namespaces out of its parents.
pub const CATEGORICAL: u32 = 6;
/// Apple stores `catch_up` (an older model continues without: its new monomials never caught up).
pub const APPLE_CATCH_UP: u32 = 7;
/// The learner stores `initial_weight` and crosses of any number of namespaces.
pub const CROSSES: u32 = 9;
/// Every component stores its options as its serde struct, in JSON ([`crate::codec`]): an
/// option added later with a serde default (the value that behaves as before it existed) is
/// read from older files as that default, and needs no version of its own.
pub const SELF_DESCRIBING: u32 = 10;
/// Field-level apple's crosses may join more than two fields: each stored cross lists its
/// fields' count before them.
pub const LONGER_CROSSES: u32 = 11;
/// The learner stores what its growing table keeps between looks (the share of slots in use
/// at its last growth), after the factorization.
pub const GROWING_TABLE: u32 = 12;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_change_is_at_most_the_current_version() {
        let changes = [
            CHAINED_SLOTS,
            SECTIONED,
            LAZY_SCALES,
            FIELD_SCALES,
            FIELD_CATCH_UP,
            CATEGORICAL,
            APPLE_CATCH_UP,
            CROSSES,
            SELF_DESCRIBING,
            LONGER_CROSSES,
            GROWING_TABLE,
        ];
        assert!(changes.iter().all(|&v| (1..=CURRENT).contains(&v)));
        assert_eq!(CURRENT, *changes.iter().max().unwrap());
    }
}

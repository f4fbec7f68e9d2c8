//! Feature hashing. Saved models depend on these functions never changing: any change here is a
//! format break and must bump the model format version.
//!
//! * [`murmur3_32`] is MurmurHash3 x86_32 (Austin Appleby's public-domain reference algorithm),
//!   the same function Vowpal Wabbit calls `uniform_hash`.
//! * [`hash_feature_name`] is Vowpal Wabbit's `hashstring` rule: a name made only of ASCII digits
//!   (after trimming spaces) hashes to its integer value plus the seed; any other name hashes with
//!   MurmurHash3 seeded by `seed`. A feature inside a namespace (or a categorical value inside a
//!   column) is hashed with the namespace's (column's) hash as its seed, as Vowpal Wabbit does.
//! * [`columns::hash_columns`] hashes the columns of a table row by row (`hash_features`).

pub mod columns;

/// MurmurHash3, x86 32-bit variant.
#[inline]
pub fn murmur3_32(data: &[u8], seed: u32) -> u32 {
    let mut h = seed;
    let mut blocks = data.chunks_exact(4);
    for block in &mut blocks {
        let k = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
        h = murmur3_block(h, k);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut k: u32 = 0;
        for (shift, &byte) in tail.iter().enumerate() {
            k |= (byte as u32) << (8 * shift);
        }
        h ^= k.wrapping_mul(0xcc9e_2d51).rotate_left(15).wrapping_mul(0x1b87_3593);
    }
    h ^= data.len() as u32;
    fmix32(h)
}

/// MurmurHash3's finalizer: a bijective avalanche on 32 bits.
#[inline]
pub fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h
}

/// Vowpal Wabbit's `hashstring`: the name without the control bytes and spaces (0x00..=0x20)
/// at either end; all-digit names map to `value + seed`, others to MurmurHash3.
#[inline]
pub fn hash_feature_name(name: &[u8], seed: u32) -> u32 {
    // Most names start with neither a digit nor a byte to trim and do not end in one: nothing
    // to trim, not all digits, so straight to MurmurHash3 (a third of a hashed field's time).
    if let (Some(&first), Some(&last)) = (name.first(), name.last()) {
        if !first.is_ascii_digit() && !is_trimmed(first) && !is_trimmed(last) {
            return murmur3_32(name, seed);
        }
    }
    hash_trimmed_name(name, seed)
}

/// [`hash_feature_name`] of a name that may need trimming or be all digits.
fn hash_trimmed_name(name: &[u8], seed: u32) -> u32 {
    let trimmed = trim_controls(name);
    if !trimmed.is_empty() && trimmed.iter().all(u8::is_ascii_digit) {
        let mut value: u32 = 0;
        for &digit in trimmed {
            value = value.wrapping_mul(10).wrapping_add(u32::from(digit - b'0'));
        }
        return value.wrapping_add(seed);
    }
    murmur3_32(trimmed, seed)
}

/// Index of a numeric column's feature: the hash of the column name.
pub fn numeric_column_index(column: &str, seed: u32, bits: u32) -> u64 {
    mask(hash_feature_name(column.as_bytes(), seed), bits)
}

/// Seed under which a categorical column's values are hashed (the column acts as a namespace).
pub fn column_namespace_hash(column: &str, seed: u32) -> u32 {
    hash_feature_name(column.as_bytes(), seed)
}

/// Index of a categorical value inside a column whose namespace hash is `namespace_hash`.
#[inline]
pub fn categorical_index(value: &str, namespace_hash: u32, bits: u32) -> u64 {
    mask(hash_feature_name(value.as_bytes(), namespace_hash), bits)
}

/// Hash of a monomial, given as its sorted index tuple (a multiset: x3^2 is `[3, 3]`).
///
/// Defined as MurmurHash3 x86_32 of the indices written as consecutive little-endian u64 words,
/// so it is order independent (callers sort) and checkable with any MurmurHash3 library. It is
/// computed incrementally: [`monomial_step`] folds one index into a running state (so a prefix
/// shared by many monomials is hashed once) and [`monomial_finish`] closes it.
pub fn monomial_hash(sorted_indices: &[u64], seed: u32) -> u32 {
    let state = sorted_indices.iter().fold(seed, |state, &index| monomial_step(state, index));
    monomial_finish(state, sorted_indices.len())
}

/// Folds one index (two 32-bit MurmurHash3 blocks) into a monomial hash state.
#[inline]
pub fn monomial_step(state: u32, index: u64) -> u32 {
    let low = murmur3_block(state, index as u32);
    murmur3_block(low, (index >> 32) as u32)
}

/// Closes a monomial hash state over `degree` indices.
#[inline]
pub fn monomial_finish(state: u32, degree: usize) -> u32 {
    fmix32(state ^ (8 * degree) as u32)
}

#[inline]
fn murmur3_block(state: u32, block: u32) -> u32 {
    let k = block.wrapping_mul(0xcc9e_2d51).rotate_left(15).wrapping_mul(0x1b87_3593);
    (state ^ k).rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64)
}

/// Vowpal Wabbit's constant (bias) feature hash; masked like any other index.
pub const CONSTANT_FEATURE: u32 = 11_650_396;

/// Keeps the low `bits` bits of a hash (the index into a table of 2^bits columns).
#[inline]
pub fn mask(hash: u32, bits: u32) -> u64 {
    (hash as u64) & ((1u64 << bits) - 1)
}

/// Largest supported table size exponent: hashes are 32-bit.
pub const MAX_HASH_BITS: u32 = 32;

/// The bytes `hashstring` trims: those of a signed `char` in 0..=0x20 (controls and space;
/// bytes >= 0x80 are negative there and stay).
#[inline]
fn is_trimmed(byte: u8) -> bool {
    byte <= b' '
}

fn trim_controls(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|&b| !is_trimmed(b)).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|&b| !is_trimmed(b)).map_or(start, |p| p + 1);
    &bytes[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur3_matches_reference_vectors() {
        // Published MurmurHash3_x86_32 test vectors.
        assert_eq!(murmur3_32(b"", 0), 0);
        assert_eq!(murmur3_32(b"", 1), 0x514e_28b7);
        assert_eq!(murmur3_32(b"", 0xffff_ffff), 0x81f1_6f39);
        assert_eq!(murmur3_32(b"\0\0\0\0", 0), 0x2362_f9de);
        assert_eq!(murmur3_32(b"aaaa", 0x9747_b28c), 0x5a97_808a);
        assert_eq!(murmur3_32(b"abc", 0), 0xb3dd_93fa);
        assert_eq!(murmur3_32(b"Hello, world!", 1234), 0xfaf6_cdb3);
        assert_eq!(
            murmur3_32(b"The quick brown fox jumps over the lazy dog", 0x9747_b28c),
            0x2fa8_26cd
        );
    }

    #[test]
    fn monomial_hash_is_murmur3_of_little_endian_words() {
        let tuple = [3u64, 3, 1 << 40];
        let bytes: Vec<u8> = tuple.iter().flat_map(|i| i.to_le_bytes()).collect();
        assert_eq!(monomial_hash(&tuple, 99), murmur3_32(&bytes, 99));
        assert_eq!(monomial_hash(&[], 5), murmur3_32(b"", 5));
    }

    #[test]
    fn digit_names_hash_to_their_value_plus_seed() {
        assert_eq!(hash_feature_name(b"123", 7), 130);
        assert_eq!(hash_feature_name(b" 42 ", 0), 42);
        assert_eq!(hash_feature_name(b"12a", 0), murmur3_32(b"12a", 0));
        // Vowpal Wabbit trims control bytes too (a NUL after a name, a tab), not bytes >= 0x80.
        assert_eq!(hash_feature_name(b"\t7\n", 1), 8);
        assert_eq!(hash_feature_name(b"w\0", 0), murmur3_32(b"w", 0));
        assert_eq!(hash_feature_name(b"\x01w\x7f", 0), murmur3_32(b"w\x7f", 0));
        assert_eq!(hash_feature_name(b"w\xa0", 0), murmur3_32(b"w\xa0", 0));
    }

    proptest::proptest! {
        /// The shortcut for names with nothing to trim and a leading non-digit is the rule.
        #[test]
        fn feature_names_hash_by_the_rule(name in "[ \\t\\x00\\x1f\\x7f0-9a-c]{0,8}", seed: u32) {
            let rule = hash_trimmed_name(name.as_bytes(), seed);
            proptest::prop_assert_eq!(hash_feature_name(name.as_bytes(), seed), rule);
        }
    }

    #[test]
    fn mask_keeps_low_bits() {
        assert_eq!(mask(0xffff_ffff, 18), (1 << 18) - 1);
        assert_eq!(mask(0xffff_ffff, 32), 0xffff_ffff);
    }
}

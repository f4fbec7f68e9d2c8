use super::*;
use crate::hashing::monomial_hash;
use crate::polynomial::column_of_exponents;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// Brute force: every monomial of the dense row, by enumerating sorted tuples over D.
fn dense_expansion(dense: &[f64], spec: &ExpansionSpec) -> BTreeMap<u64, f64> {
    let d = dense.len() as u64;
    let mut out = BTreeMap::new();
    if spec.include_bias {
        out.insert(0, 1.0);
    }
    fn go(
        dense: &[f64],
        k: usize,
        from: u64,
        io: bool,
        tuple: &mut Vec<u64>,
        visit: &mut dyn FnMut(&[u64]),
    ) {
        if tuple.len() == k {
            visit(tuple);
            return;
        }
        for i in from..dense.len() as u64 {
            tuple.push(i);
            go(dense, k, if io { i + 1 } else { i }, io, tuple, visit);
            tuple.pop();
        }
    }
    for k in spec.degrees() {
        go(dense, k as usize, 0, spec.interaction_only, &mut Vec::new(), &mut |tuple| {
            let value: f64 = tuple.iter().map(|&i| dense[i as usize]).product();
            if value != 0.0 {
                let mut exponents: Vec<(u64, u32)> = Vec::new();
                for &i in tuple {
                    match exponents.last_mut() {
                        Some((last, p)) if *last == i => *p += 1,
                        _ => exponents.push((i, 1)),
                    }
                }
                out.insert(column_of_exponents(&exponents, d, spec).unwrap(), value);
            }
        });
    }
    out
}

fn spec_strategy() -> impl Strategy<Value = ExpansionSpec> {
    (0u32..=4, 1u32..=4, any::<bool>(), any::<bool>()).prop_map(|(a, b, io, bias)| ExpansionSpec {
        min_degree: a.min(b),
        max_degree: b,
        interaction_only: io,
        include_bias: bias,
    })
}

proptest! {
    #[test]
    fn exact_expansion_equals_brute_force(
        rows in proptest::collection::vec(proptest::collection::vec((0u32..7, -2i32..3), 0..8), 0..6),
        spec in spec_strategy(),
        parallel in any::<bool>(),
    ) {
        let d = 7u64;
        let mut offsets = vec![0i64];
        let (mut indices, mut values) = (Vec::new(), Vec::new());
        for row in &rows {
            for &(i, v) in row { indices.push(i); values.push(f64::from(v)); }
            offsets.push(indices.len() as i64);
        }
        let sparse = SparseRows::new(&offsets, &indices, &values).unwrap();
        let out = expand(&sparse, d, &spec, parallel).unwrap();
        for (r, row) in rows.iter().enumerate() {
            let mut dense = vec![0.0; d as usize];
            for &(i, v) in row { dense[i as usize] += f64::from(v); }
            let expected = dense_expansion(&dense, &spec);
            let span = out.offsets[r] as usize..out.offsets[r + 1] as usize;
            let got: Vec<(u64, f64)> = out.indices[span.clone()].iter().copied().zip(out.values[span].iter().copied()).collect();
            let expected: Vec<(u64, f64)> = expected.into_iter().collect();
            prop_assert_eq!(got, expected);
        }
    }

    #[test]
    fn hashed_expansion_sums_brute_force_monomials(
        row in proptest::collection::vec((0u32..50, 1i32..4), 0..8),
        spec in spec_strategy(),
        bits in 3u32..12,
    ) {
        let offsets = [0i64, row.len() as i64];
        let indices: Vec<u32> = row.iter().map(|e| e.0).collect();
        let values: Vec<f64> = row.iter().map(|e| f64::from(e.1)).collect();
        let sparse = SparseRows::new(&offsets, &indices, &values).unwrap();
        let out = expand_hashed(&sparse, &spec, bits, 7, false).unwrap();
        let mut dense = vec![0.0; 50];
        for (&i, &v) in indices.iter().zip(&values) { dense[i as usize] += v; }
        let mut expected: BTreeMap<u64, f64> = BTreeMap::new();
        let exact = dense_expansion(&dense, &spec);
        for (&column, &value) in &exact {
            let exponents = crate::polynomial::monomial_exponents(column, 50, &spec).unwrap();
            let tuple: Vec<u64> = exponents.iter().flat_map(|&(i, p)| std::iter::repeat_n(i, p as usize)).collect();
            let hashed = match tuple.len() {
                0 => mask(CONSTANT_FEATURE, bits),
                1 => tuple[0] & ((1 << bits) - 1),
                _ => mask(monomial_hash(&tuple, 7), bits),
            };
            *expected.entry(hashed).or_insert(0.0) += value;
        }
        expected.retain(|_, v| *v != 0.0);
        let got: BTreeMap<u64, f64> = out.indices.iter().copied().zip(out.values.iter().copied()).collect();
        prop_assert_eq!(got.len(), out.indices.len(), "rows must be sorted and unique");
        prop_assert!(out.indices.windows(2).all(|w| w[0] < w[1]));
        for (column, value) in &expected {
            prop_assert!((got.get(column).copied().unwrap_or(0.0) - value).abs() < 1e-9);
        }
        prop_assert_eq!(got.len(), expected.len());
    }
}

#[test]
fn errors_name_the_smallest_failing_row() {
    let offsets: Vec<i64> = (0..=1000).collect();
    let mut indices = vec![1u32; 1000];
    indices[700] = 9;
    indices[300] = 8;
    let values = vec![1.0f64; 1000];
    let rows = SparseRows::new(&offsets, &indices, &values).unwrap().with_first_row(5);
    let spec =
        ExpansionSpec { min_degree: 0, max_degree: 2, interaction_only: false, include_bias: true };
    let err = expand(&rows, 5, &spec, true).unwrap_err().to_string();
    assert!(err.contains("row 305: feature index 8 is out of range for n_features=5"), "{err}");
}

#[test]
fn products_that_overflow_are_errors_naming_the_row_not_infinities() {
    let (offsets, indices) = ([0i64, 2, 4], [0u32, 1, 0, 1]);
    let values = [1.0f64, 2.0, 3.0, 1e300];
    let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
    for max_degree in [2, 3] {
        let spec = ExpansionSpec {
            min_degree: 1,
            max_degree,
            interaction_only: false,
            include_bias: false,
        };
        for parallel in [false, true] {
            let err = expand(&rows, 2, &spec, parallel).unwrap_err().to_string();
            assert!(err.starts_with("row 1: a value of magnitude 1e300"), "{err}");
            let err = expand_hashed(&rows, &spec, 10, 0, parallel).unwrap_err().to_string();
            assert!(err.contains(&format!("degree-{max_degree} products")), "{err}");
        }
    }
    // Degree 1 multiplies nothing: the value passes through.
    let linear = ExpansionSpec {
        min_degree: 1,
        max_degree: 1,
        interaction_only: false,
        include_bias: false,
    };
    assert_eq!(expand(&rows, 2, &linear, false).unwrap().values, values);
}

#[test]
fn lookup_tables_and_per_row_binomials_agree() {
    // One row alone has fewer entries than D (per-row binomials); 200 copies of it have more
    // (whole-D lookup tables). Both must expand the row identically, at every degree.
    let d = 50u64;
    let row_indices = [0u32, 3, 17, 18, 49];
    let row_values = [1.5f64, -2.0, 0.25, 3.0, 7.0];
    let mut offsets = vec![0i64];
    let (mut indices, mut values) = (Vec::new(), Vec::new());
    for _ in 0..200 {
        indices.extend_from_slice(&row_indices);
        values.extend_from_slice(&row_values);
        offsets.push(indices.len() as i64);
    }
    let many = SparseRows::new(&offsets, &indices, &values).unwrap();
    let one = SparseRows::new(&offsets[..2], &indices, &values).unwrap();
    for interaction_only in [false, true] {
        for max_degree in 1..=4 {
            let spec =
                ExpansionSpec { min_degree: 0, max_degree, interaction_only, include_bias: true };
            let alone = expand(&one, d, &spec, false).unwrap();
            let copies = expand(&many, d, &spec, false).unwrap();
            let len = alone.indices.len();
            assert_eq!(alone.indices[..], copies.indices[..len]);
            assert_eq!(alone.values[..], copies.values[..len]);
        }
    }
}

#[test]
fn rows_on_both_sides_of_the_pair_table_limit_match_brute_force() {
    // Rows up to PairTable::MAX_ROW_NNZ entries take their last two positions from the
    // pair table; longer ones close position k directly. Both must be exact.
    let d = 70u64;
    for nnz in [PairTable::MAX_ROW_NNZ - 1, PairTable::MAX_ROW_NNZ, PairTable::MAX_ROW_NNZ + 1] {
        // Sorted, with gaps, all below D.
        let row_indices: Vec<u64> = (0..nnz as u64).map(|i| i + i / 16).collect();
        assert!(row_indices.last().is_some_and(|&i| i < d));
        let row_values: Vec<f64> = (0..nnz).map(|i| 1.0 + (i % 5) as f64 * 0.5).collect();
        let offsets = [0, nnz as i64];
        let rows = SparseRows::new(&offsets, &row_indices, &row_values).unwrap();
        let mut dense = vec![0.0; d as usize];
        for (&i, &v) in row_indices.iter().zip(&row_values) {
            dense[i as usize] = v;
        }
        for interaction_only in [false, true] {
            let spec = ExpansionSpec {
                min_degree: 2,
                max_degree: 3,
                interaction_only,
                include_bias: false,
            };
            let out = expand(&rows, d, &spec, false).unwrap();
            let got: Vec<(u64, f64)> =
                out.indices.iter().copied().zip(out.values.iter().copied()).collect();
            let expected: Vec<(u64, f64)> = dense_expansion(&dense, &spec).into_iter().collect();
            assert_eq!(got, expected, "nnz {nnz}, interaction_only {interaction_only}");
        }
    }
}

#[test]
fn huge_d_uses_64_bit_columns() {
    let d = 1u64 << 21;
    let spec = ExpansionSpec {
        min_degree: 3,
        max_degree: 3,
        interaction_only: false,
        include_bias: false,
    };
    let indices = [5u64, d - 1];
    let rows = SparseRows::new(&[0, 2], &indices, &[2.0f64, 3.0]).unwrap();
    let out = expand(&rows, d, &spec, false).unwrap();
    let width = crate::polynomial::output_width(d, &spec).unwrap();
    assert_eq!(out.indices.last().copied(), Some(width - 1));
    assert_eq!(out.values.last().copied(), Some(27.0));
    assert!(out.indices.windows(2).all(|w| w[0] < w[1]));
}

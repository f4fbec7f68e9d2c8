//! The hashed form: each row's monomials hashed into `2^bits` columns, sorted and summed, after
//! a check that the whole output fits in memory.

use super::*;

/// Hashed expansion into `2^bits` columns: degree 1 keeps the index (masked), degree >= 2 uses
/// [`crate::hashing::monomial_hash`] of the sorted tuple, the bias is
/// [`CONSTANT_FEATURE`] (masked). Colliding monomials of a row are summed; rows come out sorted.
pub fn expand_hashed<I: SparseIndex, V: SparseValue>(
    rows: &SparseRows<'_, I, V>,
    spec: &ExpansionSpec,
    bits: u32,
    seed: u32,
    parallel: bool,
) -> PolyResult<SparseMatrix<u64, f64>> {
    spec.validate()?;
    if bits == 0 || bits > MAX_HASH_BITS {
        return crate::invalid!("bits must be in 1..={MAX_HASH_BITS}, got {bits}");
    }
    check_hashed_output_fits(rows, spec, bits)?;
    let chunks = row_chunks(rows.n_rows(), parallel);
    let parts = map_chunks(&chunks, parallel, |range| {
        let mut row = CanonicalRow::default();
        let mut entries: Vec<(u64, f64)> = Vec::new();
        let mut part = SparseMatrix::<u64, f64>::with_capacity(range.len(), 0);
        for r in range {
            crate::interrupt::check()?;
            row.load(rows, r, None, false)?;
            let count = check_hashed_row_fits(row.indices.len() as u64, spec, rows.row_number(r))?;
            row.check_products_finite(spec.max_degree, rows.row_number(r))?;
            entries.clear();
            // Exactly the checked size: growing by doubling would briefly need half as much again.
            entries.reserve_exact(count as usize);
            if spec.include_bias {
                entries.push((mask(CONSTANT_FEATURE, bits), 1.0));
            }
            for degree in spec.degrees() {
                hashed_block(
                    &row,
                    degree as usize,
                    1,
                    0,
                    seed,
                    1.0,
                    spec.interaction_only,
                    bits,
                    &mut entries,
                );
            }
            entries.sort_unstable_by_key(|e| e.0);
            // Collisions summed; entries that cancelled exactly dropped (rows stay canonical).
            push_summed(entries.iter().copied(), &mut part.indices, &mut part.values);
            part.end_row();
        }
        Ok(part)
    })?;
    let total: usize = parts.iter().map(|p| p.indices.len()).sum();
    let mut out = SparseMatrix::with_capacity(rows.n_rows(), total);
    for part in parts {
        let base = *out.offsets.last().unwrap_or(&0);
        out.offsets.extend(part.offsets[1..].iter().map(|o| o + base));
        out.indices.extend_from_slice(&part.indices);
        out.values.extend_from_slice(&part.values);
    }
    Ok(out)
}

/// Checks that the hashed expansion of `rows` fits in memory before any of it is built: at most
/// `min(monomials, 2^bits)` entries a row (collisions only merge), held twice at 16 bytes each
/// (the parts, then the whole). Growing the output without this check ended in an abort when the
/// allocator failed, or the kernel's OOM killer.
pub(super) fn check_hashed_output_fits<I: SparseIndex, V: SparseValue>(
    rows: &SparseRows<'_, I, V>,
    spec: &ExpansionSpec,
    bits: u32,
) -> PolyResult<()> {
    let width = 1u64 << bits;
    let mut bound: u64 = 0;
    for r in 0..rows.n_rows() {
        let nnz = rows.row(r).0.len() as u64;
        let count = row_output_len(nnz, spec).map_or(width, |count| count.min(width));
        bound = bound.saturating_add(count);
    }
    crate::memory::check_large_fits(
        bound,
        32,
        || format!("the hashed expansion of {} rows (up to {bound} entries)", rows.n_rows()),
        "use a lower degree, fewer rows at a time (the expand expression streams in batches) or \
         fewer features per row",
    )
}

/// Checks that the monomials of a row with `nnz` nonzeros (row `row`) fit in memory before the
/// hashed expansion lists them (a column and a value each; only asked for huge rows); returns
/// how many there are.
pub(super) fn check_hashed_row_fits(nnz: u64, spec: &ExpansionSpec, row: usize) -> PolyResult<u64> {
    let count = row_output_len(nnz, spec)?;
    crate::memory::check_large_fits(
        count,
        16,
        || format!("row {row} ({nnz} nonzeros, {count} monomials before hashing)"),
        "use a lower degree or fewer features per row",
    )?;
    Ok(count)
}

/// Appends the hashed degree-`k` monomials of a row, position `q` onward from entry `from`.
#[allow(clippy::too_many_arguments)]
pub(super) fn hashed_block(
    row: &CanonicalRow,
    k: usize,
    q: usize,
    from: usize,
    state: u32,
    value: f64,
    interaction_only: bool,
    bits: u32,
    out: &mut Vec<(u64, f64)>,
) {
    let n = row.indices.len();
    for a in from..n {
        let index = row.indices[a];
        let product = value * row.values[a];
        if k == 1 {
            out.push((index & ((1u64 << bits) - 1), product));
        } else if q == k {
            out.push((mask(monomial_finish(monomial_step(state, index), k), bits), product));
        } else {
            let next_from = a + usize::from(interaction_only);
            hashed_block(
                row,
                k,
                q + 1,
                next_from,
                monomial_step(state, index),
                product,
                interaction_only,
                bits,
                out,
            );
        }
    }
}

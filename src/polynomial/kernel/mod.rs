//! The expansion kernels. Exact form: count every row's output, allocate once, fill rows in
//! parallel into disjoint slices (no per-degree blocks, no stacking). Hashed form: each row's
//! monomials hashed, sorted and summed per column.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use super::simplex::{block_size, Term};
use super::{ExpansionSpec, Layout};
use crate::error::{PolyError, PolyResult};
use crate::hashing::{mask, monomial_finish, monomial_step, CONSTANT_FEATURE, MAX_HASH_BITS};
use crate::memory::output_buffer;
use crate::sparse::{
    canonical_entry, canonicalize_row, is_canonical, push_summed, SparseIndex, SparseMatrix,
    SparseRows, SparseValue,
};

mod fill;
mod hashed;
#[cfg(test)]
mod tests;

use fill::*;
pub use hashed::expand_hashed;

/// One row in canonical form, split into index and value arrays (reused between rows).
#[derive(Default)]
struct CanonicalRow {
    pairs: Vec<(u64, f64)>,
    indices: Vec<u64>,
    values: Vec<f64>,
}

impl CanonicalRow {
    fn load<I: SparseIndex, V: SparseValue>(
        &mut self,
        rows: &SparseRows<'_, I, V>,
        row: usize,
        n_features: Option<u64>,
        trusted_canonical: bool,
    ) -> PolyResult<()> {
        let (indices, values) = rows.row(row);
        if trusted_canonical {
            self.indices.clear();
            self.values.clear();
            // to_u64 cannot fail here: the rows were checked canonical when planned.
            self.indices.extend(indices.iter().map(|i| i.to_u64().unwrap_or(0)));
            self.values.extend(values.iter().map(|v| v.to_f64()));
            return Ok(());
        }
        if self.load_if_canonical(rows, row, n_features.unwrap_or(u64::MAX)) {
            return Ok(());
        }
        self.indices.clear();
        self.values.clear();
        canonicalize_row(indices, values, n_features, rows.row_number(row), &mut self.pairs)?;
        self.indices.extend(self.pairs.iter().map(|p| p.0));
        self.values.extend(self.pairs.iter().map(|p| p.1));
        Ok(())
    }

    /// Fails, naming row `row`, when a product of `degree` of the row's values could overflow f64
    /// (its largest value to the power `degree` does): the output would hold infinities.
    fn check_products_finite(&self, degree: u32, row: usize) -> PolyResult<()> {
        let largest = self.values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        if degree > 1 && !largest.powi(degree as i32).is_finite() {
            return crate::invalid!(
                "row {row}: a value of magnitude {largest:e} overflows double precision in \
                 degree-{degree} products; scale the features down"
            );
        }
        Ok(())
    }

    /// Loads row `row` if it is canonical, checking while converting (one pass instead of a
    /// check and a copy). Returns false, the row partly loaded, if it is not.
    fn load_if_canonical<I: SparseIndex, V: SparseValue>(
        &mut self,
        rows: &SparseRows<'_, I, V>,
        row: usize,
        n_features: u64,
    ) -> bool {
        let (indices, values) = rows.row(row);
        // Sized first and written in place: no capacity check per entry.
        self.indices.resize(indices.len(), 0);
        self.values.resize(indices.len(), 0.0);
        let mut next_allowed = 0u64;
        let outputs = self.indices.iter_mut().zip(self.values.iter_mut());
        for ((out_index, out_value), (&index, &value)) in outputs.zip(indices.iter().zip(values)) {
            match canonical_entry(index, value, &mut next_allowed, n_features) {
                Some(entry) => (*out_index, *out_value) = entry,
                None => return false,
            }
        }
        true
    }
}

/// Row ranges processed as one task: a few per thread so uneven rows still balance.
fn row_chunks(n_rows: usize, parallel: bool) -> Vec<std::ops::Range<usize>> {
    let tasks = if parallel { rayon::current_num_threads() * 8 } else { 1 };
    let size = n_rows.div_ceil(tasks.max(1)).max(1);
    (0..n_rows).step_by(size).map(|start| start..(start + size).min(n_rows)).collect()
}

/// Number of output entries of a canonical row with `nnz` nonzeros.
fn row_output_len(nnz: u64, spec: &ExpansionSpec) -> PolyResult<u64> {
    let mut total = u64::from(spec.include_bias);
    for degree in spec.degrees() {
        let size = block_size(nnz, degree, spec.interaction_only)
            .and_then(|size| total.checked_add(size))
            .ok_or_else(|| {
                PolyError::Overflow(format!(
                    "a row with {nnz} nonzeros expands to more than 2^64 entries"
                ))
            })?;
        total = size;
    }
    Ok(total)
}

/// [`row_output_len`] looked up for the common short rows (it is asked once per row, twice).
struct RowLengths {
    spec: ExpansionSpec,
    short: Vec<Option<u64>>,
}

impl RowLengths {
    const SHORT: u64 = 256;

    fn new(spec: &ExpansionSpec) -> Self {
        let short = (0..Self::SHORT).map(|nnz| row_output_len(nnz, spec).ok()).collect();
        Self { spec: *spec, short }
    }

    #[inline]
    fn get(&self, nnz: usize) -> PolyResult<u64> {
        match self.short.get(nnz) {
            Some(Some(len)) => Ok(*len),
            _ => row_output_len(nnz as u64, &self.spec),
        }
    }
}

/// Runs `task` over the row chunks (in parallel or not), keeping chunk order; on failure
/// returns the error of the earliest chunk, which holds the smallest failing row.
fn map_chunks<T: Send>(
    chunks: &[std::ops::Range<usize>],
    parallel: bool,
    task: impl Fn(std::ops::Range<usize>) -> PolyResult<T> + Sync,
) -> PolyResult<Vec<T>> {
    if parallel {
        // Collect every chunk's result first: rayon's Result collect stops at *any* error,
        // and users must be told about the first failing row, deterministically.
        let results: Vec<PolyResult<T>> =
            chunks.par_iter().map(|range| task(range.clone())).collect();
        results.into_iter().collect()
    } else {
        chunks.iter().map(|range| task(range.clone())).collect()
    }
}

/// An integer type the exact expansion can write output columns as: u64/i64 always, u32/i32
/// when every column fits (scipy wants int32 indices whenever they fit).
pub trait OutputIndex: Copy + Send + Sync + 'static {
    /// The largest column this type holds.
    const MAX_COLUMN: u64;
    /// `column` as this type; only called with `column <= MAX_COLUMN`.
    fn from_column(column: u64) -> Self;
}

macro_rules! output_index {
    ($($t:ty),*) => {$(
        impl OutputIndex for $t {
            const MAX_COLUMN: u64 = <$t>::MAX as u64;
            #[inline(always)]
            fn from_column(column: u64) -> Self {
                column as $t
            }
        }
    )*};
}
output_index!(u32, i32, u64, i64);

/// The first pass of the exact expansion: every row validated, its output counted.
/// `offsets[r]..offsets[r + 1]` is where row `r`'s expansion goes.
#[derive(Clone, Debug)]
pub struct ExpansionPlan {
    pub n_features: u64,
    pub spec: ExpansionSpec,
    pub layout: Layout,
    pub offsets: Vec<i64>,
    /// Every row was already canonical (the fill then reads rows without checking them again).
    pub all_canonical: bool,
    /// The counts come from validated rows ([`Self::new`]); an optimistic plan
    /// ([`Self::optimistic`]) has them from the stored lengths and the fill checks each row.
    pub verified: bool,
}

/// Why a fill stopped: an error, or a row an optimistic plan could not take as it is.
enum FillStop {
    Error(PolyError),
    NotCanonical(usize),
}

impl From<PolyError> for FillStop {
    fn from(err: PolyError) -> Self {
        FillStop::Error(err)
    }
}

impl ExpansionPlan {
    /// Validates and counts every row (in parallel if asked). Fails on the first bad row, on an
    /// output wider than `u64` and on more than `2^63` output entries.
    pub fn new<I: SparseIndex, V: SparseValue>(
        rows: &SparseRows<'_, I, V>,
        n_features: u64,
        spec: &ExpansionSpec,
        parallel: bool,
    ) -> PolyResult<Self> {
        let layout = Layout::new(n_features, spec)?;
        let chunks = row_chunks(rows.n_rows(), parallel);
        let lengths = RowLengths::new(spec);
        let counts = map_chunks(&chunks, parallel, |range| {
            let mut row = CanonicalRow::default();
            let mut canonical = true;
            let counts = range
                .map(|r| {
                    crate::interrupt::check()?;
                    let (indices, values) = rows.row(r);
                    let nnz = if is_canonical(indices, values, Some(n_features)) {
                        indices.len()
                    } else {
                        canonical = false;
                        row.load(rows, r, Some(n_features), false)?;
                        row.indices.len()
                    };
                    lengths.get(nnz)
                })
                .collect::<PolyResult<Vec<u64>>>()?;
            Ok((counts, canonical))
        })?;
        let mut offsets = Vec::with_capacity(rows.n_rows() + 1);
        offsets.push(0i64);
        let mut total: u64 = 0;
        for count in counts.iter().flat_map(|(counts, _)| counts) {
            total = total.checked_add(*count).filter(|t| i64::try_from(*t).is_ok()).ok_or_else(
                || PolyError::Overflow("the expanded output has more than 2^63 entries".into()),
            )?;
            offsets.push(total as i64);
        }
        let all_canonical = counts.iter().all(|(_, canonical)| *canonical);
        Ok(Self { n_features, spec: *spec, layout, offsets, all_canonical, verified: true })
    }

    /// Counts every row from its stored length alone, without reading it: exact when rows are
    /// canonical (the common case: one pass over the input saved). The fill then checks each
    /// row as it reads it, and [`Self::execute`] falls back to a validating plan on the first
    /// row that is not canonical (or is invalid, so errors stay those of [`Self::new`]).
    pub fn optimistic<I: SparseIndex, V: SparseValue>(
        rows: &SparseRows<'_, I, V>,
        n_features: u64,
        spec: &ExpansionSpec,
    ) -> PolyResult<Self> {
        let layout = Layout::new(n_features, spec)?;
        let lengths = RowLengths::new(spec);
        let mut offsets = Vec::with_capacity(rows.n_rows() + 1);
        offsets.push(0i64);
        let mut total: u64 = 0;
        for r in 0..rows.n_rows() {
            let count = lengths.get(rows.row(r).0.len())?;
            total = total.checked_add(count).filter(|t| i64::try_from(*t).is_ok()).ok_or_else(
                || PolyError::Overflow("the expanded output has more than 2^63 entries".into()),
            )?;
            offsets.push(total as i64);
        }
        Ok(Self { n_features, spec: *spec, layout, offsets, all_canonical: false, verified: false })
    }

    /// Number of output entries.
    pub fn total(&self) -> usize {
        // Every offset fits i64 and was produced from usize-sized rows.
        self.offsets.last().map_or(0, |&t| t as usize)
    }

    /// Fails unless every output column fits the index type `O`.
    pub fn check_index_type<O: OutputIndex>(&self, type_name: &str) -> PolyResult<()> {
        if self.layout.width > 0 && self.layout.width - 1 > O::MAX_COLUMN {
            return Err(PolyError::Overflow(format!(
                "{} output columns do not fit {type_name} indices",
                self.layout.width
            )));
        }
        Ok(())
    }

    /// The second pass: writes every row's expansion into `indices`/`values` (each exactly
    /// [`Self::total`] long, possibly uninitialized), rows in parallel into disjoint slices.
    /// `rows` must be the rows the plan was made from; every slot is written on success.
    pub fn fill<I: SparseIndex, V: SparseValue, O: OutputIndex>(
        &self,
        rows: &SparseRows<'_, I, V>,
        indices: &mut [MaybeUninit<O>],
        values: &mut [MaybeUninit<f64>],
        parallel: bool,
    ) -> PolyResult<()> {
        match self.fill_inner(rows, indices, values, parallel) {
            Ok(()) => Ok(()),
            Err(FillStop::Error(err)) => Err(err),
            Err(FillStop::NotCanonical(r)) => crate::invalid!(
                "row {}: not canonical (or invalid) under an optimistic plan; use ExpansionPlan::new",
                rows.row_number(r)
            ),
        }
    }

    fn fill_inner<I: SparseIndex, V: SparseValue, O: OutputIndex>(
        &self,
        rows: &SparseRows<'_, I, V>,
        indices: &mut [MaybeUninit<O>],
        values: &mut [MaybeUninit<f64>],
        parallel: bool,
    ) -> Result<(), FillStop> {
        self.check_index_type::<O>(std::any::type_name::<O>())?;
        if rows.n_rows() + 1 != self.offsets.len()
            || indices.len() != self.total()
            || values.len() != self.total()
        {
            return Err(FillStop::Error(PolyError::InvalidInput(format!(
                "expansion plan for {} rows and {} entries used with {} rows and buffers of {} and {}",
                self.offsets.len() - 1,
                self.total(),
                rows.n_rows(),
                indices.len(),
                values.len()
            ))));
        }
        let chunks = row_chunks(rows.n_rows(), parallel);
        let mut tasks = Vec::with_capacity(chunks.len());
        let (mut rest_indices, mut rest_values) = (indices, values);
        for range in &chunks {
            let len = (self.offsets[range.end] - self.offsets[range.start]) as usize;
            let (chunk_indices, tail_indices) = rest_indices.split_at_mut(len);
            let (chunk_values, tail_values) = rest_values.split_at_mut(len);
            tasks.push((range.clone(), chunk_indices, chunk_values));
            rest_indices = tail_indices;
            rest_values = tail_values;
        }
        let filler = Filler::new(self.n_features, &self.spec, &self.layout, rows.n_entries());
        let lengths = RowLengths::new(&self.spec);
        let fill = |(range, out_indices, out_values): ChunkTask<'_, O>| {
            let mut row = CanonicalRow::default();
            let mut scratch = RowScratch::default();
            let mut cursor = 0;
            for r in range {
                crate::interrupt::check()?;
                if !self.verified {
                    if !row.load_if_canonical(rows, r, self.n_features) {
                        return Err(FillStop::NotCanonical(r));
                    }
                } else {
                    row.load(rows, r, Some(self.n_features), self.all_canonical)?;
                }
                row.check_products_finite(self.spec.max_degree, rows.row_number(r))?;
                let end = (self.offsets[r + 1] - self.offsets[r]) as usize + cursor;
                if end > out_indices.len()
                    || lengths.get(row.indices.len())? as usize + cursor != end
                {
                    return Err(FillStop::Error(PolyError::InvalidInput(format!(
                        "row {}: the rows changed between planning and filling the expansion",
                        rows.row_number(r)
                    ))));
                }
                cursor = filler.fill_row(&row, &mut scratch, out_indices, out_values, cursor);
            }
            Ok::<(), FillStop>(())
        };
        if parallel {
            let results: Vec<Result<(), FillStop>> = tasks.into_par_iter().map(fill).collect();
            results.into_iter().collect()
        } else {
            tasks.into_iter().try_for_each(fill)
        }
    }
}

type ChunkTask<'a, O> =
    (std::ops::Range<usize>, &'a mut [MaybeUninit<O>], &'a mut [MaybeUninit<f64>]);

/// Exact polynomial expansion into scikit-learn's column layout, each row sorted, columns as
/// `O` (u64 always works; u32/i32 fail unless every column fits).
pub fn expand_as<I: SparseIndex, V: SparseValue, O: OutputIndex>(
    rows: &SparseRows<'_, I, V>,
    n_features: u64,
    spec: &ExpansionSpec,
    parallel: bool,
) -> PolyResult<SparseMatrix<O, f64>> {
    ExpansionPlan::optimistic(rows, n_features, spec)?.execute(rows, parallel)
}

impl ExpansionPlan {
    /// Allocates the output (huge-page backed) and fills it: the whole second pass.
    pub fn execute<I: SparseIndex, V: SparseValue, O: OutputIndex>(
        self,
        rows: &SparseRows<'_, I, V>,
        parallel: bool,
    ) -> PolyResult<SparseMatrix<O, f64>> {
        let plan = self;
        plan.check_index_type::<O>(std::any::type_name::<O>())?;
        let total = plan.total();
        // Both buffers at once: each checked alone, the pair could pass at up to twice what
        // is free (a reserved buffer counts as used only once it is written).
        crate::memory::check_fits(
            total as u128 * (size_of::<O>() + size_of::<f64>()) as u128,
            &format!("the expansion ({total} entries of indices and values)"),
            "use a lower degree, fewer features or fewer rows at a time",
        )?;
        let mut indices = output_buffer::<O>(total, "expanded indices")?;
        let mut values = output_buffer::<f64>(total, "expanded values")?;
        let filled = plan.fill_inner(
            rows,
            &mut indices.spare_capacity_mut()[..total],
            &mut values.spare_capacity_mut()[..total],
            parallel,
        );
        match filled {
            Ok(()) => {}
            Err(FillStop::Error(err)) => return Err(err),
            Err(FillStop::NotCanonical(_)) => {
                drop((indices, values));
                let checked = ExpansionPlan::new(rows, plan.n_features, &plan.spec, parallel)?;
                return checked.execute(rows, parallel);
            }
        }
        // SAFETY: the fill returned Ok, so it wrote every one of the first `total` slots of both
        // buffers (each row exactly its planned length, rows tiling 0..total).
        unsafe {
            indices.set_len(total);
            values.set_len(total);
        }
        Ok(SparseMatrix { offsets: plan.offsets, indices, values })
    }
}

/// Exact polynomial expansion with UInt64 columns (see [`expand_as`]).
pub fn expand<I: SparseIndex, V: SparseValue>(
    rows: &SparseRows<'_, I, V>,
    n_features: u64,
    spec: &ExpansionSpec,
    parallel: bool,
) -> PolyResult<SparseMatrix<u64, f64>> {
    expand_as::<I, V, u64>(rows, n_features, spec, parallel)
}

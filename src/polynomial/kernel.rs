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

/// Per-expansion constants of the exact fill: the terms of every degree and position.
struct Filler {
    include_bias: bool,
    interaction_only: bool,
    blocks: Vec<FillBlock>,
}

/// One degree block: its first column, its terms and (when D is small next to the input) the
/// term binomials of every feature index, so rows look them up instead of computing them.
struct FillBlock {
    degree: usize,
    start: u64,
    /// terms[q - 1] for positions q = 1..=degree.
    terms: Vec<Term>,
    /// For outer positions q < degree: end_q(i), then start_{q+1}(i), for i in 0..D.
    lookup: Option<Vec<Vec<u64>>>,
    /// The first binomial of term 1 (the same for every row).
    first: u64,
}

impl Filler {
    /// Lookup tables are built only for D up to this, and only when the input has at least D
    /// entries (so building them costs less than the per-row binomials they replace).
    const LOOKUP_MAX_FEATURES: u64 = 1 << 16;

    fn new(n_features: u64, spec: &ExpansionSpec, layout: &Layout, input_entries: usize) -> Self {
        let with_lookup =
            n_features <= Self::LOOKUP_MAX_FEATURES && n_features <= input_entries as u64;
        let blocks = layout
            .blocks
            .iter()
            .map(|&(degree, start)| {
                let terms: Vec<Term> = (1..=degree)
                    .map(|q| Term::new(n_features, degree, q, spec.interaction_only))
                    .collect();
                let lookup = with_lookup.then(|| {
                    (1..degree as usize)
                        .flat_map(|q| {
                            let (end, start) = (terms[q - 1], terms[q]);
                            let last = q + 1 == degree as usize;
                            [
                                (0..n_features).map(|i| end.end(i)).collect(),
                                // start_k is never read: the last position closes by an add.
                                if last {
                                    Vec::new()
                                } else {
                                    (0..n_features).map(|i| start.start(i)).collect()
                                },
                            ]
                        })
                        .collect()
                });
                let first = if degree == 1 { 0 } else { terms[0].first() };
                FillBlock { degree: degree as usize, start, terms, lookup, first }
            })
            .collect();
        Self { include_bias: spec.include_bias, interaction_only: spec.interaction_only, blocks }
    }

    /// Writes one canonical row's expansion at `cursor`; returns the new cursor.
    fn fill_row<O: OutputIndex>(
        &self,
        row: &CanonicalRow,
        scratch: &mut RowScratch,
        out_indices: &mut [MaybeUninit<O>],
        out_values: &mut [MaybeUninit<f64>],
        mut cursor: usize,
    ) -> usize {
        if self.include_bias {
            out_indices[cursor].write(O::from_column(0));
            out_values[cursor].write(1.0);
            cursor += 1;
        }
        let n = row.indices.len();
        // One pair table serves every block of degree >= 3 (see PairTable).
        let mut pairs_built = false;
        for block in &self.blocks {
            let (k, terms) = (block.degree, &block.terms);
            let first = block.first;
            macro_rules! enumerate {
                ($terms:expr) => {{
                    let terms = $terms;
                    let with_pairs = k >= 3 && n <= PairTable::MAX_ROW_NNZ;
                    if with_pairs && !pairs_built {
                        scratch.pairs.build(row, &terms, k - 1, self.interaction_only);
                        pairs_built = true;
                    }
                    let pairs = with_pairs.then_some(&scratch.pairs);
                    let mut enumeration = Block {
                        pairs,
                        row,
                        terms,
                        n,
                        k,
                        start: block.start,
                        interaction_only: self.interaction_only,
                        out_indices: &mut *out_indices,
                        out_values: &mut *out_values,
                        cursor,
                    };
                    enumeration.descend(1, 0, first, 1.0, 0);
                    enumeration.cursor
                }};
            }
            cursor = match &block.lookup {
                Some(lookup) => enumerate!(LookupTerms { tables: lookup }),
                None => {
                    let tables = &mut scratch.tables;
                    // tables[(q - 1) * 2n ..]: end_q(i_a) then start_{q+1}(i_a), for outer
                    // positions q < k (start_k is never read: the last position closes by an add).
                    tables.clear();
                    for q in 1..k {
                        tables.extend(row.indices.iter().map(|&i| terms[q - 1].end(i)));
                        if q + 1 < k {
                            tables.extend(row.indices.iter().map(|&i| terms[q].start(i)));
                        } else {
                            tables.resize(tables.len() + n, 0);
                        }
                    }
                    enumerate!(RowTerms { tables, n })
                }
            };
        }
        cursor
    }
}

/// Where the enumeration reads the term binomials end_q(i_a) and start_{q+1}(i_a).
trait TermSource {
    fn end(&self, q: usize, a: usize, index: u64) -> u64;
    fn start(&self, q: usize, a: usize, index: u64) -> u64;
}

/// Per-row tables, by row position a: `[(q - 1) * 2n + a]` and `[(q - 1) * 2n + n + a]`.
struct RowTerms<'a> {
    tables: &'a [u64],
    n: usize,
}

impl TermSource for RowTerms<'_> {
    #[inline(always)]
    fn end(&self, q: usize, a: usize, _index: u64) -> u64 {
        self.tables[(q - 1) * 2 * self.n + a]
    }
    #[inline(always)]
    fn start(&self, q: usize, a: usize, _index: u64) -> u64 {
        self.tables[(q - 1) * 2 * self.n + self.n + a]
    }
}

/// Whole-D lookup tables, by feature index (canonical rows hold indices below D).
struct LookupTerms<'a> {
    tables: &'a [Vec<u64>],
}

impl TermSource for LookupTerms<'_> {
    #[inline(always)]
    fn end(&self, q: usize, _a: usize, index: u64) -> u64 {
        self.tables[2 * (q - 1)][index as usize]
    }
    #[inline(always)]
    fn start(&self, q: usize, _a: usize, index: u64) -> u64 {
        self.tables[2 * (q - 1) + 1][index as usize]
    }
}

/// Per-task scratch space of the exact fill, reused between rows.
#[derive(Default)]
struct RowScratch {
    /// Per-row term binomials (when there are no whole-D lookup tables).
    tables: Vec<u64>,
    pairs: PairTable,
}

/// The last two positions of every degree-k block (k >= 3) of one row, enumerated once.
///
/// The rank splits as prefix(i_1..i_{k-2}) + pair(i_{k-1}, i_k), where the pair part
/// `i_k - end_{k-1}(i_{k-1}) - i_{k-1} (- 1 for interactions)` does not depend on the prefix,
/// nor on k: term k-1 of a degree-k block is C(D - i + 1, 2) (C(D - i, 2) for interactions)
/// whatever k is. So every prefix ending before row position b writes one contiguous run: the
/// pairs from `first_pair[b]` on, offset by its prefix and scaled by its value. On short rows
/// this turns many short inner loops (one per (k-1)-prefix, a few outputs each) into few long
/// ones. (The degree-2 block is itself one such run: writing it directly is cheaper.)
#[derive(Default)]
struct PairTable {
    /// Pair rank part, wrapping, for the pairs in lexicographic order of row positions.
    columns: Vec<u64>,
    /// v_{k-1} * v_k of each pair.
    values: Vec<f64>,
    /// first_pair[b]: index of the first pair whose position k-1 is row entry b (n + 1 long).
    first_pair: Vec<usize>,
}

impl PairTable {
    /// Longest row built as a table: n(n+1)/2 pairs of 16 bytes stay in the L1/L2 cache, and
    /// longer rows already have long inner loops.
    const MAX_ROW_NNZ: usize = 64;

    /// Builds the pairs of positions (q, q + 1) = (k - 1, k) of a row.
    fn build<T: TermSource>(&mut self, row: &CanonicalRow, terms: &T, q: usize, strict: bool) {
        let (indices, values) = (&row.indices, &row.values);
        let n = indices.len();
        self.columns.clear();
        self.values.clear();
        self.first_pair.clear();
        for b in 0..n {
            self.first_pair.push(self.columns.len());
            let (index, value) = (indices[b], values[b]);
            let shift = terms.end(q, b, index).wrapping_add(index).wrapping_add(u64::from(strict));
            let from = b + usize::from(strict);
            let (tail_indices, tail_values) = (&indices[from.min(n)..], &values[from.min(n)..]);
            self.columns.extend(tail_indices.iter().map(|&c| c.wrapping_sub(shift)));
            self.values.extend(tail_values.iter().map(|&v| value * v));
        }
        self.first_pair.push(self.columns.len());
    }
}

/// The enumeration of one degree block of one row.
struct Block<'a, O, T> {
    /// The last two positions tabulated (degree >= 3, short rows), or None.
    pairs: Option<&'a PairTable>,
    row: &'a CanonicalRow,
    terms: T,
    n: usize,
    k: usize,
    start: u64,
    interaction_only: bool,
    out_indices: &'a mut [MaybeUninit<O>],
    out_values: &'a mut [MaybeUninit<f64>],
    cursor: usize,
}

impl<O: OutputIndex, T: TermSource> Block<'_, O, T> {
    /// Chooses position `q` (1-based) from row entry `from` on. `carried` is the rank prefix of
    /// the positions before q plus the first binomial of term q; `previous` is i_{q-1}.
    fn descend(&mut self, q: usize, from: usize, carried: u64, value: f64, previous: u64) {
        if q == self.k {
            let shift = if self.k == 1 { 0 } else { previous + u64::from(self.interaction_only) };
            self.close(from, carried, value, shift);
            return;
        }
        let row = self.row;
        let (indices, values) = (&row.indices, &row.values);
        // Leave room for the positions still to choose (interaction-only tuples are strict).
        let last = if self.interaction_only { self.n.saturating_sub(self.k - q) } else { self.n };
        let strict = usize::from(self.interaction_only);
        if q + 1 == self.k {
            if let Some(pairs) = self.pairs {
                self.write_pairs(pairs, from, carried, value);
                return;
            }
            // The next position is the last: close it here rather than one call per entry.
            for a in from..last {
                let index = indices[a];
                let shift = index + u64::from(self.interaction_only);
                let carried = carried.wrapping_sub(self.terms.end(q, a, index));
                self.close(a + strict, carried, value * values[a], shift);
            }
            return;
        }
        for a in from..last {
            let index = indices[a];
            let next = carried
                .wrapping_sub(self.terms.end(q, a, index))
                .wrapping_add(self.terms.start(q, a, index));
            self.descend(q + 1, a + strict, next, value * values[a], index);
        }
    }

    /// Positions k-1 and k from row entry `from` on, out of the pair table: one run.
    #[inline(always)]
    fn write_pairs(&mut self, pairs: &PairTable, from: usize, carried: u64, value: f64) {
        let first = pairs.first_pair[from];
        let base = self.start.wrapping_add(carried);
        self.write_run(base, &pairs.columns[first..], &pairs.values[first..], value);
    }

    /// The last position, over entries `from..`: the last term closes to i_k - i_{k-1}
    /// (- 1 for interactions), so each monomial costs one add and one multiply.
    #[inline(always)]
    fn close(&mut self, from: usize, carried: u64, value: f64, shift: u64) {
        let base = self.start.wrapping_add(carried).wrapping_sub(shift);
        let row = self.row;
        self.write_run(base, &row.indices[from..], &row.values[from..], value);
    }

    /// Writes the run `(base + offsets[j], value * factors[j])` at the cursor.
    #[inline(always)]
    fn write_run(&mut self, base: u64, offsets: &[u64], factors: &[f64], value: f64) {
        // Plain local slices of one length: the loop keeps its pointers in registers and has
        // no bounds checks.
        let m = offsets.len();
        let factors = &factors[..m];
        let cursor = self.cursor;
        let out_indices = &mut self.out_indices[cursor..cursor + m];
        let out_values = &mut self.out_values[cursor..cursor + m];
        for j in 0..m {
            out_indices[j].write(O::from_column(base.wrapping_add(offsets[j])));
            out_values[j].write(value * factors[j]);
        }
        self.cursor = cursor + m;
    }
}

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
fn check_hashed_output_fits<I: SparseIndex, V: SparseValue>(
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
fn check_hashed_row_fits(nnz: u64, spec: &ExpansionSpec, row: usize) -> PolyResult<u64> {
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
fn hashed_block(
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

#[cfg(test)]
mod tests {
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
        (0u32..=4, 1u32..=4, any::<bool>(), any::<bool>()).prop_map(|(a, b, io, bias)| {
            ExpansionSpec {
                min_degree: a.min(b),
                max_degree: b,
                interaction_only: io,
                include_bias: bias,
            }
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
        let spec = ExpansionSpec {
            min_degree: 0,
            max_degree: 2,
            interaction_only: false,
            include_bias: true,
        };
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
                let spec = ExpansionSpec {
                    min_degree: 0,
                    max_degree,
                    interaction_only,
                    include_bias: true,
                };
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
        for nnz in [PairTable::MAX_ROW_NNZ - 1, PairTable::MAX_ROW_NNZ, PairTable::MAX_ROW_NNZ + 1]
        {
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
                let expected: Vec<(u64, f64)> =
                    dense_expansion(&dense, &spec).into_iter().collect();
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
}

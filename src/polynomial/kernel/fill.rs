//! Filling the exact form's rows: each row's monomials written in scikit-learn's column order,
//! short rows through a table of their index pairs.

use super::*;

/// Per-expansion constants of the exact fill: the terms of every degree and position.
pub(super) struct Filler {
    pub(super) include_bias: bool,
    pub(super) interaction_only: bool,
    pub(super) blocks: Vec<FillBlock>,
}

/// One degree block: its first column, its terms and (when D is small next to the input) the
/// term binomials of every feature index, so rows look them up instead of computing them.
pub(super) struct FillBlock {
    pub(super) degree: usize,
    pub(super) start: u64,
    /// terms[q - 1] for positions q = 1..=degree.
    pub(super) terms: Vec<Term>,
    /// For outer positions q < degree: end_q(i), then start_{q+1}(i), for i in 0..D.
    pub(super) lookup: Option<Vec<Vec<u64>>>,
    /// The first binomial of term 1 (the same for every row).
    pub(super) first: u64,
}

impl Filler {
    /// Lookup tables are built only for D up to this, and only when the input has at least D
    /// entries (so building them costs less than the per-row binomials they replace).
    const LOOKUP_MAX_FEATURES: u64 = 1 << 16;

    pub(super) fn new(
        n_features: u64,
        spec: &ExpansionSpec,
        layout: &Layout,
        input_entries: usize,
    ) -> Self {
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
    pub(super) fn fill_row<O: OutputIndex>(
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
pub(super) trait TermSource {
    fn end(&self, q: usize, a: usize, index: u64) -> u64;
    fn start(&self, q: usize, a: usize, index: u64) -> u64;
}

/// Per-row tables, by row position a: `[(q - 1) * 2n + a]` and `[(q - 1) * 2n + n + a]`.
pub(super) struct RowTerms<'a> {
    pub(super) tables: &'a [u64],
    pub(super) n: usize,
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
pub(super) struct LookupTerms<'a> {
    pub(super) tables: &'a [Vec<u64>],
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
pub(super) struct RowScratch {
    /// Per-row term binomials (when there are no whole-D lookup tables).
    pub(super) tables: Vec<u64>,
    pub(super) pairs: PairTable,
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
pub(super) struct PairTable {
    /// Pair rank part, wrapping, for the pairs in lexicographic order of row positions.
    pub(super) columns: Vec<u64>,
    /// v_{k-1} * v_k of each pair.
    pub(super) values: Vec<f64>,
    /// first_pair[b]: index of the first pair whose position k-1 is row entry b (n + 1 long).
    pub(super) first_pair: Vec<usize>,
}

impl PairTable {
    /// Longest row built as a table: n(n+1)/2 pairs of 16 bytes stay in the L1/L2 cache, and
    /// longer rows already have long inner loops.
    pub(super) const MAX_ROW_NNZ: usize = 64;

    /// Builds the pairs of positions (q, q + 1) = (k - 1, k) of a row.
    pub(super) fn build<T: TermSource>(
        &mut self,
        row: &CanonicalRow,
        terms: &T,
        q: usize,
        strict: bool,
    ) {
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
pub(super) struct Block<'a, O, T> {
    /// The last two positions tabulated (degree >= 3, short rows), or None.
    pub(super) pairs: Option<&'a PairTable>,
    pub(super) row: &'a CanonicalRow,
    pub(super) terms: T,
    pub(super) n: usize,
    pub(super) k: usize,
    pub(super) start: u64,
    pub(super) interaction_only: bool,
    pub(super) out_indices: &'a mut [MaybeUninit<O>],
    pub(super) out_values: &'a mut [MaybeUninit<f64>],
    pub(super) cursor: usize,
}

impl<O: OutputIndex, T: TermSource> Block<'_, O, T> {
    /// Chooses position `q` (1-based) from row entry `from` on. `carried` is the rank prefix of
    /// the positions before q plus the first binomial of term q; `previous` is i_{q-1}.
    pub(super) fn descend(
        &mut self,
        q: usize,
        from: usize,
        carried: u64,
        value: f64,
        previous: u64,
    ) {
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
    pub(super) fn write_pairs(&mut self, pairs: &PairTable, from: usize, carried: u64, value: f64) {
        let first = pairs.first_pair[from];
        let base = self.start.wrapping_add(carried);
        self.write_run(base, &pairs.columns[first..], &pairs.values[first..], value);
    }

    /// The last position, over entries `from..`: the last term closes to i_k - i_{k-1}
    /// (- 1 for interactions), so each monomial costs one add and one multiply.
    #[inline(always)]
    pub(super) fn close(&mut self, from: usize, carried: u64, value: f64, shift: u64) {
        let base = self.start.wrapping_add(carried).wrapping_sub(shift);
        let row = self.row;
        self.write_run(base, &row.indices[from..], &row.values[from..], value);
    }

    /// Writes the run `(base + offsets[j], value * factors[j])` at the cursor.
    #[inline(always)]
    pub(super) fn write_run(&mut self, base: u64, offsets: &[u64], factors: &[f64], value: f64) {
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

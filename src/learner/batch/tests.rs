use super::*;
use crate::learner::example::FeatureUnion;
use crate::learner::{Expansion, Interactions};
use proptest::prelude::*;

/// CSR arrays of rows given as (index, value) lists.
fn csr(rows: &[Vec<(i64, f64)>]) -> (Vec<i64>, Vec<i64>, Vec<f64>) {
    let mut offsets = vec![0i64];
    let (mut indices, mut values) = (Vec::new(), Vec::new());
    for row in rows {
        for &(i, v) in row {
            indices.push(i);
            values.push(v);
        }
        offsets.push(indices.len() as i64);
    }
    (offsets, indices, values)
}

/// A block of wide rows (a namespace of 100-139 features crossed with itself, thousands of
/// features a row) is expanded only as far as [`BLOCK_FEATURES`] allows, each expanded
/// example as `Interactions::expand` gives it alone; the rows past it are left unexpanded.
#[test]
fn a_block_of_wide_rows_is_expanded_up_to_its_budget() {
    let rows: Vec<Vec<(i64, f64)>> = (0..60)
        .map(|row| (0..100 + row % 40).map(|j| (j * 3 + row, 1.0 + (j % 3) as f64)).collect())
        .collect();
    let one_hot: Vec<Vec<(i64, f64)>> = (0..60).map(|row| vec![(row % 7, 1.0)]).collect();
    let arrays = [csr(&one_hot), csr(&rows)];
    let columns = sparse_rows(&arrays);
    let namespaces: Vec<&dyn NamespaceRows> =
        columns.iter().map(|r| r as &dyn NamespaceRows).collect();
    let labels = vec![1.0; 60];
    let batch = Batch::new(&namespaces, &labels, None).unwrap();
    let expansion =
        Interactions { namespace_crosses: vec![vec![1, 1], vec![0, 1]], ..Interactions::linear() };
    let mut block = ExampleBlock::default();
    assert!(block.fill(&batch, &mut (0..60), &[11, 12]));
    block.expand_whole(7, TableSlots { bits: 20, owners: false }, true, |rows, out, ends| {
        expansion.expand_block(rows, out, ends)
    });
    let expanded = block.expanded.as_ref().unwrap();
    let n = expanded.ends.len();
    assert!(n > 1 && n < 60, "{n} rows expanded");
    assert!(expanded.features.len() <= BLOCK_FEATURES);
    let next = expansion.count(1 + rows[n].len(), &[1, rows[n].len()]);
    assert!(expanded.features.len() + next > BLOCK_FEATURES, "row {n} would not have fit");
    for p in 0..n {
        let example = block.example(p, &batch, Union::Skip).unwrap();
        let mut alone = ExpandedFeatures::new(20);
        alone.track_fields(true);
        expansion.expand(&example, &mut alone);
        let (from, to) = expanded.bounds(p);
        let mut copied = ExpandedFeatures::new(20);
        copied.track_fields(true);
        copied.extend_from_example(&expanded.features, from, to);
        assert_eq!((copied.slots(), copied.values()), (alone.slots(), alone.values()));
        assert!(copied.field_runs().eq(alone.field_runs()));
    }
}

/// An example as (its namespaces, its feature set).
type View = (Vec<Vec<(u64, f32)>>, Vec<(u64, f32)>);
/// Every example the blocks serve, in order, or the error.
type Served = Vec<Result<View, String>>;

/// One `SparseRows` per CSR triple of [`csr`].
fn sparse_rows(arrays: &[(Vec<i64>, Vec<i64>, Vec<f64>)]) -> Vec<SparseRows<'_, i64, f64>> {
    arrays.iter().map(|(o, i, v)| SparseRows::new(o, i, v).unwrap()).collect()
}

fn pairs(hashes: &[u64], values: &[f32]) -> Vec<(u64, f32)> {
    hashes.iter().copied().zip(values.iter().copied()).collect()
}

fn view(example: &Example<'_>) -> View {
    let namespaces = (0..example.n_namespaces())
        .map(|k| pairs(example.namespace(k).hashes, example.namespace(k).values))
        .collect();
    let (hashes, values) = example.features();
    (namespaces, pairs(hashes, values))
}

fn served_by_blocks(batch: &Batch<'_>, order: &[usize], seeds: &[u64]) -> Served {
    let mut blocks = ExampleBlocks::default();
    let mut source = RowBlocks { batch, rows: order.iter().copied(), seeds };
    let mut out = Vec::new();
    let mut more = blocks.start(&mut source);
    let mut union = FeatureUnion::default();
    while more {
        match blocks.example(blocks.cursor(), batch, Union::Build(&mut union)) {
            Ok(example) => out.push(Ok(view(&example))),
            Err(error) => {
                out.push(Err(error.to_string()));
                break;
            }
        }
        more = blocks.advance(&mut source);
    }
    out
}

fn served_row_by_row(batch: &Batch<'_>, order: &[usize], seeds: &[u64]) -> Served {
    let mut buffer = ExampleBuffer::new();
    let mut out = Vec::new();
    for &row in order {
        match batch.example(row, seeds, &mut buffer) {
            Ok(example) => out.push(Ok(view(&example))),
            Err(error) => {
                out.push(Err(error.to_string()));
                break;
            }
        }
    }
    out
}

fn entry() -> impl Strategy<Value = (i64, f64)> {
    // Any order, repeated indices, some zeros (the bad entries come from `bad_entry`).
    (0i64..12, prop_oneof![8 => -3.0f64..3.0, 1 => Just(0.0), 1 => Just(1.0)])
}

fn bad_entry() -> impl Strategy<Value = (i64, f64)> {
    prop_oneof![Just((-1i64, 1.0)), Just((2, f64::NAN)), Just((3, 1e300))]
}

proptest! {
    /// Blocks serve exactly the examples building row by row gives, in any row order, with
    /// unsorted, repeated and zero entries, and stop at the same first error.
    #[test]
    fn blocks_serve_what_building_row_by_row_gives(
        columns in prop::collection::vec(
            prop::collection::vec(prop::collection::vec(entry(), 0..4), 600), 1..4),
        bad in prop::option::of((0usize..3, 0usize..600, bad_entry())),
        bad_label in prop::option::of(0usize..600),
        shuffle in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let mut columns = columns;
        if let Some((k, row, entry)) = bad {
            if let Some(column) = columns.get_mut(k) {
                column[row].push(entry);
            }
        }
        let arrays: Vec<_> = columns.iter().map(|rows| csr(rows)).collect();
        let rows = sparse_rows(&arrays);
        let namespaces: Vec<&dyn NamespaceRows> =
            rows.iter().map(|r| r as &dyn NamespaceRows).collect();
        let mut labels = vec![1.0; 600];
        if let Some(row) = bad_label {
            labels[row] = f64::INFINITY;
        }
        let batch = Batch::new(&namespaces, &labels, None).unwrap().with_first_row(1000);
        let seeds: Vec<u64> = (0..namespaces.len() as u64).map(|k| seed.wrapping_add(k * 977)).collect();
        let mut order: Vec<usize> = (0..600).collect();
        if shuffle {
            let mut state = seed | 1;
            for i in (1..order.len()).rev() {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                order.swap(i, (state >> 33) as usize % (i + 1));
            }
        }
        prop_assert_eq!(
            served_by_blocks(&batch, &order, &seeds),
            served_row_by_row(&batch, &order, &seeds)
        );
    }

    /// The shape the blocks tell without reading a row is the shape of its example,
    /// categorical where every row of the block is one feature of value 1 per namespace (a
    /// block with another value, or a row with no feature in some namespace, does not tell).
    #[test]
    fn a_blocks_shape_is_its_examples_shape(
        n_namespaces in 1usize..4,
        scaled in prop::option::of(0usize..600),
        empty in prop::option::of(0usize..600),
        seed in any::<u64>(),
    ) {
        let columns: Vec<Vec<Vec<(i64, f64)>>> = (0..n_namespaces)
            .map(|k| {
                (0..600)
                    .map(|row| match (k, row) {
                        (0, row) if Some(row) == empty => vec![],
                        (0, row) if Some(row) == scaled => vec![(3, 2.0)],
                        _ => vec![(((row * 7 + k) % 12) as i64, 1.0)],
                    })
                    .collect()
            })
            .collect();
        let arrays: Vec<_> = columns.iter().map(|rows| csr(rows)).collect();
        let rows = sparse_rows(&arrays);
        let namespaces: Vec<&dyn NamespaceRows> =
            rows.iter().map(|r| r as &dyn NamespaceRows).collect();
        let labels = vec![1.0; 600];
        let batch = Batch::new(&namespaces, &labels, None).unwrap();
        let seeds: Vec<u64> = (0..n_namespaces as u64).map(|k| seed.wrapping_add(k)).collect();
        let mut blocks = ExampleBlocks::default();
        let mut source = RowBlocks { batch: &batch, rows: 0..600, seeds: &seeds };
        let (mut more, mut row) = (blocks.start(&mut source), 0);
        let block_of = |row: Option<usize>| row.map(|r| r / BLOCK_ROWS);
        while more {
            let at = blocks.cursor();
            let example = blocks.example(at, &batch, Union::Skip).unwrap();
            let block = Some(row / BLOCK_ROWS);
            let shape = blocks.shape(at).unwrap();
            let read = ExampleShape::of(&example);
            prop_assert_eq!(shape, ExampleShape { categorical: shape.categorical, ..read });
            prop_assert!(!shape.categorical || read.categorical);
            let one_value_each = block != block_of(empty) && block != block_of(scaled);
            prop_assert_eq!(shape.categorical, one_value_each);
            more = blocks.advance(&mut source);
            row += 1;
        }
        prop_assert_eq!(row, 600);
    }
}

//! Tests of the LIBSVM reader.

use super::*;
use crate::readers::lines::tests::{gzip, source};
use proptest::collection::vec;
use proptest::prelude::*;

fn options(zero_based: ZeroBased) -> LibsvmOptions {
    LibsvmOptions { zero_based, n_features: None }
}

fn reader_of(bytes: &[u8], options: LibsvmOptions) -> LibsvmReader {
    LibsvmReader::from_reader("mem.svm", source(bytes.to_vec()), options).unwrap()
}

fn read(text: &str, options: LibsvmOptions) -> PolyResult<(LibsvmBatch, u64)> {
    reader_of(text.as_bytes(), options).read_to_end()
}

fn rows(batch: &LibsvmBatch) -> Vec<Vec<(u32, f64)>> {
    batch
        .offsets
        .windows(2)
        .map(|w| {
            let (start, end) = (w[0] as usize, w[1] as usize);
            batch.indices[start..end]
                .iter()
                .copied()
                .zip(batch.values[start..end].iter().copied())
                .collect()
        })
        .collect()
}

/// The reason and line of a parse error; fails the test on any other outcome.
fn parse_failure(result: PolyResult<(LibsvmBatch, u64)>) -> (u64, String, String) {
    match result {
        Err(PolyError::Parse { path, line, reason, text }) => {
            assert_eq!(path, "mem.svm");
            (line, reason, text)
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
}

fn batches(text: &str, options: LibsvmOptions, size: usize) -> PolyResult<Vec<LibsvmBatch>> {
    let mut reader = reader_of(text.as_bytes(), options);
    let mut out = Vec::new();
    while let Some(batch) = reader.next_batch(size)? {
        out.push(batch);
    }
    Ok(out)
}

fn concat(batches: &[LibsvmBatch]) -> LibsvmBatch {
    let with_qids = batches.iter().any(|b| b.qids.is_some());
    let mut all = LibsvmBatch::new(with_qids);
    all.first_line = batches.first().map_or(0, |b| b.first_line);
    for batch in batches {
        let base = all.indices.len() as i64;
        all.labels.extend(&batch.labels);
        if let Some(qids) = &mut all.qids {
            qids.extend(batch.qids.clone().unwrap_or_else(|| vec![0; batch.n_rows()]));
        }
        all.offsets.extend(batch.offsets[1..].iter().map(|o| o + base));
        all.indices.extend(&batch.indices);
        all.values.extend(&batch.values);
    }
    all
}

#[test]
fn reads_plain_lines_one_based_by_default() {
    let (batch, n) = read("+1 1:0.5 3:2\n-1 2:1\n2 1:1.5e0", LibsvmOptions::default()).unwrap();
    assert_eq!(batch.labels, vec![1.0, -1.0, 2.0]);
    assert_eq!(rows(&batch), vec![vec![(0, 0.5), (2, 2.0)], vec![(1, 1.0)], vec![(0, 1.5)]]);
    assert_eq!(batch.offsets, vec![0, 2, 3, 4]);
    assert_eq!(batch.qids, None);
    assert_eq!(batch.first_line, 1);
    assert_eq!(n, 3);
}

#[test]
fn skips_comments_and_blank_lines_and_accepts_tabs_and_crlf() {
    let text = "# header\n\n  \t \n1\t1:1  2:2 # tail\r\n# only a comment\r\n-1 3:1#glued\r\n2\n";
    let (batch, n) = read(text, LibsvmOptions::default()).unwrap();
    assert_eq!(batch.labels, vec![1.0, -1.0, 2.0]);
    assert_eq!(rows(&batch), vec![vec![(0, 1.0), (1, 2.0)], vec![(2, 1.0)], vec![]]);
    assert_eq!(batch.first_line, 4);
    assert_eq!(n, 3);
}

#[test]
fn gzip_input_reads_like_plain_input() {
    let text = "1 qid:1 1:1 5:2\n\n-1 qid:2 3:4 # c\r\n";
    let plain = reader_of(text.as_bytes(), LibsvmOptions::default()).read_to_end().unwrap();
    let packed = reader_of(&gzip(text.as_bytes()), LibsvmOptions::default()).read_to_end().unwrap();
    assert_eq!(plain, packed);
    assert_eq!(plain.1, 5);
}

#[test]
fn qids_are_read_and_missing_ones_are_zero() {
    let (batch, _) = read("3 qid:7 1:1\n2 qid:-2 2:1\n", LibsvmOptions::default()).unwrap();
    assert_eq!(batch.qids, Some(vec![7, -2]));
    assert_eq!(rows(&batch), vec![vec![(0, 1.0)], vec![(1, 1.0)]]);

    let (batch, _) = read("1 1:1\n2 qid:5 1:1\n3 1:1\n", LibsvmOptions::default()).unwrap();
    assert_eq!(batch.qids, Some(vec![0, 5, 0]));

    // Once seen, every later batch carries qids, even one whose lines have none.
    let got = batches("1 1:1\n2 qid:5 1:1\n3 1:1\n4 1:1\n", LibsvmOptions::default(), 2).unwrap();
    assert_eq!(got[0].qids, Some(vec![0, 5]));
    assert_eq!(got[1].qids, Some(vec![0, 0]));

    let (batch, _) = read("1 qid:3\n", LibsvmOptions::default()).unwrap();
    assert_eq!((rows(&batch), batch.qids), (vec![vec![]], Some(vec![3])));
}

#[test]
fn unsorted_and_duplicate_indices_become_canonical() {
    let yes = options(ZeroBased::Yes);
    let (batch, n) = read("1 5:1 2:2 5:3 3:0 2:-2 4:0.5\n", yes).unwrap();
    // 2:2 + 2:-2 cancels, 3:0 is dropped, 5:1 + 5:3 = 4.
    assert_eq!(rows(&batch), vec![vec![(4, 0.5), (5, 4.0)]]);
    assert_eq!(n, 6);
    let (batch, _) = read("1 2:1 2:3 1:1\n", yes).unwrap();
    assert_eq!(rows(&batch), vec![vec![(1, 1.0), (2, 4.0)]]);
    // Sorted rows with zeros are already canonical once the zeros are left out.
    let (batch, _) = read("1 1:1 2:0 3:1\n", yes).unwrap();
    assert_eq!(rows(&batch), vec![vec![(1, 1.0), (3, 1.0)]]);
    // Equal indices in sorted order are duplicates too.
    let (batch, _) = read("1 1:1 1:2\n", yes).unwrap();
    assert_eq!(rows(&batch), vec![vec![(1, 3.0)]]);
}

#[test]
fn explicit_zeros_count_for_the_number_of_features() {
    let (batch, n) = read("1 1:1 123:0\n", LibsvmOptions::default()).unwrap();
    assert_eq!(rows(&batch), vec![vec![(0, 1.0)]]);
    assert_eq!(n, 123);
    let mut reader = reader_of(b"1 7:0\n", options(ZeroBased::Yes));
    assert_eq!(rows(&reader.next_batch(10).unwrap().unwrap()), vec![vec![]]);
    assert_eq!(reader.n_features_seen(), 8);
}

#[test]
fn zero_based_modes() {
    let one_based = "1 1:1 3:2\n0 2:5\n";
    let (batch, n) = read(one_based, options(ZeroBased::Yes)).unwrap();
    assert_eq!((rows(&batch), n), (vec![vec![(1, 1.0), (3, 2.0)], vec![(2, 5.0)]], 4));
    let (batch, n) = read(one_based, options(ZeroBased::No)).unwrap();
    assert_eq!((rows(&batch), n), (vec![vec![(0, 1.0), (2, 2.0)], vec![(1, 5.0)]], 3));
    assert_eq!(read(one_based, options(ZeroBased::Auto)).unwrap(), (batch, n));

    let zero_based = "1 0:1 2:2\n";
    let (batch, n) = read(zero_based, options(ZeroBased::Yes)).unwrap();
    assert_eq!((rows(&batch), n), (vec![vec![(0, 1.0), (2, 2.0)]], 3));
    assert_eq!(read(zero_based, options(ZeroBased::Auto)).unwrap(), (batch, n));
    let (line, reason, _) = parse_failure(read(zero_based, options(ZeroBased::No)));
    assert_eq!(line, 1);
    assert!(reason.contains("index 0") && reason.contains("one-based"), "{reason}");
}

#[test]
fn auto_looks_at_the_whole_file_when_reading_it_all() {
    // An index 0 on the last line makes every line zero-based (scikit-learn's rule), even a
    // zero-valued one.
    let (batch, n) = read("1 1:1 3:2\n0 2:5\n0 0:0\n", LibsvmOptions::default()).unwrap();
    assert_eq!(rows(&batch), vec![vec![(1, 1.0), (3, 2.0)], vec![(2, 5.0)], vec![]]);
    assert_eq!(n, 4);
    let reader = reader_of(b"", LibsvmOptions::default());
    assert_eq!(reader.zero_based(), None);
}

#[test]
fn streaming_auto_decides_on_the_first_batch_and_refuses_a_late_index_zero() {
    let mut reader = reader_of(b"1 1:1\n1 2:1\n1 0:1\n", LibsvmOptions::default());
    let first = reader.next_batch(2).unwrap().unwrap();
    assert_eq!(rows(&first), vec![vec![(0, 1.0)], vec![(1, 1.0)]]);
    assert_eq!(reader.zero_based(), Some(false));
    assert_eq!(reader.n_features_seen(), 2);
    let err = reader.next_batch(2).unwrap_err();
    let PolyError::Parse { line, reason, text, .. } = &err else { panic!("{err}") };
    assert_eq!((*line, text.as_str()), (3, "1 0:1"));
    assert!(reason.contains("zero_based") && reason.contains("lines 1-2"), "{reason}");

    // Explicit modes stream the same file fine.
    let got = batches("1 1:1\n1 2:1\n1 0:1\n", options(ZeroBased::Yes), 2).unwrap();
    assert_eq!(got.iter().map(LibsvmBatch::n_rows).sum::<usize>(), 3);
}

#[test]
fn streaming_auto_waits_for_a_batch_with_an_index() {
    let mut reader = reader_of(b"1\n2 # nothing\n3 2:1\n4 0:1\n", LibsvmOptions::default());
    assert_eq!(rows(&reader.next_batch(2).unwrap().unwrap()), vec![vec![], vec![]]);
    assert_eq!((reader.zero_based(), reader.n_features_seen()), (None, 0));
    // The batch with index 2 decides one-based; the index 0 after it is a conflict.
    assert_eq!(rows(&reader.next_batch(1).unwrap().unwrap()), vec![vec![(1, 1.0)]]);
    assert_eq!(reader.zero_based(), Some(false));
    assert!(reader.next_batch(1).is_err());

    // A first batch with an index 0 decides zero-based for the rest of the file.
    let got = batches("1 0:1\n1 3:1\n", LibsvmOptions::default(), 1).unwrap();
    assert_eq!(rows(&concat(&got)), vec![vec![(0, 1.0)], vec![(3, 1.0)]]);
}

#[test]
fn n_features_bounds_indices_after_the_shift() {
    let limited = |zero_based, n| LibsvmOptions { zero_based, n_features: Some(n) };
    let (line, reason, _) = parse_failure(read("1 1:1\n1 3:1\n", limited(ZeroBased::Yes, 3)));
    assert_eq!(line, 2);
    assert!(reason.contains("out of range for n_features=3"), "{reason}");
    // The width reported is n_features, not the width seen.
    let (batch, n) = read("1 3:1\n", limited(ZeroBased::No, 10)).unwrap();
    assert_eq!((rows(&batch), n), (vec![vec![(2, 1.0)]], 10));
    assert!(read("1 4:1\n", limited(ZeroBased::No, 3)).is_err());

    // Auto: written 3 is fine one-based, out of range once an index 0 makes it zero-based.
    assert_eq!(read("1 3:1\n", limited(ZeroBased::Auto, 3)).unwrap().1, 3);
    let (line, reason, text) = parse_failure(read("1 3:1\n1 0:1\n", limited(ZeroBased::Auto, 3)));
    assert_eq!((line, text.as_str()), (1, "1 3:1"));
    assert!(reason.contains("zero-based"), "{reason}");
    let (line, reason, _) = parse_failure(read("1 1:1\n1 4:1\n", limited(ZeroBased::Auto, 3)));
    assert_eq!(line, 2);
    assert!(reason.contains("feature index 3 (written 4)"), "{reason}");
}

#[test]
fn malformed_lines_name_the_line_and_the_reason() {
    let cases = [
        ("1 3", "not of the form index:value"),
        ("abc 1:2", "label \"abc\" is not a number"),
        ("1 x:2", "\"x\" is not an unsigned integer"),
        ("1 :2", "empty feature index"),
        ("1 2:", "feature value \"\" is not a number"),
        ("1 2:abc", "feature value \"abc\" is not a number"),
        ("1 1:1:2", "feature value \"1:2\" is not a number"),
        ("1 -2:1", "feature index -2 is negative"),
        ("1 +:1", "\"+\" is not an unsigned integer"),
        ("1 1__0:1", "\"1__0\" is not an unsigned integer"),
        ("1 _1:1", "\"_1\" is not an unsigned integer"),
        ("1 1_:1", "\"1_\" is not an unsigned integer"),
        ("1 1:1_", "feature value \"1_\" is not a number"),
        ("1_ 1:1", "label \"1_\" is not a number"),
        ("1 qid:0.5 1:1", "qid \"0.5\" is not an integer"),
        ("1 qid:1e30 1:1", "qid \"1e30\" is not an integer"),
        ("1,2 1:1", "multilabel"),
        ("1 99999999999:1", "99999999999 is larger than"),
        ("1 4294967296:1", "4294967296 is larger than"),
        ("1 2:nan", "non-finite value NaN"),
        ("1 2:inf", "non-finite value inf"),
        ("1 2:-infinity", "non-finite value -inf"),
        ("nan 1:1", "non-finite label"),
        ("1 qid:x 1:1", "qid \"x\" is not an integer"),
        ("1 1:1 qid:3", "must come right after the label"),
        ("1 1:1e308 1:1e308", "sum to a non-finite value"),
    ];
    for (line, expected) in cases {
        let (number, reason, text) =
            parse_failure(read(&format!("1 1:1\n{line}\n"), options(ZeroBased::Yes)));
        assert_eq!(number, 2, "{line}");
        assert_eq!(text, line);
        assert!(reason.contains(expected), "{line}: {reason}");
        let shown =
            read(&format!("1 1:1\n{line}\n"), options(ZeroBased::Yes)).unwrap_err().to_string();
        assert!(shown.contains("line 2") && shown.contains(line), "{shown}");
    }
    // The largest index fits.
    let (_, n) = read("1 4294967295:1\n", options(ZeroBased::Yes)).unwrap();
    assert_eq!(n, 1 << 32);
}

/// scikit-learn reads labels and values with Python's `float()` and indices with `int()`.
#[test]
fn python_number_spellings_read_as_python_reads_them() {
    let (batch, n) =
        read("+3 qid:+2 +1:1_0 0_2:2.5_0e0_1 -0:+.5\n", options(ZeroBased::Yes)).unwrap();
    assert_eq!(batch.labels, [3.0]);
    assert_eq!(batch.qids, Some(vec![2]));
    assert_eq!(rows(&batch), [vec![(0, 0.5), (1, 10.0), (2, 2.5e1)]]);
    assert_eq!(n, 3);
    // A qid written as a whole number (scikit-learn ignores its value unless asked for it).
    let (batch, _) = read("1 qid:0.0 1:1\n-1 qid:1_000 1:1\n", options(ZeroBased::Yes)).unwrap();
    assert_eq!(batch.qids, Some(vec![0, 1000]));
}

#[test]
fn long_offending_lines_are_truncated_in_errors() {
    let line = format!("1 {} x", "1:1 ".repeat(200));
    let (_, _, text) = parse_failure(read(&line, LibsvmOptions::default()));
    assert_eq!(text.chars().count(), 201);
    assert!(text.starts_with("1 1:1 1:1") && text.ends_with('…'));
}

#[test]
fn empty_input_has_no_batches() {
    let mut reader = reader_of(b"\n# nothing\n", LibsvmOptions::default());
    assert_eq!(reader.next_batch(5).unwrap(), None);
    let (batch, n) = read("", LibsvmOptions::default()).unwrap();
    assert_eq!((batch.n_rows(), batch.offsets, batch.first_line, n), (0, vec![0], 0, 0));
    let err = reader_of(b"1 1:1\n", LibsvmOptions::default()).next_batch(0).unwrap_err();
    assert!(matches!(err, PolyError::InvalidInput(_)), "{err}");
}

#[test]
fn missing_files_are_io_errors() {
    let err =
        read_all(Path::new("/nonexistent/pp/data.svm"), LibsvmOptions::default()).unwrap_err();
    assert!(matches!(err, PolyError::Io { .. }) && err.to_string().contains("data.svm"), "{err}");
}

/// A LIBSVM text with `n_rows` rows of random (unsorted, repeated, zero) entries.
fn random_text(entries: &[Vec<(u32, i8)>]) -> String {
    let mut text = String::new();
    for (row, fields) in entries.iter().enumerate() {
        text.push_str(&format!("{}", row % 3));
        for (index, value) in fields {
            text.push_str(&format!(" {index}:{}", f64::from(*value) / 4.0));
        }
        text.push('\n');
        if row % 5 == 0 {
            text.push_str("# comment\n\n");
        }
    }
    text
}

proptest! {
    #[test]
    fn rows_equal_dense_sums_and_batches_equal_the_whole(
        entries in vec(vec((1u32..30, -4i8..5), 0..12), 0..40),
        batch_size in 1usize..9,
    ) {
        let text = random_text(&entries);
        let opts = options(ZeroBased::No);
        let (whole, n) = read(&text, opts).unwrap();
        let expected: Vec<Vec<(u32, f64)>> = entries.iter().map(|fields| {
            let mut dense = [0.0f64; 30];
            for &(index, value) in fields {
                dense[index as usize - 1] += f64::from(value) / 4.0;
            }
            let nonzero = dense.iter().enumerate().filter(|(_, &v)| v != 0.0);
            nonzero.map(|(i, &v)| (i as u32, v)).collect()
        }).collect();
        prop_assert_eq!(rows(&whole), expected);
        let max = entries.iter().flatten().map(|&(index, _)| u64::from(index)).max();
        let max = max.unwrap_or(0);
        prop_assert_eq!(n, max);
        let parts = batches(&text, opts, batch_size).unwrap();
        prop_assert!(parts.iter().all(|b| b.n_rows() <= batch_size));
        prop_assert_eq!(concat(&parts), whole);
    }
}

//! Tests of the Vowpal Wabbit reader (the scan and the grams test themselves).

use super::*;
use crate::error::PolyError;
use crate::hashing::murmur3_32;
use crate::readers::lines::tests::{gzip, source};

fn reader_of(bytes: &[u8], options: VwOptions) -> VwReader {
    VwReader::from_reader("mem.vw", source(bytes.to_vec()), options).unwrap()
}

fn read(text: &str, options: VwOptions) -> PolyResult<VwBatch> {
    reader_of(text.as_bytes(), options).read_to_end()
}

fn read_default(text: &str) -> VwBatch {
    read(text, VwOptions::default()).unwrap()
}

/// Row `row` as (namespace letter, index, value) triples.
fn row(batch: &VwBatch, row: usize) -> Vec<(u8, u32, f64)> {
    let (start, end) = (batch.offsets[row] as usize, batch.offsets[row + 1] as usize);
    (start..end).map(|i| (batch.namespaces[i], batch.indices[i], batch.values[i])).collect()
}

/// Index of `feature` in the namespace called `namespace`, computed with crate::hashing.
/// Blocks are parsed in parallel pieces: the result is the line-by-line parse, and the
/// error is the first malformed line of the file, whichever piece finishes first.
#[test]
fn parallel_parsing_equals_line_by_line() {
    let mut text = String::new();
    for k in 0..(BLOCK_LINES + 3 * PIECE_LINES + 17) {
        if k % 1000 == 999 {
            text.push_str("  \n");
        } else {
            text.push_str(&format!("{} {} |a x{} y:{k} |b z{}\n", k % 2, 1 + k % 3, k % 97, k % 5));
        }
    }
    let options = VwOptions::default();
    let parallel = read(&text, options.clone()).unwrap();
    let parser = reader_of(b"", options.clone()).parser;
    let mut serial = VwBatch::new();
    for (k, line) in text.lines().enumerate() {
        parser.parse_line(k as u64 + 1, line.as_bytes(), &mut serial).unwrap();
    }
    assert_eq!(parallel, serial);
    let batches: Vec<VwBatch> = {
        let mut reader = reader_of(text.as_bytes(), options.clone());
        std::iter::from_fn(|| reader.next_batch(50_000).unwrap()).collect()
    };
    assert_eq!(batches.iter().map(VwBatch::n_rows).sum::<usize>(), serial.n_rows());
    assert_eq!(batches[1].first_line, 50_051, "50,000 rows and 50 blank lines before");
    let mut lines: Vec<&str> = text.lines().collect();
    lines[PIECE_LINES + 5] = "1 |a x:bad";
    lines[3 * PIECE_LINES + 1] = "1 |a y:worse";
    let err = read(&(lines.join("\n") + "\n"), options).unwrap_err().to_string();
    assert!(err.contains(&format!("line {}", PIECE_LINES + 6)) && err.contains("bad"), "{err}");
}

/// With one column per namespace, the tables the reader builds from many parsed pieces
/// (split on the thread pool, each column joined once) equal the table of the same rows
/// parsed line by line into one batch: whole, and batch by batch.
#[test]
fn namespace_tables_of_many_pieces_equal_the_table_of_one_batch() {
    let mut text = String::new();
    for k in 0..(BLOCK_LINES + 2 * PIECE_LINES + 9) {
        if k % 777 == 776 {
            text.push('\n');
        } else {
            text.push_str(&format!("{} 'r{k} |a x{} y:{k} |b z{} |c\n", k % 2, k % 97, k % 5));
        }
    }
    let names = vec!["a".to_owned(), "b".to_owned(), "c".to_owned()];
    let options = VwOptions { namespaces: Some(names), ..VwOptions::default() };
    let parser = reader_of(b"", options.clone()).parser;
    let lines: Vec<&str> = text.lines().collect();
    let table_of_lines = |range: std::ops::Range<usize>| {
        let mut serial = VwBatch::new();
        for k in range {
            parser.parse_line(k as u64 + 1, lines[k].as_bytes(), &mut serial).unwrap();
        }
        parser.table(vec![serial]).unwrap()
    };
    let whole: Box<dyn TableSource> = Box::new(reader_of(text.as_bytes(), options.clone()));
    assert_eq!(whole.read_rest().unwrap(), table_of_lines(0..lines.len()));
    let mut reader = reader_of(text.as_bytes(), options);
    let first = reader.next_table(30_000).unwrap().unwrap();
    // 30,000 rows are the first 30,038 lines (38 of them blank).
    assert_eq!(first, table_of_lines(0..30_038));
    let rest = std::iter::from_fn(|| reader.next_table(30_000).unwrap());
    let counts: Vec<usize> = rest.map(|table| table.n_rows()).collect();
    let total = lines.iter().filter(|line| !line.is_empty()).count();
    assert_eq!(30_000 + counts.iter().sum::<usize>(), total);
}

#[test]
fn namespace_columns_keep_the_whole_hash_relative_to_the_learners_seed() {
    let text = "1 |Animal x:2 5 |B y\n-1 |B z :3 |Apple w\n0 | d\n";
    let names = vec!["A".to_owned(), "B".to_owned(), "default".to_owned()];
    let options = VwOptions { namespaces: Some(names.clone()), ..VwOptions::default() };
    let reader = reader_of(text.as_bytes(), options.clone());
    let parser = reader.parser.clone();
    let table = parser.table(vec![reader.read_to_end().unwrap()]).unwrap();
    let schema: Vec<String> = table.columns.iter().map(|(name, _)| name.clone()).collect();
    assert_eq!(schema, ["label", "weight", "base", "tag", "A", "B", "default"]);
    assert_eq!(VwReader::schema(&options).len(), 7);
    // What a learner adds back: the seed of the column's name.
    let learner_hash =
        |column: &str, index: u32| index.wrapping_add(hash_feature_name(column.as_bytes(), 0));
    let vw_hash = |namespace: &str, feature: &str| {
        hash_feature_name(feature.as_bytes(), hash_feature_name(namespace.as_bytes(), 0))
    };
    let column = |name: &str| match &table.columns.iter().find(|(n, _)| n == name).unwrap().1 {
        ColumnData::Sparse(matrix) => matrix.clone(),
        other => panic!("{other:?}"),
    };
    let a = column("A");
    assert_eq!(a.offsets, [0, 2, 3, 3]);
    assert_eq!(learner_hash("A", a.indices[0]), vw_hash("Animal", "x"));
    assert_eq!(learner_hash("A", a.indices[1]), vw_hash("Animal", "5"));
    assert_eq!(learner_hash("A", a.indices[2]), vw_hash("Apple", "w"));
    assert_eq!(a.values, [2.0, 1.0, 1.0]);
    let b = column("B");
    assert_eq!(b.offsets, [0, 1, 3, 3]);
    // A numbered feature of a namespace named by its letter is its number; the anonymous
    // feature `:3` is the namespace hash + 0.
    assert_eq!(learner_hash("B", b.indices[2]), hash_feature_name(b"B", 0));
    assert_eq!(column("default").offsets, [0, 0, 0, 1]);
    assert_eq!(learner_hash("default", column("default").indices[0]), vw_hash("", "d"));
    let numbered = reader_of(
        b"1 |A 5\n",
        VwOptions { namespaces: Some(vec!["A".into()]), ..VwOptions::default() },
    );
    let parser = numbered.parser.clone();
    let table = parser.table(vec![numbered.read_to_end().unwrap()]).unwrap();
    assert!(matches!(&table.columns[4].1, ColumnData::Sparse(m) if m.indices == [5]));
}

#[test]
fn namespace_columns_reject_unlisted_namespaces_and_bad_names() {
    let options = VwOptions { namespaces: Some(vec!["A".into()]), ..VwOptions::default() };
    let err = read("1 |A x\n1 |A y |Bee z\n", options).unwrap_err().to_string();
    assert!(err.contains("line 2") && err.contains("\"Bee\" is not among"), "{err}");
    for (names, message) in [
        (vec![], "empty"),
        (vec!["AB".to_owned()], "not one letter"),
        (vec!["A".to_owned(), "A".to_owned()], "listed twice"),
        (vec![" ".to_owned()], "named \"default\""),
    ] {
        let options = VwOptions { namespaces: Some(names), ..VwOptions::default() };
        let err = VwReader::from_reader("mem.vw", source(Vec::new()), options);
        let err = err.err().unwrap().to_string();
        assert!(err.contains(message), "{err}");
    }
}

fn index(namespace: &str, feature: &str, options: &VwOptions) -> u32 {
    let namespace_hash = hash_feature_name(namespace.as_bytes(), options.seed);
    mask(hash_feature_name(feature.as_bytes(), namespace_hash), options.bits) as u32
}

fn parse_failure(result: PolyResult<VwBatch>) -> (u64, String, String) {
    match result {
        Err(PolyError::Parse { path, line, reason, text }) => {
            assert_eq!(path, "mem.vw");
            (line, reason, text)
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
}

#[test]
fn header_variants() {
    let text = "1 |a x\n-1 2.5 |a x\n0 0.5 0.25 |a x\n1 'first |a x\n1 2 second|a x\n\
                |a x\n'only_tag |a x\nlonely_tag|a x\n3\n1 0 'zero_weight\n";
    let batch = read_default(text);
    assert_eq!(
        batch.labels,
        vec![
            Some(1.0),
            Some(-1.0),
            Some(0.0),
            Some(1.0),
            Some(1.0),
            None,
            None,
            None,
            None,
            Some(1.0)
        ]
    );
    assert_eq!(batch.importance, vec![1.0, 2.5, 0.5, 1.0, 2.0, 1.0, 1.0, 1.0, 1.0, 0.0]);
    assert_eq!(batch.base, vec![0.0, 0.0, 0.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    let tags: Vec<Option<&str>> = batch.tags.iter().map(Option::as_deref).collect();
    assert_eq!(
        tags,
        vec![
            None,
            None,
            None,
            Some("first"),
            Some("second"),
            None,
            Some("only_tag"),
            Some("lonely_tag"),
            Some("3"),
            Some("zero_weight")
        ]
    );
    // As in Vowpal Wabbit, a last field that touches the '|' (or ends a line without one) is
    // the tag, a number too: `3` alone is an unlabeled example tagged "3", `1 2|a x` has the
    // tag "2" and weight 1, `1 2 |a x` the weight 2.
    let touching = read_default("1 2|a x\n1 2 |a x\n");
    assert_eq!(touching.tags, vec![Some("2".to_string()), None]);
    assert_eq!(touching.importance, vec![1.0, 2.0]);
    // Lines without '|' are examples without features.
    assert_eq!(batch.offsets[8..], [8, 8, 8]);
    // A quoted tag may look like a number or contain ':'.
    let batch = read_default("1 '2.5 |a x\n'id:7|a x\n");
    assert_eq!(batch.tags, vec![Some("2.5".to_string()), Some("id:7".to_string())]);
    assert_eq!(batch.importance, vec![1.0, 1.0]);
}

#[test]
fn namespaces_scales_and_values() {
    let options = VwOptions::default();
    let batch = read_default("1 |a x:2 y |b:0.5 z:4 123 |c:2 w:0 v:-1.5e0\n");
    assert_eq!(
        row(&batch, 0),
        vec![
            (b'a', index("a", "x", &options), 2.0),
            (b'a', index("a", "y", &options), 1.0),
            (b'b', index("b", "z", &options), 2.0),
            (b'b', index("b", "123", &options), 0.5),
            (b'c', index("c", "v", &options), -3.0),
        ]
    );
    // Long namespace names: the letter is the first byte, the hash uses the whole name.
    let batch = read_default("1 |apple x |avocado x\n");
    let entries = row(&batch, 0);
    assert_eq!(entries[0], (b'a', index("apple", "x", &options), 1.0));
    assert_eq!(entries[1], (b'a', index("avocado", "x", &options), 1.0));
    assert_ne!(entries[0].1, entries[1].1);
    // A zero scale drops the whole namespace.
    assert_eq!(row(&read_default("1 |a:0 x y |b z\n"), 0).len(), 1);
}

#[test]
fn default_namespace_and_bare_features() {
    let options = VwOptions::default();
    let batch = read_default("1 | a b:3\n2 |\tc\n3 |\n4|   \n");
    assert_eq!(
        row(&batch, 0),
        vec![(b' ', index("", "a", &options), 1.0), (b' ', index("", "b", &options), 3.0)]
    );
    assert_eq!(row(&batch, 1), vec![(b' ', index("", "c", &options), 1.0)]);
    assert_eq!(batch.offsets[2..], [3, 3, 3]);
}

#[test]
fn hashing_matches_the_hashing_module_and_vowpal_wabbit() {
    // Digit names hash to their value plus the namespace hash; the default namespace hash
    // is 0 with seed 0, so feature "123" lands on index 123.
    let batch = read_default("1 | 123 7:2\n");
    assert_eq!(row(&batch, 0), vec![(b' ', 123, 1.0), (b' ', 7, 2.0)]);
    // Named namespace: murmur3 of the names, the namespace hash seeding the feature hash.
    let options = VwOptions { bits: 32, seed: 0, namespaces: None, ..VwOptions::default() };
    let batch = read("1 |user alice\n", options).unwrap();
    assert_eq!(batch.indices, vec![murmur3_32(b"alice", murmur3_32(b"user", 0))]);
    // With a seed, the default namespace hash is murmur3("", seed) (Vowpal Wabbit's rule).
    let options = VwOptions { bits: 32, seed: 42, namespaces: None, ..VwOptions::default() };
    let batch = read("1 | 5 x |n y\n", options).unwrap();
    let default_hash = murmur3_32(b"", 42);
    assert_eq!(
        batch.indices,
        vec![
            5u32.wrapping_add(default_hash),
            murmur3_32(b"x", default_hash),
            murmur3_32(b"y", hash_feature_name(b"n", 42)),
        ]
    );
    // Masking keeps the low bits.
    let narrow = VwOptions { bits: 4, seed: 0, namespaces: None, ..VwOptions::default() };
    assert_eq!(read("1 | 123\n", narrow).unwrap().indices, vec![123 & 0xf]);
}

#[test]
fn anonymous_features_are_numbered_per_namespace() {
    let options = VwOptions { bits: 32, seed: 0, namespaces: None, ..VwOptions::default() };
    let batch = read("1 |n :2 x :0 :3 |m :1\n", options).unwrap();
    let n = hash_feature_name(b"n", 0);
    let m = hash_feature_name(b"m", 0);
    assert_eq!(batch.indices, vec![n, murmur3_32(b"x", n), n + 2, m]);
    assert_eq!(batch.values, vec![2.0, 1.0, 3.0, 1.0]);
}

#[test]
fn rows_keep_file_order_duplicates_and_namespaces_apart() {
    let options = VwOptions::default();
    let batch = read_default("1 |b z y z |a z\n");
    let z_b = index("b", "z", &options);
    assert_eq!(
        row(&batch, 0),
        vec![
            (b'b', z_b, 1.0),
            (b'b', index("b", "y", &options), 1.0),
            (b'b', z_b, 1.0),
            (b'a', index("a", "z", &options), 1.0),
        ]
    );
    // With one bit everything collides; nothing is merged.
    let batch = read(
        "1 |a p q r s\n",
        VwOptions { bits: 1, seed: 0, namespaces: None, ..VwOptions::default() },
    )
    .unwrap();
    assert_eq!(batch.indices.len(), 4);
    assert!(batch.indices.iter().all(|&i| i <= 1));
}

#[test]
fn blank_lines_tabs_crlf_and_gzip() {
    let text = "\n  \t\r\n1\t|a\tx:2\r\n\n-1 'tag |b y\n";
    let plain = read_default(text);
    assert_eq!(plain.labels, vec![Some(1.0), Some(-1.0)]);
    assert_eq!(plain.first_line, 3);
    assert_eq!(row(&plain, 0), vec![(b'a', index("a", "x", &VwOptions::default()), 2.0)]);
    let packed = reader_of(&gzip(text.as_bytes()), VwOptions::default()).read_to_end().unwrap();
    assert_eq!(packed, plain);
}

#[test]
fn bits_are_checked() {
    for bits in [0, 33] {
        let options = VwOptions { bits, seed: 0, namespaces: None, ..VwOptions::default() };
        let err =
            VwReader::from_reader("mem.vw", source(Vec::new()), options.clone()).err().unwrap();
        assert!(matches!(&err, PolyError::InvalidInput(m) if m.contains("bits")), "{err}");
        assert!(read_all(Path::new("/nonexistent.vw"), options).is_err());
    }
    assert!(read(
        "1 | a\n",
        VwOptions { bits: 32, seed: 0, namespaces: None, ..VwOptions::default() }
    )
    .is_ok());
    assert!(read(
        "1 | a\n",
        VwOptions { bits: 1, seed: 0, namespaces: None, ..VwOptions::default() }
    )
    .is_ok());
    let err = read_all(Path::new("/nonexistent/pp/data.vw"), VwOptions::default()).unwrap_err();
    assert!(matches!(err, PolyError::Io { .. }), "{err}");
}

#[test]
fn malformed_lines_name_the_line_and_the_reason() {
    let cases = [
        ("1 |a x:abc", "feature value \"abc\" is not a number"),
        ("1 |a x:", "feature value \"\" is not a number"),
        ("1 |a x:1:2", "feature value \"1:2\" is not a number"),
        ("1 |a x:nan", "non-finite value NaN"),
        ("1 |a x:inf", "non-finite value inf"),
        ("1 |a:1e300 x:1e300", "is not finite"),
        ("1 |a:z x", "namespace scale \"z\" is not a finite number"),
        ("1 |a:nan x", "namespace scale \"nan\""),
        ("1 |:2 x", "has no namespace name"),
        ("1 -2 |a x", "importance weight -2 must be finite and >= 0"),
        ("1 nan |a x", "importance weight NaN"),
        ("inf |a x", "non-finite label"),
        ("1 2 inf |a x", "non-finite base"),
        ("1 2 3 4 |a x", "more than three numbers"),
        ("1 'tag 2 |a x", "must be the last field"),
        ("word 2 |a x", "\"word\" before the first '|' is not a number"),
        ("a:0.5 |a x", "not a simple label"),
        ("1 :3 |a x", "not a simple label"),
    ];
    for (line, expected) in cases {
        let (number, reason, text) =
            parse_failure(read(&format!("1 |a x\n{line}\n"), VwOptions::default()));
        assert_eq!((number, text.as_str()), (2, line));
        assert!(reason.contains(expected), "{line}: {reason}");
    }
    let mut bad_tag = b"1 |a x\n1 '".to_vec();
    bad_tag.extend(b"\xff |a x\n");
    let (number, reason, _) =
        parse_failure(reader_of(&bad_tag, VwOptions::default()).read_to_end());
    assert_eq!(number, 2);
    assert!(reason.contains("not valid UTF-8"), "{reason}");
}

#[test]
fn header_fields_with_more_after_their_number_are_read_as_vw_reads_them_and_counted() {
    // Vowpal Wabbit's simple label reads a field up to its first ':' (`1:1` is label 1).
    let text = "1 |a x\n2:0 |a y\n1:1 0.5:7 |a z\n-1 |a w\n";
    let batch = read(text, VwOptions::default()).unwrap();
    assert_eq!(batch.labels, [Some(1.0), Some(2.0), Some(1.0), Some(-1.0)]);
    assert_eq!(batch.importance, [1.0, 1.0, 0.5, 1.0]);
    assert_eq!(batch.partly_read.lines, 2);
    assert_eq!(batch.partly_read.first, Some((2, "2:0".to_owned())));
    let warning = batch.partly_read.warning().unwrap();
    assert!(warning.starts_with("line 2 (and 1 other line so far): header field \"2:0\" read as 2"));
    // The same counts whatever the pieces, and in the table a binding turns into a frame.
    let lines: String = (0..10_000).map(|i| format!("{}:1 |a x{i}\n", i % 2)).collect();
    let mut reader = reader_of(lines.as_bytes(), VwOptions::default());
    let table = TableSource::next_table(&mut reader, 20_000).unwrap().unwrap();
    assert_eq!(table.notes.len(), 1);
    assert!(
        table.notes[0].starts_with("line 1 (and 9999 other lines so far): header field \"0:1\"")
    );
    assert!(read("1 |a x\n", VwOptions::default()).unwrap().partly_read.warning().is_none());
}

#[test]
fn batches_equal_the_whole_file() {
    let mut text = String::new();
    for i in 0..100 {
        match i % 4 {
            0 => text.push_str(&format!("{} 'r{i} |a f{i} g:{i} |b:2 h{}\n", i % 2, i % 7)),
            1 => text.push_str(&format!("{i} 0.5 |  x{i} y\n\n")),
            2 => text.push_str(&format!("|c z{i}:0.{i}\n")),
            _ => text.push_str("-1\n"),
        }
    }
    let whole = read_default(&text);
    assert_eq!(whole.n_rows(), 100);
    for size in [1, 3, 7, 100, 1000] {
        let mut reader = reader_of(text.as_bytes(), VwOptions::default());
        let mut rows = 0;
        let mut first_lines = Vec::new();
        let mut joined = VwBatch::new();
        while let Some(batch) = reader.next_batch(size).unwrap() {
            assert!(batch.n_rows() <= size);
            rows += batch.n_rows();
            first_lines.push(batch.first_line);
            let base = joined.indices.len() as i64;
            joined.labels.extend(batch.labels);
            joined.importance.extend(batch.importance);
            joined.base.extend(batch.base);
            joined.tags.extend(batch.tags);
            joined.offsets.extend(batch.offsets[1..].iter().map(|o| o + base));
            joined.indices.extend(batch.indices);
            joined.values.extend(batch.values);
            joined.namespaces.extend(batch.namespaces);
        }
        joined.first_line = first_lines[0];
        assert_eq!(rows, 100);
        assert_eq!(joined, whole, "batch size {size}");
    }
    let err = reader_of(b"1 | a\n", VwOptions::default()).next_batch(0).unwrap_err();
    assert!(matches!(err, PolyError::InvalidInput(_)), "{err}");
    assert_eq!(reader_of(b"\n \n", VwOptions::default()).next_batch(4).unwrap(), None);
    let empty = read_default("");
    assert_eq!((empty.n_rows(), empty.offsets, empty.first_line), (0, vec![0], 0));
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn letters(batch: &VwBatch) -> Vec<u8> {
    batch.namespaces.clone()
}

#[test]
fn ignore_and_keep_remove_namespaces_before_anything_else() {
    let text = "1 |a x |b y | z |c w |b v\n";
    let ignore = VwOptions { ignore: names(&["b", "default"]), ..VwOptions::default() };
    assert_eq!(letters(&read(text, ignore).unwrap()), b"ac");
    let keep = VwOptions { keep: Some(names(&["b", "default"])), ..VwOptions::default() };
    let batch = read(text, keep).unwrap();
    assert_eq!(letters(&batch), b"b b");
    assert_eq!(batch.indices[1], index("", "z", &VwOptions::default()));
    // With namespace columns, a removed namespace is no error even when not listed.
    let options = VwOptions {
        namespaces: Some(names(&["a", "c"])),
        ignore: names(&["b", "default"]),
        ..VwOptions::default()
    };
    assert_eq!(read(text, options).unwrap().indices.len(), 2);
    // A malformed feature of an ignored namespace is still an error.
    let ignore = VwOptions { ignore: names(&["b"]), ..VwOptions::default() };
    assert!(read("1 |b x:oops\n", ignore).is_err());
    for (options, message) in [
        (
            VwOptions { ignore: names(&["a"]), keep: Some(names(&["b"])), ..VwOptions::default() },
            "cannot be given together",
        ),
        (VwOptions { keep: Some(Vec::new()), ..VwOptions::default() }, "keep is empty"),
        (VwOptions { ignore: names(&["ab"]), ..VwOptions::default() }, "ignore: namespace \"ab\""),
        (VwOptions { keep: Some(names(&["a", "a"])), ..VwOptions::default() }, "listed twice"),
        (
            VwOptions {
                namespaces: Some(names(&["a", "b"])),
                ignore: names(&["b"]),
                ..VwOptions::default()
            },
            "\"b\" is listed in namespaces but removed by ignore",
        ),
        (
            VwOptions {
                namespaces: Some(names(&["a", "b"])),
                keep: Some(names(&["a"])),
                ..VwOptions::default()
            },
            "removed by keep",
        ),
    ] {
        let err = VwReader::from_reader("mem.vw", source(Vec::new()), options).err().unwrap();
        assert!(err.to_string().contains(message), "{err}");
    }
}

#[test]
fn other_namespaces_drop_and_listed_namespaces_absent_from_the_file() {
    let text = "1 |A x |Bee y\n-1 |C z\n";
    let options = VwOptions {
        namespaces: Some(names(&["A", "Z", "default"])),
        other_namespaces: OtherNamespaces::Drop,
        ..VwOptions::default()
    };
    let reader = reader_of(text.as_bytes(), options);
    let parser = reader.parser.clone();
    let table = parser.table(vec![reader.read_to_end().unwrap()]).unwrap();
    let column = |name: &str| match table.column(name).unwrap() {
        ColumnData::Sparse(matrix) => matrix.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(column("A").offsets, [0, 1, 1]);
    // Listed but never in the file: an empty column.
    assert_eq!(column("Z").offsets, [0, 0, 0]);
    assert_eq!(column("default").offsets, [0, 0, 0]);
    let err = read(text, VwOptions { namespaces: Some(names(&["A"])), ..VwOptions::default() });
    let err = err.unwrap_err().to_string();
    assert!(err.contains("line 1") && err.contains("other_namespaces=\"drop\""), "{err}");
}

#[test]
fn hash_all_hashes_digit_names_as_strings() {
    let text = "1 |a 123 x :2 |5 9\n";
    let strings = VwOptions { bits: 32, ..VwOptions::default() };
    let a = hash_feature_name(b"a", 0);
    assert_eq!(read(text, strings).unwrap().indices, [a + 123, murmur3_32(b"x", a), a, 5 + 9]);
    let all = VwOptions { bits: 32, hash: HashMode::All, ..VwOptions::default() };
    let five = murmur3_32(b"5", 0);
    assert_eq!(
        read(text, all).unwrap().indices,
        [murmur3_32(b"123", a), murmur3_32(b"x", a), a, murmur3_32(b"9", five)]
    );
    // No trimming either: a name ending in a control byte keeps it.
    let all = VwOptions { bits: 32, hash: HashMode::All, ..VwOptions::default() };
    assert_eq!(read("1 |a w\x01\n", all).unwrap().indices, [murmur3_32(b"w\x01", a)]);
}

#[test]
fn a_nul_byte_after_a_number_ends_the_line_as_in_vowpal_wabbit() {
    // What `vw --audit` shows for these lines (tests/test_readers.py compares with it).
    let options = VwOptions { bits: 32, ..VwOptions::default() };
    let text = b"1 |a x:0.7\0 y |b z\n-1 |a w\0 q\n1 |a k:1\0|b m\n1 |a:2\0 x |b y\n1 |a p\0:2 r\n";
    let batch = reader_of(text, options.clone()).read_to_end().unwrap();
    let a = hash_feature_name(b"a", 0);
    let hash = |name: &[u8]| murmur3_32(name, a);
    assert_eq!(batch.offsets, [0, 1, 3, 4, 4, 6]);
    assert_eq!(
        batch.indices,
        [hash(b"x"), hash(b"w"), hash(b"q"), hash(b"k"), hash(b"p"), hash(b"r")]
    );
    assert_eq!(batch.values, [0.7, 1.0, 1.0, 1.0, 2.0, 1.0]);
    // A NUL with no number before it is still an error.
    let (line, reason, _) = parse_failure(reader_of(b"1 |a x:\0\n", options).read_to_end());
    assert_eq!(line, 1);
    assert!(reason.contains("is not a number"), "{reason}");
}

#[test]
fn ngrams_are_appended_per_letter_from_whole_hashes() {
    let fold = |hashes: &[u32]| {
        hashes[1..].iter().fold(hashes[0], |h, &t| h.wrapping_mul(27_942_141).wrapping_add(t))
    };
    let text = "1 |a p q:3 |b r s |apple s :2 z:0 |a t\n";
    let options = VwOptions { bits: 32, ngram: names(&["a2", "b3"]), ..VwOptions::default() };
    let batch = read(text, options).unwrap();
    let (a, b, apple) =
        (hash_feature_name(b"a", 0), hash_feature_name(b"b", 0), hash_feature_name(b"apple", 0));
    let (p, q, t) = (murmur3_32(b"p", a), murmur3_32(b"q", a), murmur3_32(b"t", a));
    let (r, s) = (murmur3_32(b"r", b), murmur3_32(b"s", b));
    let (s_apple, anonymous) = (murmur3_32(b"s", apple), apple);
    // The features in file order, then letter a's grams (its features: p q s_apple anonymous t,
    // zero values left out), then b's (b asked for 3-grams, but has only two features).
    let unigrams = [p, q, r, s, s_apple, anonymous, t];
    let a_tokens = [p, q, s_apple, anonymous, t];
    let mut expected = unigrams.to_vec();
    expected.extend(a_tokens.windows(2).map(fold));
    expected.push(fold(&[r, s]));
    assert_eq!(batch.indices, expected);
    assert_eq!(letters(&batch), b"aabbaaaaaaab");
    assert_eq!(batch.values[..7], [1.0, 3.0, 1.0, 1.0, 1.0, 2.0, 1.0]);
    assert!(batch.values[7..].iter().all(|&v| v == 1.0));
    // Masked after the grams are made: each index is the whole hash's low bits.
    let narrow = VwOptions { bits: 18, ngram: names(&["a2", "b3"]), ..VwOptions::default() };
    let masked: Vec<u32> = expected.iter().map(|&h| mask(h, 18) as u32).collect();
    assert_eq!(read(text, narrow).unwrap().indices, masked);
    // Namespace columns: the same grams in the letter's column, after its features.
    let columns = VwOptions {
        namespaces: Some(names(&["a", "b"])),
        ngram: names(&["2"]),
        skips: names(&["1"]),
        ..VwOptions::default()
    };
    let reader = reader_of(b"1 |a p q t\n", columns);
    let parser = reader.parser.clone();
    let table = parser.table(vec![reader.read_to_end().unwrap()]).unwrap();
    let ColumnData::Sparse(column) = table.column("a").unwrap() else { panic!() };
    let seed = hash_feature_name(b"a", 0);
    let whole: Vec<u32> = column.indices.iter().map(|i| i.wrapping_add(seed)).collect();
    assert_eq!(whole, [p, q, t, fold(&[p, q]), fold(&[q, t]), fold(&[p, t])]);
}

#[test]
fn gram_options_are_checked() {
    for (ngram, skips, message) in [
        (names(&[]), names(&["1"]), "skips need ngram"),
        (names(&["a"]), names(&[]), "ngram: \"a\" is not"),
        (names(&["2"]), names(&["x"]), "skips: \"x\" is not"),
        (names(&["99"]), names(&[]), "more than 64"),
    ] {
        let options = VwOptions { ngram, skips, ..VwOptions::default() };
        let err = VwReader::from_reader("mem.vw", source(Vec::new()), options).err().unwrap();
        assert!(err.to_string().contains(message), "{err}");
    }
}

#[test]
fn feature_tokens_split_at_runs_of_spaces_and_tabs_and_find_the_first_colon() {
    let found: Vec<(&[u8], Option<usize>)> =
        parse::FeatureTokens::new(b"  a:1 \t b\t:2  c:d:3 e ").collect();
    let expected: Vec<(&[u8], Option<usize>)> =
        vec![(b"a:1", Some(1)), (b"b", None), (b":2", Some(0)), (b"c:d:3", Some(1)), (b"e", None)];
    assert_eq!(found, expected);
    assert_eq!(parse::FeatureTokens::new(b" \t ").count(), 0);
    assert_eq!(parse::FeatureTokens::new(b"").count(), 0);
}

//! The namespaces of a whole Vowpal Wabbit file, found without parsing it.
//!
//! Every `|` of a line starts a namespace (the header before the first `|` cannot hold one), and
//! the byte right after it is the namespace's letter (a space, a tab, another `|` or the end of
//! the line: the default namespace). So the scan only looks for `|` bytes: no feature is hashed
//! and no number parsed. A namespace is listed even when it holds no feature (`|z` alone, or
//! only zero values): its column is then empty.

use std::path::Path;

use super::super::lines::LineReader;
use super::super::{parse_error, show};
use super::{parse_header, Compiled, OtherNamespaces, VwOptions, DEFAULT_NAMESPACE_COLUMN};
use crate::error::PolyResult;

/// Lines between two checks for Ctrl-C.
const CHECK_LINES: u64 = 1 << 16;

/// The column names (`"default"` for the default namespace) of the namespaces of the plain or
/// gzip file at `path`, in order of first appearance, leaving out those `options` removes
/// (`ignore`, `keep`). A namespace whose letter is not ASCII has no column name: an error naming
/// its line, or left out with `other_namespaces: drop`.
pub fn scan_namespaces(path: &Path, options: &VwOptions) -> PolyResult<Vec<String>> {
    Ok(scan_lines(LineReader::open(path)?, options)?.namespaces)
}

/// Distinct labels a scan lists at most (more is a regression's or a multiclass file's).
pub const SCAN_LABELS: usize = 64;

/// What a command must know of a whole file before it makes a model for it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VwScan {
    /// As [`scan_namespaces`] gives them.
    pub namespaces: Vec<String>,
    /// The distinct labels, in order of first appearance, at most [`SCAN_LABELS`].
    pub labels: Vec<f64>,
    /// Whether there were more distinct labels than those listed.
    pub more_labels: bool,
}

/// The namespaces and the labels of the plain or gzip file at `path` (a line whose header the
/// reader would refuse is left to the reader's error).
pub fn scan_file(path: &Path, options: &VwOptions) -> PolyResult<VwScan> {
    scan_lines(LineReader::open(path)?, options)
}

pub(super) fn scan_lines(mut lines: LineReader, options: &VwOptions) -> PolyResult<VwScan> {
    let scan_options = VwOptions { namespaces: None, ..options.clone() };
    let dropped = Compiled::new(&scan_options)?.dropped;
    let path = lines.name().to_owned();
    let mut seen = [false; 256];
    let mut names = Vec::new();
    let (mut labels, mut more_labels) = (Vec::new(), false);
    // The last label's text: most lines repeat one of two, so few are parsed.
    let mut last_label: Vec<u8> = Vec::new();
    while let Some(line) = lines.next_line()? {
        if line.number % CHECK_LINES == 0 {
            crate::interrupt::check()?;
        }
        if !more_labels {
            let header = &line.text[..memchr::memchr(b'|', line.text).unwrap_or(line.text.len())];
            let first = header.split(|&b| b == b' ' || b == b'\t').find(|f| !f.is_empty());
            if first.is_some_and(|first| first != last_label.as_slice()) {
                if let Some(label) = parse_header(header).ok().and_then(|h| h.label) {
                    if !labels.contains(&label) {
                        if labels.len() == SCAN_LABELS {
                            more_labels = true;
                        } else {
                            labels.push(label);
                        }
                    }
                    last_label.clear();
                    last_label.extend_from_slice(first.unwrap_or_default());
                }
            }
        }
        for bar in memchr::memchr_iter(b'|', line.text) {
            let rest = &line.text[bar + 1..];
            let letter = match rest.first() {
                None | Some(b' ' | b'\t' | b'|') => b' ',
                // No name before the scale: the reader reports the line.
                Some(b':') => continue,
                Some(&letter) => letter,
            };
            if std::mem::replace(&mut seen[usize::from(letter)], true)
                || dropped[usize::from(letter)]
            {
                continue;
            }
            if letter.is_ascii() {
                names.push(if letter == b' ' {
                    DEFAULT_NAMESPACE_COLUMN.to_owned()
                } else {
                    char::from(letter).to_string()
                });
            } else if options.other_namespaces == OtherNamespaces::Error {
                let name_end = rest.iter().position(|&b| b == b' ' || b == b'\t' || b == b'|');
                let name = &rest[..name_end.unwrap_or(rest.len())];
                return Err(parse_error(
                    &path,
                    line.number,
                    line.text,
                    format!(
                        "namespace {:?} begins with the byte {letter:#04x}, which is not ASCII: \
                         namespace columns are named by ASCII letters (other_namespaces=\"drop\" \
                         leaves such namespaces out)",
                        show(name)
                    ),
                ));
            }
        }
    }
    Ok(VwScan { namespaces: names, labels, more_labels })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::PolyError;
    use crate::readers::lines::tests::{gzip, source};

    fn scan(bytes: &[u8], options: &VwOptions) -> PolyResult<Vec<String>> {
        Ok(scan_all(bytes, options)?.namespaces)
    }

    fn scan_all(bytes: &[u8], options: &VwOptions) -> PolyResult<VwScan> {
        scan_lines(LineReader::from_reader("mem.vw", source(bytes.to_vec())).unwrap(), options)
    }

    #[test]
    fn the_labels_of_the_file_in_order_of_first_appearance() {
        let text = b"1 |a x\n-1 2 'r|a y\n1 |a z\n\n0.5|a w\n 'tag |a v\n-1 |a u\n";
        let scan = scan_all(text, &VwOptions::default()).unwrap();
        // "0.5" touching the bar is a tag: that line has no label.
        assert_eq!(scan.labels, vec![1.0, -1.0]);
        assert!(!scan.more_labels);
        let many: String = (0..100).map(|k| format!("{k} |a x\n")).collect();
        let scan = scan_all(many.as_bytes(), &VwOptions::default()).unwrap();
        assert_eq!(scan.labels, (0..SCAN_LABELS).map(|k| k as f64).collect::<Vec<_>>());
        assert!(scan.more_labels);
        // Repeated label text is not parsed again, whatever comes between.
        let scan = scan_all(b"2 |a x\n2.0 |a x\n3 |a y\n2 |a\n", &VwOptions::default()).unwrap();
        assert_eq!(scan.labels, vec![2.0, 3.0]);
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn every_namespace_of_the_file_in_order_of_first_appearance() {
        let mut text = String::new();
        for k in 0..200_000 {
            text.push_str(&format!("{} |b x{k} |a y\n", k % 2));
        }
        text.push_str("1 'tag|z w | d |\t e ||q:2 r|c\n");
        let all = names(&["b", "a", "z", "default", "q", "c"]);
        assert_eq!(scan(text.as_bytes(), &VwOptions::default()).unwrap(), all);
        assert_eq!(scan(&gzip(text.as_bytes()), &VwOptions::default()).unwrap(), all);
        // A bare `|` at the end of a line is the default namespace; an empty file has none.
        assert_eq!(scan(b"1 |a x |\n", &VwOptions::default()).unwrap(), names(&["a", "default"]));
        assert!(scan(b"1\n\n-1 'tag\n", &VwOptions::default()).unwrap().is_empty());
        // `|:2` has no name: left to the reader's error.
        assert_eq!(scan(b"1 |:2 x |a y\n", &VwOptions::default()).unwrap(), names(&["a"]));
    }

    #[test]
    fn ignore_and_keep_leave_namespaces_out() {
        let text = b"1 |a x |b y | z |c w\n";
        let ignore = VwOptions { ignore: names(&["b", "default"]), ..VwOptions::default() };
        assert_eq!(scan(text, &ignore).unwrap(), names(&["a", "c"]));
        let keep = VwOptions { keep: Some(names(&["c", "a"])), ..VwOptions::default() };
        assert_eq!(scan(text, &keep).unwrap(), names(&["a", "c"]));
    }

    #[test]
    fn a_namespace_without_an_ascii_letter_is_an_error_or_left_out() {
        let text = "1 |a x\n1 |élan y |b z\n".as_bytes();
        match scan(text, &VwOptions::default()) {
            Err(PolyError::Parse { line, reason, .. }) => {
                assert_eq!(line, 2);
                assert!(reason.contains("\"élan\"") && reason.contains("0xc3"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        let drop = VwOptions { other_namespaces: OtherNamespaces::Drop, ..VwOptions::default() };
        assert_eq!(scan(text, &drop).unwrap(), names(&["a", "b"]));
    }
}

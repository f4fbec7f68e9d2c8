//! The namespaces of a whole Vowpal Wabbit file, found without parsing it.
//!
//! Every `|` of a line starts a namespace (the header before the first `|` cannot hold one), and
//! the byte right after it is the namespace's letter (a space, a tab, another `|` or the end of
//! the line: the default namespace). So the scan only looks for `|` bytes: no feature is hashed
//! and no number parsed. A namespace is listed even when it holds no feature (`|z` alone, or
//! only zero values): its column is then empty.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use rayon::prelude::*;

use super::super::lines::{LineReader, BUFFER_SIZE};
use super::super::{parse_error, show};
use super::{parse_header, Compiled, OtherNamespaces, VwOptions, DEFAULT_NAMESPACE_COLUMN};
use crate::error::{PolyError, PolyResult};

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
/// reader would refuse is left to the reader's error). A large plain file is scanned in parallel
/// byte ranges, one per thread of the pool.
pub fn scan_file(path: &Path, options: &VwOptions) -> PolyResult<VwScan> {
    if let Some(scan) = scan_in_parallel(path, options)? {
        return Ok(scan);
    }
    scan_lines(LineReader::open(path)?, options)
}

pub(super) fn scan_lines(mut lines: LineReader, options: &VwOptions) -> PolyResult<VwScan> {
    let mut scanner = Scanner::new(options)?;
    let path = lines.name().to_owned();
    while let Some(line) = lines.next_line()? {
        if line.number % CHECK_LINES == 0 {
            crate::interrupt::check()?;
        }
        scanner
            .line(line.text)
            .map_err(|reason| parse_error(&path, line.number, line.text, reason))?;
    }
    Ok(scanner.scan)
}

/// Files smaller than this are scanned in one piece (a thread's start costs more).
const PARALLEL_BYTES: u64 = 16 << 20;

/// [`scan_file`] of a plain file of [`PARALLEL_BYTES`] or more in byte ranges, one per thread,
/// each owning the lines that start in it; `None` for a gzip or small file, or where a range
/// met a line to refuse (the scan in order then names its line number).
fn scan_in_parallel(path: &Path, options: &VwOptions) -> PolyResult<Option<VwScan>> {
    let name = path.display().to_string();
    let opened = |what: &str| File::open(path).map_err(|error| PolyError::io(&name, what, &error));
    let mut file = opened("cannot open")?;
    let size = file.metadata().map_err(|error| PolyError::io(&name, "cannot read", &error))?.len();
    let mut magic = [0u8; 2];
    let threads = rayon::current_num_threads() as u64;
    if size < PARALLEL_BYTES
        || threads < 2
        || file.read_exact(&mut magic).is_err()
        || magic == [0x1f, 0x8b]
    {
        return Ok(None);
    }
    let bounds: Vec<u64> = (0..=threads).map(|k| size * k / threads).collect();
    let ranges: Vec<Result<VwScan, ()>> = bounds
        .windows(2)
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|range| -> PolyResult<Result<VwScan, ()>> {
            let (start, end) = (range[0], range[1]);
            let mut input = BufReader::with_capacity(BUFFER_SIZE, opened("cannot open")?);
            let failed = |error: std::io::Error| PolyError::io(&name, "cannot read", &error);
            let mut position = start.saturating_sub(1);
            input.seek(SeekFrom::Start(position)).map_err(failed)?;
            let mut line = Vec::new();
            if start > 0 {
                // The line that began before the range is the previous range's.
                position += input.read_until(b'\n', &mut line).map_err(failed)? as u64;
            }
            let mut scanner = Scanner::new(options)?;
            let mut count = 0u64;
            while position < end {
                line.clear();
                let read = input.read_until(b'\n', &mut line).map_err(failed)?;
                if read == 0 {
                    break;
                }
                position += read as u64;
                count += 1;
                if count % CHECK_LINES == 0 {
                    crate::interrupt::check()?;
                }
                let mut text = line.strip_suffix(b"\n").unwrap_or(&line);
                text = text.strip_suffix(b"\r").unwrap_or(text);
                if position == read as u64 {
                    text = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text);
                }
                if scanner.line(text).is_err() {
                    return Ok(Err(()));
                }
            }
            Ok(Ok(scanner.scan))
        })
        .collect::<PolyResult<_>>()?;
    let mut all = VwScan::default();
    for range in ranges {
        let Ok(range) = range else { return Ok(None) };
        for name in range.namespaces {
            if !all.namespaces.contains(&name) {
                all.namespaces.push(name);
            }
        }
        for label in range.labels {
            if !all.labels.contains(&label) {
                if all.labels.len() == SCAN_LABELS {
                    all.more_labels = true;
                } else {
                    all.labels.push(label);
                }
            }
        }
        all.more_labels |= range.more_labels;
    }
    Ok(Some(all))
}

/// The scan of lines in order: what [`VwScan`] holds so far.
struct Scanner<'a> {
    options: &'a VwOptions,
    dropped: [bool; 256],
    seen: [bool; 256],
    scan: VwScan,
    /// The last label's text: most lines repeat one of two, so few are parsed.
    last_label: Vec<u8>,
}

impl<'a> Scanner<'a> {
    fn new(options: &'a VwOptions) -> PolyResult<Self> {
        let scan_options = VwOptions { namespaces: None, ..options.clone() };
        let dropped = Compiled::new(&scan_options)?.dropped;
        Ok(Scanner {
            options,
            dropped,
            seen: [false; 256],
            scan: VwScan::default(),
            last_label: Vec::new(),
        })
    }

    /// Takes the next line; the reason a line is refused (a namespace that cannot be named).
    fn line(&mut self, text: &[u8]) -> Result<(), String> {
        if !self.scan.more_labels {
            self.label(&text[..memchr::memchr(b'|', text).unwrap_or(text.len())]);
        }
        for bar in memchr::memchr_iter(b'|', text) {
            let rest = &text[bar + 1..];
            let letter = match rest.first() {
                None | Some(b' ' | b'\t' | b'|') => b' ',
                // No name before the scale: the reader reports the line.
                Some(b':') => continue,
                Some(&letter) => letter,
            };
            if std::mem::replace(&mut self.seen[usize::from(letter)], true)
                || self.dropped[usize::from(letter)]
            {
                continue;
            }
            if letter.is_ascii() {
                self.scan.namespaces.push(if letter == b' ' {
                    DEFAULT_NAMESPACE_COLUMN.to_owned()
                } else {
                    char::from(letter).to_string()
                });
            } else if self.options.other_namespaces == OtherNamespaces::Error {
                let name_end = rest.iter().position(|&b| b == b' ' || b == b'\t' || b == b'|');
                let name = &rest[..name_end.unwrap_or(rest.len())];
                return Err(format!(
                    "namespace {:?} begins with the byte {letter:#04x}, which is not ASCII: \
                     namespace columns are named by ASCII letters (other_namespaces=\"drop\" \
                     leaves such namespaces out)",
                    show(name)
                ));
            }
        }
        Ok(())
    }

    fn label(&mut self, header: &[u8]) {
        let first = header.split(|&b| b == b' ' || b == b'\t').find(|f| !f.is_empty());
        let Some(first) = first.filter(|first| *first != self.last_label.as_slice()) else {
            return;
        };
        let Some(label) = parse_header(header).ok().and_then(|h| h.label) else { return };
        let labels = &mut self.scan.labels;
        if !labels.contains(&label) {
            if labels.len() == SCAN_LABELS {
                self.scan.more_labels = true;
            } else {
                labels.push(label);
            }
        }
        self.last_label.clear();
        self.last_label.extend_from_slice(first);
    }
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
    fn a_large_file_scanned_in_ranges_gives_the_scan_in_order() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("big.vw");
        let mut text = String::new();
        let mut k = 0u64;
        while (text.len() as u64) < PARALLEL_BYTES + (1 << 20) {
            let label = ["1", "-1", "0.5"][(k % 3) as usize];
            let end = if k % 5 == 0 { "\r\n" } else { "\n" };
            text.push_str(&format!("{label} |b x{k} |a y{} w:2{end}", k % 7));
            k += 1;
        }
        // Late namespaces and labels, in the last range; a line cut by a range's bound.
        text.push_str("7 |z late | d\n-3 |q x\n");
        std::fs::write(&path, &text).unwrap();
        let parallel = scan_in_parallel(&path, &VwOptions::default()).unwrap();
        let parallel = parallel.expect("a large plain file is scanned in ranges");
        let in_order = scan_all(text.as_bytes(), &VwOptions::default()).unwrap();
        assert_eq!(parallel, in_order);
        assert_eq!(parallel.namespaces, names(&["b", "a", "z", "default", "q"]));
        assert_eq!(parallel.labels, vec![1.0, -1.0, 0.5, 7.0, -3.0]);
        // A namespace that cannot be named: the scan in order names its line.
        text.push_str("1 |\u{e9}t\u{e9} x\n");
        std::fs::write(&path, &text).unwrap();
        assert_eq!(scan_in_parallel(&path, &VwOptions::default()).unwrap(), None);
        match scan_file(&path, &VwOptions::default()) {
            Err(PolyError::Parse { line, .. }) => assert_eq!(line, k + 3),
            other => panic!("{other:?}"),
        }
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

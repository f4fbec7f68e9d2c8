//! Line-by-line reading of text files that may be gzip-compressed.
//!
//! Both text formats are line oriented, so the readers share this front end. It recognises gzip
//! by its magic bytes (`1f 8b`) rather than by the file name, so `.gz` files need no flag and a
//! compressed file under any name still works; it decodes multi-member gzip streams (as written by
//! `cat a.gz b.gz > c.gz`, or by bgzip); it reads through a large buffer; and it hands out lines
//! from one reused buffer, so reading allocates nothing per line.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use flate2::bufread::MultiGzDecoder;

use crate::error::{PolyError, PolyResult};

/// Read buffer size: large enough that per-read overhead vanishes on big files.
pub const BUFFER_SIZE: usize = 1 << 20;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// A byte source a reader accepts: an opened file, or in-memory bytes (tests, Python buffers).
pub type TextSource = Box<dyn BufRead + Send>;

/// Opens `path` for reading (`name` stands for it in errors). Opening a FIFO waits until a
/// writer opens it, in a system call that a signal does not end: that open runs on a thread of
/// its own, so that a stop request (Ctrl-C) is heard meanwhile. The thread is then left waiting;
/// it closes the FIFO if a writer comes.
fn open_file(path: &Path, name: &str) -> PolyResult<File> {
    let failed = |e: io::Error| PolyError::io(name, "cannot open", &e);
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        use std::sync::mpsc::RecvTimeoutError;
        let is_fifo = std::fs::metadata(path).is_ok_and(|meta| meta.file_type().is_fifo());
        if is_fifo {
            let (sender, receiver) = std::sync::mpsc::channel();
            let owned = path.to_path_buf();
            std::thread::spawn(move || sender.send(File::open(owned)));
            loop {
                match receiver.recv_timeout(std::time::Duration::from_millis(20)) {
                    Ok(opened) => return opened.map_err(failed),
                    Err(RecvTimeoutError::Disconnected) => {
                        return Err(failed(io::Error::other("the opening thread ended")))
                    }
                    Err(RecvTimeoutError::Timeout) => crate::interrupt::check()?,
                }
            }
        }
    }
    File::open(path).map_err(failed)
}

/// One line of text: its 1-based number and its bytes without the line terminator.
#[derive(Debug, PartialEq, Eq)]
pub struct Line<'a> {
    pub number: u64,
    pub text: &'a [u8],
}

/// Iterates over the lines of a plain or gzip-compressed byte stream.
///
/// Lines end at `\n`; a trailing `\r` (CRLF files) is stripped too, as is a UTF-8 byte order mark
/// at the start of the first line. The last line needs no terminator.
pub struct LineReader {
    name: String,
    source: TextSource,
    buffer: Vec<u8>,
    line_number: u64,
}

impl LineReader {
    /// Opens the file at `path`, decompressing it if it is gzip.
    pub fn open(path: &Path) -> PolyResult<Self> {
        let name = path.display().to_string();
        let file = open_file(path, &name)?;
        Self::from_reader(&name, Box::new(BufReader::with_capacity(BUFFER_SIZE, file)))
    }

    /// Reads from `source`, decompressing it if it starts with the gzip magic bytes. `name`
    /// stands for the file in error messages.
    pub fn from_reader(name: &str, mut source: TextSource) -> PolyResult<Self> {
        // Take the first two bytes out to look at them, then put them back in front.
        let mut magic = Vec::with_capacity(GZIP_MAGIC.len());
        (&mut source)
            .take(GZIP_MAGIC.len() as u64)
            .read_to_end(&mut magic)
            .map_err(|e| io_error(name, 0, &e))?;
        let is_gzip = magic == GZIP_MAGIC;
        let source = io::Cursor::new(magic).chain(source);
        let source: TextSource = if is_gzip {
            Box::new(BufReader::with_capacity(BUFFER_SIZE, MultiGzDecoder::new(source)))
        } else {
            Box::new(source)
        };
        Ok(Self { name: name.to_owned(), source, buffer: Vec::new(), line_number: 0 })
    }

    /// The name given at construction (the path for [`LineReader::open`]).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The next line, or `None` at the end of the input. Decompression and read failures are
    /// [`PolyError::Io`] errors naming the last line read.
    pub fn next_line(&mut self) -> PolyResult<Option<Line<'_>>> {
        self.buffer.clear();
        let read = self
            .source
            .read_until(b'\n', &mut self.buffer)
            .map_err(|e| io_error(&self.name, self.line_number, &e))?;
        if read == 0 {
            return Ok(None);
        }
        self.line_number += 1;
        let mut text = &self.buffer[..];
        if let Some(rest) = text.strip_suffix(b"\n") {
            text = rest;
        }
        if let Some(rest) = text.strip_suffix(b"\r") {
            text = rest;
        }
        if self.line_number == 1 {
            if let Some(rest) = text.strip_prefix(UTF8_BOM) {
                text = rest;
            }
        }
        Ok(Some(Line { number: self.line_number, text }))
    }
}

fn io_error(name: &str, last_line: u64, error: &io::Error) -> PolyError {
    let context = if last_line == 0 {
        "read error at the start of the file".to_owned()
    } else {
        format!("read error after line {last_line}")
    };
    PolyError::io(name, &context, error)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use flate2::write::GzEncoder;
    use flate2::Compression;
    use std::io::Write;

    /// `bytes` gzip-compressed, as a test input.
    pub(crate) fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    /// In-memory bytes as a reader source.
    pub(crate) fn source(bytes: Vec<u8>) -> TextSource {
        Box::new(io::Cursor::new(bytes))
    }

    fn collect(reader: &mut LineReader) -> Vec<(u64, String)> {
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            out.push((line.number, String::from_utf8(line.text.to_vec()).unwrap()));
        }
        out
    }

    fn lines_of(bytes: &[u8]) -> Vec<(u64, String)> {
        collect(&mut LineReader::from_reader("mem", source(bytes.to_vec())).unwrap())
    }

    fn expected(lines: &[&str]) -> Vec<(u64, String)> {
        lines.iter().enumerate().map(|(i, s)| (i as u64 + 1, s.to_string())).collect()
    }

    #[test]
    fn strips_lf_and_crlf_and_numbers_lines() {
        assert_eq!(lines_of(b"a\nb\r\n\nc"), expected(&["a", "b", "", "c"]));
        assert_eq!(lines_of(b"a\n"), expected(&["a"]));
        assert_eq!(lines_of(b""), expected(&[]));
        assert_eq!(lines_of(b"\n"), expected(&[""]));
        // A lone \r inside a line is content, only the one before \n is a terminator.
        assert_eq!(lines_of(b"a\rb\r\r\n"), expected(&["a\rb\r"]));
    }

    #[test]
    fn strips_a_leading_byte_order_mark_only() {
        assert_eq!(
            lines_of(b"\xef\xbb\xbfa\n\xef\xbb\xbfb"),
            vec![(1, "a".to_string()), (2, "\u{feff}b".to_string())]
        );
    }

    #[test]
    fn reads_gzip_and_multi_member_gzip() {
        let text = b"first\nsecond\r\nthird";
        assert_eq!(lines_of(&gzip(text)), expected(&["first", "second", "third"]));
        let mut two_members = gzip(b"a\nb\n");
        two_members.extend(gzip(b"c\n"));
        assert_eq!(lines_of(&two_members), expected(&["a", "b", "c"]));
    }

    #[test]
    fn short_inputs_are_not_mistaken_for_gzip() {
        assert_eq!(lines_of(b"\x1f"), expected(&["\x1f"]));
        assert_eq!(lines_of(b"x"), expected(&["x"]));
    }

    #[test]
    fn a_one_byte_at_a_time_source_still_detects_gzip() {
        // BufReader of capacity 1: fill_buf never returns both magic bytes at once.
        let bytes = gzip(b"x\ny\n");
        let slow: TextSource = Box::new(BufReader::with_capacity(1, io::Cursor::new(bytes)));
        let mut reader = LineReader::from_reader("slow", slow).unwrap();
        assert_eq!(collect(&mut reader), expected(&["x", "y"]));
    }

    #[test]
    fn corrupt_gzip_is_an_io_error_naming_the_source() {
        let mut bytes = gzip(&b"line\n".repeat(1000));
        let cut = bytes.len() / 2;
        bytes.truncate(cut);
        let mut reader = LineReader::from_reader("broken.gz", source(bytes)).unwrap();
        let err = loop {
            match reader.next_line() {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("truncated gzip read to the end without error"),
                Err(err) => break err,
            }
        };
        assert!(matches!(err, PolyError::Io { ref path, .. } if path == "broken.gz"), "{err}");
    }

    #[test]
    fn open_reads_files_and_reports_missing_ones() {
        let dir = std::env::temp_dir().join(format!("pp-lines-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let plain = dir.join("plain.txt");
        let compressed = dir.join("compressed.data");
        std::fs::write(&plain, b"a\nb\n").unwrap();
        std::fs::write(&compressed, gzip(b"a\nb\n")).unwrap();
        for path in [&plain, &compressed] {
            let mut reader = LineReader::open(path).unwrap();
            assert_eq!(reader.name(), path.display().to_string());
            assert_eq!(collect(&mut reader), expected(&["a", "b"]));
        }
        let missing = dir.join("missing.txt");
        let err = LineReader::open(&missing).err().unwrap();
        assert!(matches!(err, PolyError::Io { .. }), "{err}");
        assert!(err.to_string().contains("missing.txt"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

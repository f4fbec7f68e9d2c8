//! The model file: one versioned, checksummed container for every estimator. Each component
//! writes and reads its own section ([`crate::codec`]); this module only frames them.
//!
//! All numbers little-endian. Layout (versions 3 to 9; 4 adds the learner's lazy L1/L2 state
//! to its section, see [`crate::learner::stored`]; 5 its field scales; 6 field-level apple's
//! `catch_up` and apple's categorical namespaces, see [`super::FeatureSet`]; 7 apple's
//! `catch_up`; 8 marks categorical namespaces left out of apple's children too, which an
//! older build must not read as a model that multiplies them; 9 stores the learner's initial
//! weight and namespace crosses of any number of namespaces, each with its length):
//!
//! | bytes | content |
//! |---|---|
//! | 8 | magic `b"PPLEARN\0"` |
//! | 4 | format version `u32` (= 9) |
//! | 8 | payload length `u64` |
//! | n | payload: section count `u32`, then per section its name (`u32` length + UTF-8), its length `u64` and its bytes |
//! | 4 | CRC32 (IEEE, as zlib's `crc32`) of every byte before it |
//!
//! Sections by model ([`super::Model`]):
//! * online learner: `learner` ([`crate::learner::stored`]), `features` (the enumerator's
//!   kind name, then its own bytes: [`super::FeatureSet::read_section`]);
//! * passive-aggressive / DoS classifier: `passive_aggressive` ([`crate::dos::stored`]);
//! * every model: `estimator`, UTF-8 text opaque to the engine (the Python layer keeps there
//!   what only it knows: its own parameters such as `passes`, the feature column names, the
//!   class labels; nothing the engine stores).
//!
//! Reading checks the magic, the version, the length and the checksum before anything else,
//! then each section validates every field, so a truncated, corrupted or foreign file fails
//! with a message that says which. Versions 1 and 2 (one flat layout) are read by
//! [`super::legacy`].

use std::io::Write;
use std::path::Path;

use crate::codec::{bad, ByteReader, ByteWriter};
use crate::error::{PolyError, PolyResult};
use crate::versions;

pub const MAGIC: &[u8; 8] = b"PPLEARN\0";
pub(crate) const HEADER: usize = 8 + 4 + 8;
/// Most sections a file may declare (bounds what a corrupted count can allocate).
const MAX_SECTIONS: u32 = 64;

/// Named sections, in the order they were added, each kept as the code that writes it: the
/// file is written by running each twice, once to count its bytes (the file states a section's
/// length before it) and once into the output, so a save holds no copy of the model's bytes.
#[derive(Default)]
pub struct Sections<'a> {
    sections: Vec<(String, Writer<'a>)>,
    /// Each section's length, counted once when first needed.
    lengths: std::sync::OnceLock<Vec<u64>>,
}

type Writer<'a> = Box<dyn Fn(&mut ByteWriter<'_>) + Sync + 'a>;

impl<'a> Sections<'a> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a section written by `write` (which must write the same bytes every time).
    pub fn add(&mut self, name: &str, write: impl Fn(&mut ByteWriter<'_>) + Sync + 'a) {
        self.sections.push((name.to_owned(), Box::new(write)));
        self.lengths = std::sync::OnceLock::new();
    }

    /// The file's bytes (see the module docs).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = ByteWriter::new();
        out.reserve(self.file_len());
        self.write_pieces(&mut out);
        let mut bytes = out.into_bytes();
        let crc = crc32fast::hash(&bytes);
        bytes.extend_from_slice(&crc.to_le_bytes());
        bytes
    }

    /// Length of the file in bytes.
    pub fn file_len(&self) -> usize {
        HEADER + self.payload_len() as usize + 4
    }

    /// Writes the file into `out`, which must be [`Self::file_len`] long.
    pub fn write_into(&self, out: &mut [u8]) -> PolyResult<()> {
        let length = out.len();
        let mut rest = out;
        self.write_to(&mut rest).map_err(|e| PolyError::InvalidInput(format!("{e}")))?;
        if !rest.is_empty() {
            return crate::invalid!(
                "a model file of {} bytes written into {length}",
                length - rest.len()
            );
        }
        Ok(())
    }

    /// Writes the file (see the module docs) to `out`, the checksum computed on the way.
    pub fn write_to(&self, out: &mut impl Write) -> std::io::Result<()> {
        let mut stream = ByteWriter::stream(out);
        self.write_pieces(&mut stream);
        let crc = stream.finish_stream()?;
        out.write_all(&crc.to_le_bytes())
    }

    /// Each section's length in bytes, counted by writing it into a counter (once).
    fn lengths(&self) -> &[u64] {
        self.lengths.get_or_init(|| {
            let count = |write: &Writer<'a>| {
                let mut counter = ByteWriter::counter();
                write(&mut counter);
                counter.count()
            };
            self.sections.iter().map(|(_, write)| count(write)).collect()
        })
    }

    /// Bytes of the payload: the section count, then each section's name, length and bytes.
    fn payload_len(&self) -> u64 {
        let framing: usize = self.sections.iter().map(|(name, _)| 4 + name.len() + 8).sum();
        4 + framing as u64 + self.lengths().iter().sum::<u64>()
    }

    /// The file's bytes before the checksum.
    fn write_pieces(&self, out: &mut ByteWriter<'_>) {
        out.raw(MAGIC);
        out.u32(versions::CURRENT);
        out.u64(self.payload_len());
        out.u32(self.sections.len() as u32);
        for ((name, write), &length) in self.sections.iter().zip(self.lengths()) {
            out.str(name);
            out.u64(length);
            write(out);
        }
    }
}

/// A checked file: its version and its payload.
pub(crate) struct Checked<'a> {
    pub version: u32,
    /// The payload, starting at byte [`HEADER`] of the file.
    pub payload: &'a [u8],
}

/// Checks magic, version (`1..=4`), length and checksum (see the module docs).
pub(crate) fn check(bytes: &[u8]) -> PolyResult<Checked<'_>> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(bad(format!(
            "not a polars-poly model (the file does not start with the magic bytes {:?})",
            String::from_utf8_lossy(&MAGIC[..7])
        )));
    }
    if bytes.len() < HEADER + 4 {
        return Err(bad(format!("truncated: {} bytes, shorter than the header", bytes.len())));
    }
    let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if !(1..=versions::CURRENT).contains(&version) {
        return Err(bad(format!(
            "format version {version} is not supported (this build reads versions 1 to \
             {}); it was written by a newer polars-poly",
            versions::CURRENT
        )));
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&bytes[12..20]);
    let payload_len = u64::from_le_bytes(len);
    let expected = (HEADER as u64).checked_add(payload_len).and_then(|n| n.checked_add(4));
    if expected != Some(bytes.len() as u64) {
        return Err(bad(format!(
            "truncated or extended: the header announces {payload_len} payload bytes ({} in \
             total) but the file has {} bytes",
            expected.map_or_else(|| "overflow".to_owned(), |n| n.to_string()),
            bytes.len()
        )));
    }
    let body = bytes.len() - 4;
    let stored =
        u32::from_le_bytes([bytes[body], bytes[body + 1], bytes[body + 2], bytes[body + 3]]);
    let actual = crc32fast::hash(&bytes[..body]);
    if stored != actual {
        return Err(bad(format!(
            "checksum mismatch (stored {stored:#010x}, computed {actual:#010x}): the file is corrupted"
        )));
    }
    Ok(Checked { version, payload: &bytes[HEADER..body] })
}

/// The sections of a sectioned (version 3 or later) payload, by name.
pub(crate) struct ReadSections<'a> {
    sections: Vec<(String, &'a [u8], usize)>,
}

impl<'a> ReadSections<'a> {
    pub fn parse(payload: &'a [u8]) -> PolyResult<Self> {
        let mut r = ByteReader::new(payload, HEADER, "payload");
        let n = r.u32("section count")?;
        if n > MAX_SECTIONS {
            return Err(bad(format!("{n} sections (at most {MAX_SECTIONS})")));
        }
        let mut sections = Vec::new();
        for _ in 0..n {
            let name = r.string("section name")?;
            let len = r.len("section length", r.remaining())?;
            let offset = HEADER + payload.len() - r.remaining();
            let bytes = r.take(len, "section")?;
            if sections.iter().any(|(other, _, _)| *other == name) {
                return Err(bad(format!("section {name:?} appears twice")));
            }
            sections.push((name, bytes, offset));
        }
        r.finish()?;
        Ok(ReadSections { sections })
    }

    pub fn has(&self, name: &str) -> bool {
        self.sections.iter().any(|(n, _, _)| n == name)
    }

    /// A reader over the section called `name`.
    pub fn section(&self, name: &'a str) -> PolyResult<ByteReader<'a>> {
        self.sections
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, bytes, offset)| ByteReader::new(bytes, *offset, name))
            .ok_or_else(|| bad(format!("the {name:?} section is missing")))
    }

    /// Reads the section called `name` with `read`, which must consume all of it.
    pub fn read<T>(
        &self,
        name: &'a str,
        read: impl FnOnce(&mut ByteReader<'a>) -> PolyResult<T>,
    ) -> PolyResult<T> {
        let mut r = self.section(name)?;
        let value = read(&mut r)?;
        r.finish()?;
        Ok(value)
    }
}

/// Writes `sections` as a model file at `path` (see [`write_file`]).
pub fn save_sections(sections: &Sections, path: &Path) -> PolyResult<()> {
    write_file(path, |file| {
        let mut buffered = std::io::BufWriter::new(file);
        sections.write_to(&mut buffered)?;
        buffered.flush()
    })
}

/// Writes a file at `path` with `write`, atomically: into a temporary file beside it, then
/// renamed into place, so that a save that fails part way (disk full, a file-size limit) or is
/// interrupted (Ctrl-C, up to the rename) leaves the file that was at `path` as it was.
pub fn write_file(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> PolyResult<()> {
    let io = |e: std::io::Error| PolyError::io(path.display(), "cannot write", &e);
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    remove_stale_saves(folder);
    let prefix = format!("{SAVE_PREFIX}{}-", std::process::id());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    // A new model file is made as any program makes one (read-write for all, less the umask),
    // not owner-only like a temporary file; a replaced one keeps its permissions.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut file = builder.tempfile_in(folder).map_err(io)?;
    if let Some(replaced) = std::fs::metadata(path).ok().filter(|meta| meta.is_file()) {
        file.as_file().set_permissions(replaced.permissions()).map_err(io)?;
    }
    write(file.as_file_mut()).map_err(io)?;
    file.as_file().sync_all().map_err(io)?;
    // Ctrl-C during the write: the new file is dropped (deleted), the old one stays.
    crate::interrupt::check()?;
    file.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

/// The temporary files of saves are named `.polars-poly-save-<pid>-<random>`.
const SAVE_PREFIX: &str = ".polars-poly-save-";

/// A leftover younger than this is never removed: its process may be alive on another host
/// sharing the folder (a pid names a process of this host only), still writing.
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(600);

/// Removes from `folder` the temporary files of saves whose process died mid-save (`kill -9`,
/// a crash: nothing else removes them) and that nobody touched for [`STALE_AFTER`]. Best
/// effort: what cannot be read or removed stays.
fn remove_stale_saves(folder: &Path) {
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix(SAVE_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        // The entry's own metadata: a symlink is never followed.
        let Ok(meta) = entry.metadata() else { continue };
        let idle = meta.modified().ok().and_then(|at| at.elapsed().ok());
        if meta.is_file() && idle.is_some_and(|idle| idle > STALE_AFTER) && !process_alive(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether process `pid` of this host exists (signal 0 checks without sending anything).
#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return true };
    // SAFETY: kill with signal 0 only checks that the process exists and may be signalled.
    let found = unsafe { libc::kill(pid, 0) } == 0;
    found || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn process_alive(_pid: u32) -> bool {
    true // no portable check: leftovers stay
}

/// Reads `path`'s bytes.
pub fn read_file(path: &Path) -> PolyResult<Vec<u8>> {
    std::fs::read(path).map_err(|e| PolyError::io(path.display(), "cannot read", &e))
}

/// Prefixes a format error with the file's path.
pub fn in_file(path: &Path) -> impl Fn(PolyError) -> PolyError + '_ {
    move |e| match e {
        PolyError::InvalidInput(m) => PolyError::InvalidInput(format!("{}: {m}", path.display())),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::STREAM_BUFFER;

    /// A writer that takes `room` bytes, then fails (a full disk).
    struct Full {
        written: Vec<u8>,
        room: usize,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.written.len() + buf.len() > self.room {
                return Err(std::io::Error::other("disk full"));
            }
            self.written.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn sample(table: &[f32]) -> Sections<'_> {
        let mut sections = Sections::new();
        sections.add("small", |w| {
            w.str("hello");
            w.u64(7);
        });
        // Larger than the stream buffer, written value by value and in one piece.
        sections.add("table", move |w| {
            for &v in table {
                w.f32(v);
            }
            w.raw(&[3u8; 3 * STREAM_BUFFER]);
        });
        sections.add("empty", |_| {});
        sections
    }

    #[test]
    fn streamed_files_equal_the_bytes_and_read_back() {
        let table: Vec<f32> = (0..100_000).map(|i| i as f32 * 0.5).collect();
        let sections = sample(&table);
        let bytes = sections.to_bytes();
        let mut streamed = Vec::new();
        sections.write_to(&mut streamed).unwrap();
        assert_eq!(streamed, bytes);
        let checked = check(&bytes).unwrap();
        assert_eq!(checked.version, versions::CURRENT);
        let read = ReadSections::parse(checked.payload).unwrap();
        let mut table_section = read.section("table").unwrap();
        assert_eq!(table_section.take(8, "first two").unwrap(), &[0, 0, 0, 0, 0, 0, 0, 63]);
        assert!(read.has("empty") && read.has("small"));
    }

    #[test]
    fn written_into_a_buffer_of_the_files_length() {
        let table = vec![2.0f32; 30_000];
        let sections = sample(&table);
        let bytes = sections.to_bytes();
        assert_eq!(sections.file_len(), bytes.len());
        let mut out = vec![0u8; bytes.len()];
        sections.write_into(&mut out).unwrap();
        assert_eq!(out, bytes);
        for wrong in [bytes.len() - 1, bytes.len() + 1, 0] {
            assert!(sections.write_into(&mut vec![0u8; wrong]).is_err(), "{wrong}");
        }
    }

    #[test]
    fn a_failing_writer_is_an_error() {
        let table = vec![1.0f32; 50_000];
        let sections = sample(&table);
        let size = sections.to_bytes().len();
        for room in [0, 10, 70_000, size - 4, size - 1] {
            let mut full = Full { written: Vec::new(), room };
            let error = sections.write_to(&mut full).unwrap_err();
            assert_eq!(error.to_string(), "disk full", "room {room}");
        }
        let mut enough = Full { written: Vec::new(), room: size };
        sections.write_to(&mut enough).unwrap();
        assert_eq!(enough.written.len(), size);
    }

    #[cfg(unix)]
    #[cfg(unix)]
    #[test]
    fn a_save_makes_a_file_as_other_programs_do_and_keeps_a_replaced_files_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let folder = tempfile::tempdir().unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        // What the umask lets any new file have.
        let reference = folder.path().join("reference");
        std::fs::File::create(&reference).unwrap();
        let model = folder.path().join("model.pp");
        write_file(&model, |f| f.write_all(b"one")).unwrap();
        assert_eq!(mode(&model), mode(&reference));
        std::fs::set_permissions(&model, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_file(&model, |f| f.write_all(b"two")).unwrap();
        assert_eq!((mode(&model), std::fs::read(&model).unwrap()), (0o640, b"two".to_vec()));
    }

    #[test]
    fn a_save_removes_the_idle_leftovers_of_dead_saves_only() {
        let folder = tempfile::tempdir().unwrap();
        // A pid that was alive and is no more.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let old = std::time::SystemTime::now() - 2 * STALE_AFTER;
        let leftover = |name: String, modified: std::time::SystemTime| {
            let path = folder.path().join(name);
            std::fs::File::create(&path).unwrap().set_modified(modified).unwrap();
            path
        };
        let stale = leftover(format!("{SAVE_PREFIX}{dead}-abc"), old);
        let recent = leftover(format!("{SAVE_PREFIX}{dead}-def"), std::time::SystemTime::now());
        let alive = leftover(format!("{SAVE_PREFIX}{}-ghi", std::process::id()), old);
        let unrelated = leftover(format!("{SAVE_PREFIX}notapid"), old);
        let target = folder.path().join("model");
        write_file(&target, |file| file.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert!(!stale.exists());
        for kept in [recent, alive, unrelated] {
            assert!(kept.exists(), "{}", kept.display());
        }
        // Nothing of this save is left behind.
        let left = std::fs::read_dir(folder.path()).unwrap().count();
        assert_eq!(left, 4);
    }
}

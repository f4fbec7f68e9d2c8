//! A compact binary cache of parsed, hashed examples (`-c`, `--cache_file`): a second run reads
//! it at the speed of memory instead of parsing and hashing text again.
//!
//! # Layout (little-endian)
//!
//! `POLYVWC\0`, version `u32`; the header: the reader options it was written with (their
//! debug text: a cache is only read with the same options), the namespace column names, the
//! file's distinct labels ([`VwScan`]); then blocks, each `u64` byte length + bytes, and at the
//! end a `u64` 0 and the total number of rows (a file without them is incomplete: an
//! interrupted run, which the writer never leaves behind anyway since it renames the finished
//! file into place).
//!
//! A block is one batch ([`VwColumns`]): rows `u32`; flags (bit 0: every importance weight is 1,
//! bit 1: no tags); labels `f64` (NaN: none); weights `f64` unless all 1; tags (`u32` length or
//! `u32::MAX` for none, bytes) unless none; then each namespace column: flags (bit 0: one entry
//! per row, bit 1: every value is 1, bit 2: values stored as `f32`, which hold them exactly),
//! row lengths `u32` unless one per row, indices `u32`, values unless all 1. A click log's
//! one-hot fields are 4 bytes a feature.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use crate::error::{PolyError, PolyResult};
use crate::readers::vw::{OtherNamespaces, VwColumns, VwOptions, VwScan};
use crate::sparse::SparseMatrix;

const MAGIC: &[u8; 8] = b"POLYVWC\0";
const VERSION: u32 = 1;

/// A block holds at most this many bytes (a corrupted length cannot allocate without bound).
const MAX_BLOCK_BYTES: u64 = 1 << 34;

const ALL_WEIGHTS_ONE: u8 = 1;
const NO_TAGS: u8 = 2;
const ONE_PER_ROW: u8 = 1;
const ALL_VALUES_ONE: u8 = 2;
const SINGLE_VALUES: u8 = 4;
const NO_TAG: u32 = u32::MAX;

/// What a cache says of itself before its examples.
#[derive(Clone, Debug, PartialEq)]
pub struct CacheHeader {
    /// The reader options the examples were parsed with (see [`fingerprint`]).
    pub options: String,
    /// The file's namespaces and labels.
    pub scan: VwScan,
}

/// The options that decide a cache's content, as text (the namespace columns are the header's
/// own; `bits` does not matter, the cache holds whole hashes, nor what unlisted namespaces do).
pub fn fingerprint(options: &VwOptions) -> String {
    let content = VwOptions {
        bits: 32,
        namespaces: None,
        other_namespaces: OtherNamespaces::Error,
        ..options.clone()
    };
    format!("{content:?}")
}

/// Writes a cache beside its final path and renames it into place when finished.
pub struct CacheWriter {
    out: BufWriter<tempfile::NamedTempFile>,
    path: PathBuf,
    rows: u64,
}

impl CacheWriter {
    pub fn create(path: &Path, header: &CacheHeader) -> PolyResult<Self> {
        let folder = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let file = tempfile::Builder::new()
            .prefix(".polars-poly-cache-")
            .tempfile_in(folder)
            .map_err(|error| PolyError::io(path.display(), "cannot write the cache", &error))?;
        let mut writer = CacheWriter { out: BufWriter::new(file), path: path.to_owned(), rows: 0 };
        let mut bytes = Vec::new();
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&VERSION.to_le_bytes());
        put_str(&mut bytes, &header.options);
        bytes.extend_from_slice(&(header.scan.namespaces.len() as u32).to_le_bytes());
        for name in &header.scan.namespaces {
            put_str(&mut bytes, name);
        }
        bytes.extend_from_slice(&(header.scan.labels.len() as u32).to_le_bytes());
        for label in &header.scan.labels {
            bytes.extend_from_slice(&label.to_le_bytes());
        }
        bytes.push(u8::from(header.scan.more_labels));
        writer.write(&bytes)?;
        Ok(writer)
    }

    fn write(&mut self, bytes: &[u8]) -> PolyResult<()> {
        self.out
            .write_all(bytes)
            .map_err(|error| PolyError::io(self.path.display(), "cannot write the cache", &error))
    }

    /// Appends a batch.
    pub fn append(&mut self, batch: &VwColumns) -> PolyResult<()> {
        let block = encode(batch);
        self.write(&(block.len() as u64).to_le_bytes())?;
        self.write(&block)?;
        self.rows += batch.n_rows() as u64;
        Ok(())
    }

    /// Ends the file and renames it into place.
    pub fn finish(mut self) -> PolyResult<()> {
        let mut end = 0u64.to_le_bytes().to_vec();
        end.extend_from_slice(&self.rows.to_le_bytes());
        self.write(&end)?;
        let path = self.path.clone();
        let failed =
            |error: &std::io::Error| PolyError::io(path.display(), "cannot write the cache", error);
        let file = self.out.into_inner().map_err(|error| failed(error.error()))?;
        // A temporary file is private (0600); a cache is an ordinary file, as vw's.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let readable = std::fs::Permissions::from_mode(0o644);
            file.as_file().set_permissions(readable).map_err(|error| failed(&error))?;
        }
        file.as_file().sync_all().map_err(|error| failed(&error))?;
        file.persist(&path).map_err(|error| failed(&error.error))?;
        Ok(())
    }
}

fn not_usable(path: &str, reason: &str) -> PolyError {
    PolyError::InvalidInput(format!("{path}: not a usable cache: {reason}"))
}

fn put_str(bytes: &mut Vec<u8>, text: &str) {
    bytes.extend_from_slice(&(text.len() as u32).to_le_bytes());
    bytes.extend_from_slice(text.as_bytes());
}

fn encode(batch: &VwColumns) -> Vec<u8> {
    let rows = batch.n_rows();
    let entries: usize = batch.columns.iter().map(|column| column.indices.len()).sum();
    let mut out = Vec::with_capacity(16 + rows * 16 + entries * 8);
    out.extend_from_slice(&(rows as u32).to_le_bytes());
    let all_weights_one = batch.importance.iter().all(|&w| w == 1.0);
    let no_tags = batch.tags.iter().all(Option::is_none);
    out.push(if all_weights_one { ALL_WEIGHTS_ONE } else { 0 } | if no_tags { NO_TAGS } else { 0 });
    for label in &batch.labels {
        out.extend_from_slice(&label.unwrap_or(f64::NAN).to_le_bytes());
    }
    if !all_weights_one {
        for weight in &batch.importance {
            out.extend_from_slice(&weight.to_le_bytes());
        }
    }
    if !no_tags {
        for tag in &batch.tags {
            match tag {
                Some(tag) => put_str(&mut out, tag),
                None => out.extend_from_slice(&NO_TAG.to_le_bytes()),
            }
        }
    }
    for column in &batch.columns {
        let one_per_row = column.offsets.windows(2).all(|row| row[1] - row[0] == 1);
        let all_ones = column.values.iter().all(|&v| v == 1.0);
        let single = column.values.iter().all(|&v| f64::from(v as f32) == v);
        let flags = if one_per_row { ONE_PER_ROW } else { 0 }
            | if all_ones { ALL_VALUES_ONE } else { 0 }
            | if single { SINGLE_VALUES } else { 0 };
        out.push(flags);
        if !one_per_row {
            for row in column.offsets.windows(2) {
                out.extend_from_slice(&((row[1] - row[0]) as u32).to_le_bytes());
            }
        }
        for index in &column.indices {
            out.extend_from_slice(&index.to_le_bytes());
        }
        if !all_ones {
            for &value in &column.values {
                if single {
                    out.extend_from_slice(&(value as f32).to_le_bytes());
                } else {
                    out.extend_from_slice(&value.to_le_bytes());
                }
            }
        }
    }
    out
}

/// Reads a cache block by block.
pub struct CacheReader {
    input: BufReader<File>,
    path: String,
    header: CacheHeader,
    rows: u64,
    done: bool,
}

impl CacheReader {
    pub fn open(path: &Path) -> PolyResult<Self> {
        let name = path.display().to_string();
        let file = File::open(path)
            .map_err(|error| PolyError::io(&name, "cannot open the cache", &error))?;
        let mut input = BufReader::with_capacity(1 << 20, file);
        let mut magic = [0u8; 12];
        if input.read_exact(&mut magic).is_err() || &magic[..8] != MAGIC {
            return Err(not_usable(
                &name,
                "it is not a polars-poly cache (a cache of Vowpal Wabbit's own? -k writes ours \
                 over it)",
            ));
        }
        let version = u32::from_le_bytes([magic[8], magic[9], magic[10], magic[11]]);
        if version != VERSION {
            return Err(not_usable(
                &name,
                &format!(
                    "it is of cache version {version}, this version reads {VERSION} (-k writes \
                     it again)"
                ),
            ));
        }
        let mut reader = CacheReader {
            input,
            path: name,
            header: CacheHeader { options: String::new(), scan: VwScan::default() },
            rows: 0,
            done: false,
        };
        let options = reader.read_str("options")?;
        let count = reader.read_u32("namespaces")?;
        let namespaces =
            (0..count).map(|_| reader.read_str("namespace")).collect::<PolyResult<Vec<_>>>()?;
        let count = reader.read_u32("labels")? as usize;
        if count > crate::readers::vw::SCAN_LABELS {
            return Err(reader.bad(&format!("it lists {count} labels")));
        }
        let labels =
            (0..count).map(|_| reader.read_f64("label")).collect::<PolyResult<Vec<_>>>()?;
        let more_labels = reader.read_bytes(1, "labels")?[0] != 0;
        reader.header = CacheHeader { options, scan: VwScan { namespaces, labels, more_labels } };
        Ok(reader)
    }

    pub fn header(&self) -> &CacheHeader {
        &self.header
    }

    fn bad(&self, reason: &str) -> PolyError {
        not_usable(&self.path, reason)
    }

    fn read_bytes(&mut self, n: usize, what: &str) -> PolyResult<Vec<u8>> {
        let mut bytes = vec![0u8; n];
        self.input.read_exact(&mut bytes).map_err(|error| {
            if error.kind() == std::io::ErrorKind::UnexpectedEof {
                self.bad(&format!("it ends inside its {what} (an unfinished cache)"))
            } else {
                PolyError::io(&self.path, "cannot read the cache", &error)
            }
        })?;
        Ok(bytes)
    }

    fn read_u32(&mut self, what: &str) -> PolyResult<u32> {
        let bytes = self.read_bytes(4, what)?;
        Ok(u32::from_le_bytes(bytes.try_into().unwrap_or_default()))
    }

    fn read_u64(&mut self, what: &str) -> PolyResult<u64> {
        let bytes = self.read_bytes(8, what)?;
        Ok(u64::from_le_bytes(bytes.try_into().unwrap_or_default()))
    }

    fn read_f64(&mut self, what: &str) -> PolyResult<f64> {
        Ok(f64::from_bits(self.read_u64(what)?))
    }

    fn read_str(&mut self, what: &str) -> PolyResult<String> {
        let n = self.read_u32(what)? as usize;
        if n > 1 << 20 {
            return Err(self.bad(&format!("its {what} is {n} bytes long")));
        }
        let bytes = self.read_bytes(n, what)?;
        String::from_utf8(bytes).map_err(|_| self.bad(&format!("its {what} is not UTF-8")))
    }

    /// The next block, or `None` after the last.
    pub fn next_columns(&mut self) -> PolyResult<Option<VwColumns>> {
        if self.done {
            return Ok(None);
        }
        crate::interrupt::check()?;
        let length = self.read_u64("block length")?;
        if length == 0 {
            let rows = self.read_u64("row count")?;
            if rows != self.rows {
                return Err(self.bad(&format!("it says {rows} rows but holds {}", self.rows)));
            }
            self.done = true;
            return Ok(None);
        }
        if length > MAX_BLOCK_BYTES {
            return Err(self.bad(&format!("a block of {length} bytes")));
        }
        let bytes = self.read_bytes(length as usize, "block")?;
        let batch = Decoder { bytes: &bytes, pos: 0 }
            .block(self.header.scan.namespaces.len())
            .map_err(|reason| self.bad(&format!("block at row {}: {reason}", self.rows)))?;
        self.rows += batch.n_rows() as u64;
        Ok(Some(batch))
    }
}

/// A bounds-checked cursor over one block; errors say what was cut short.
struct Decoder<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| format!("its {what} runs past its end"))?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn words<const N: usize>(
        &mut self,
        n: usize,
        what: &str,
    ) -> Result<impl Iterator<Item = [u8; N]> + 'a, String> {
        let size = n.checked_mul(N).ok_or_else(|| format!("its {what} count overflows"))?;
        let bytes = self.take(size, what)?;
        Ok(bytes.chunks_exact(N).map(|chunk| {
            let mut word = [0u8; N];
            word.copy_from_slice(chunk);
            word
        }))
    }

    fn u8(&mut self, what: &str) -> Result<u8, String> {
        Ok(self.take(1, what)?[0])
    }

    fn u32(&mut self, what: &str) -> Result<u32, String> {
        Ok(self.words::<4>(1, what)?.map(u32::from_le_bytes).next().unwrap_or_default())
    }

    fn block(mut self, n_columns: usize) -> Result<VwColumns, String> {
        let rows = self.u32("row count")? as usize;
        let flags = self.u8("flags")?;
        let labels = self
            .words::<8>(rows, "labels")?
            .map(|word| Some(f64::from_le_bytes(word)).filter(|label| !label.is_nan()))
            .collect();
        let importance = if flags & ALL_WEIGHTS_ONE != 0 {
            vec![1.0; rows]
        } else {
            self.words::<8>(rows, "weights")?.map(f64::from_le_bytes).collect()
        };
        let tags = if flags & NO_TAGS != 0 {
            vec![None; rows]
        } else {
            let mut tags = Vec::with_capacity(rows);
            for _ in 0..rows {
                let n = self.u32("tag length")?;
                tags.push(if n == NO_TAG {
                    None
                } else {
                    let bytes = self.take(n as usize, "tag")?;
                    Some(String::from_utf8(bytes.to_vec()).map_err(|_| "a tag is not UTF-8")?)
                });
            }
            tags
        };
        let mut columns = Vec::with_capacity(n_columns);
        for _ in 0..n_columns {
            let flags = self.u8("column flags")?;
            let offsets: Vec<i64> = if flags & ONE_PER_ROW != 0 {
                (0..=rows as i64).collect()
            } else {
                let mut offsets = Vec::with_capacity(rows + 1);
                offsets.push(0i64);
                let mut end = 0i64;
                for length in self.words::<4>(rows, "row lengths")?.map(u32::from_le_bytes) {
                    end += i64::from(length);
                    offsets.push(end);
                }
                offsets
            };
            let entries = offsets.last().copied().unwrap_or(0) as usize;
            let indices: Vec<u32> =
                self.words::<4>(entries, "indices")?.map(u32::from_le_bytes).collect();
            let values: Vec<f64> = if flags & ALL_VALUES_ONE != 0 {
                vec![1.0; entries]
            } else if flags & SINGLE_VALUES != 0 {
                self.words::<4>(entries, "values")?
                    .map(|w| f64::from(f32::from_le_bytes(w)))
                    .collect()
            } else {
                self.words::<8>(entries, "values")?.map(f64::from_le_bytes).collect()
            };
            columns.push(SparseMatrix { offsets, indices, values });
        }
        if self.pos != self.bytes.len() {
            return Err(format!("{} bytes after its last column", self.bytes.len() - self.pos));
        }
        Ok(VwColumns {
            labels,
            importance,
            tags,
            columns,
            names: Vec::new(),
            ..VwColumns::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(rows: usize, seed: u32) -> VwColumns {
        let mut one_hot = SparseMatrix::with_capacity(rows, rows);
        let mut text = SparseMatrix::with_capacity(rows, rows);
        let mut scaled = SparseMatrix::with_capacity(rows, rows);
        for row in 0..rows as u32 {
            one_hot.push(row.wrapping_mul(2_654_435_761).wrapping_add(seed), 1.0);
            one_hot.end_row();
            for k in 0..row % 3 {
                text.push(row * 7 + k, 0.5 * f64::from(k));
            }
            text.end_row();
            scaled.push(row, 0.1 + f64::from(row));
            scaled.end_row();
        }
        VwColumns {
            labels: (0..rows).map(|r| (r % 4 != 3).then_some(r as f64 - 1.5)).collect(),
            importance: (0..rows).map(|r| if seed == 0 { 1.0 } else { r as f64 * 0.25 }).collect(),
            tags: (0..rows).map(|r| (seed != 0 && r % 2 == 0).then(|| format!("t{r}é"))).collect(),
            columns: vec![one_hot, text, scaled],
            names: Vec::new(),
            partly_read: Default::default(),
        }
    }

    fn header() -> CacheHeader {
        CacheHeader {
            options: fingerprint(&VwOptions::default()),
            scan: VwScan {
                namespaces: vec!["a".into(), "b".into(), "default".into()],
                labels: vec![1.0, -1.0],
                more_labels: true,
            },
        }
    }

    #[test]
    fn a_cache_gives_back_the_batches_written() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("x.cache");
        let batches = [batch(100, 0), batch(7, 3), batch(1, 9)];
        let mut writer = CacheWriter::create(&path, &header()).unwrap();
        for b in &batches {
            writer.append(b).unwrap();
        }
        // Nothing is at the path until the cache is finished.
        assert!(!path.exists());
        writer.finish().unwrap();
        let mut reader = CacheReader::open(&path).unwrap();
        assert_eq!(reader.header(), &header());
        for b in &batches {
            assert_eq!(reader.next_columns().unwrap().as_ref(), Some(b));
        }
        assert_eq!(reader.next_columns().unwrap(), None);
        assert_eq!(reader.next_columns().unwrap(), None);
        // The one-hot column costs 4 bytes a row.
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size < 100 * (8 + 4 + 4 + 4 + 8 + 4) + 2000, "{size}");
    }

    #[test]
    fn a_cut_or_foreign_cache_is_an_error_naming_it() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("x.cache");
        let mut writer = CacheWriter::create(&path, &header()).unwrap();
        writer.append(&batch(50, 1)).unwrap();
        writer.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        for cut in [5, 20, bytes.len() / 2, bytes.len() - 9, bytes.len() - 1] {
            std::fs::write(&path, &bytes[..cut]).unwrap();
            let error = CacheReader::open(&path).and_then(|mut reader| {
                while reader.next_columns()?.is_some() {}
                Ok(())
            });
            let message = error.unwrap_err().to_string();
            assert!(message.contains("x.cache") && message.contains("cache"), "{message}");
        }
        std::fs::write(&path, b"1 |a x\n").unwrap();
        let message = CacheReader::open(&path).err().unwrap().to_string();
        assert!(message.contains("not a polars-poly cache"), "{message}");
    }
}

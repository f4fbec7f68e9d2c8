//! The bytes of model-file sections: a little-endian writer and a bounds-checked reader whose
//! errors name the section, the field and the byte offset. Every component that stores state
//! (the learner, its feature enumerators, the DoS classifier) writes and reads its own section
//! with these; the container ([`crate::model::file`]) frames and checksums the sections.

use crate::error::{PolyError, PolyResult};

/// The error of a model file that is not what it should be.
pub fn bad(reason: impl std::fmt::Display) -> PolyError {
    PolyError::InvalidInput(format!("invalid model file: {reason}"))
}

/// Writes little-endian values: into memory, or counting them, or streaming them out.
///
/// Counting then streaming is how a model file is saved without a copy of its bytes in memory:
/// a section's length, which the file states before the section, is learned by writing the
/// section once into a counter; then it is written again straight to the file.
pub struct ByteWriter<'a> {
    sink: Sink<'a>,
}

enum Sink<'a> {
    Memory(Vec<u8>),
    Count(u64),
    Stream(Stream<'a>),
}

/// Bytes on their way to a writer, through a buffer (so that writing a table value by value
/// costs a copy, not a call), each byte added to the checksum as it is passed on.
pub struct Stream<'a> {
    buffer: Vec<u8>,
    out: &'a mut dyn std::io::Write,
    crc: crc32fast::Hasher,
    /// The first error of `out`; later bytes are dropped.
    error: Option<std::io::Error>,
}

pub(crate) const STREAM_BUFFER: usize = 1 << 16;

impl Default for ByteWriter<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> ByteWriter<'a> {
    /// A writer collecting the bytes in memory ([`Self::into_bytes`]).
    pub fn new() -> Self {
        ByteWriter { sink: Sink::Memory(Vec::new()) }
    }

    /// A writer that only counts the bytes ([`Self::count`]).
    pub fn counter() -> Self {
        ByteWriter { sink: Sink::Count(0) }
    }

    /// A writer passing the bytes on to `out` ([`Self::finish_stream`] flushes it).
    pub fn stream(out: &'a mut dyn std::io::Write) -> Self {
        let buffer = Vec::with_capacity(STREAM_BUFFER);
        ByteWriter {
            sink: Sink::Stream(Stream { buffer, out, crc: crc32fast::Hasher::new(), error: None }),
        }
    }

    /// The bytes written (empty unless made by [`Self::new`]).
    pub fn into_bytes(self) -> Vec<u8> {
        match self.sink {
            Sink::Memory(bytes) => bytes,
            _ => Vec::new(),
        }
    }

    /// How many bytes were written, whatever the sink.
    pub fn count(&self) -> u64 {
        match &self.sink {
            Sink::Memory(bytes) => bytes.len() as u64,
            Sink::Count(n) => *n,
            Sink::Stream(_) => 0,
        }
    }

    /// Flushes a streaming writer; the checksum of every byte passed on, or the first error.
    pub fn finish_stream(self) -> std::io::Result<u32> {
        let Sink::Stream(mut stream) = self.sink else {
            return Err(std::io::Error::other("not a streaming writer"));
        };
        stream.pass_on();
        match stream.error {
            Some(error) => Err(error),
            None => Ok(stream.crc.finalize()),
        }
    }

    /// A writer that only counts adds `n` and returns true (the caller then skips writing `n`
    /// bytes it knows the length of, e.g. a large table); other writers return false.
    pub fn counted_only(&mut self, n: usize) -> bool {
        if let Sink::Count(count) = &mut self.sink {
            *count += n as u64;
            return true;
        }
        false
    }

    pub fn reserve(&mut self, additional: usize) {
        if let Sink::Memory(bytes) = &mut self.sink {
            bytes.reserve(additional);
        }
    }

    #[inline]
    fn put(&mut self, data: &[u8]) {
        match &mut self.sink {
            Sink::Memory(bytes) => bytes.extend_from_slice(data),
            Sink::Count(n) => *n += data.len() as u64,
            Sink::Stream(stream) => {
                if stream.buffer.len() + data.len() > STREAM_BUFFER {
                    stream.pass_on();
                }
                if data.len() > STREAM_BUFFER {
                    stream.send(data);
                } else {
                    stream.buffer.extend_from_slice(data);
                }
            }
        }
    }

    pub fn u8(&mut self, v: u8) {
        self.put(&[v]);
    }

    pub fn flag(&mut self, v: bool) {
        self.put(&[u8::from(v)]);
    }

    pub fn u32(&mut self, v: u32) {
        self.put(&v.to_le_bytes());
    }

    pub fn u64(&mut self, v: u64) {
        self.put(&v.to_le_bytes());
    }

    /// A length or count (stored as `u64`).
    pub fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }

    pub fn f32(&mut self, v: f32) {
        self.put(&v.to_le_bytes());
    }

    pub fn f64(&mut self, v: f64) {
        self.put(&v.to_le_bytes());
    }

    /// Bytes as they are (no length).
    pub fn raw(&mut self, bytes: &[u8]) {
        self.put(bytes);
    }

    /// `u32` length + bytes.
    pub fn bytes(&mut self, bytes: &[u8]) {
        self.u32(bytes.len() as u32);
        self.put(bytes);
    }

    /// `u32` length + UTF-8.
    pub fn str(&mut self, text: &str) {
        self.bytes(text.as_bytes());
    }

    /// A component's options, self-describing: its serde struct as JSON text ([`Self::str`]).
    /// A field added later with a serde default is read from older files as that default, so
    /// a new option needs no new format version.
    pub fn options<T: serde::Serialize>(&mut self, options: &T) {
        // Option structs hold numbers, strings, flags and lists: they always serialize.
        let text = serde_json::to_string(options).expect("an options struct serializes to JSON");
        self.str(&text);
    }
}

impl Stream<'_> {
    /// Sends the buffer on and empties it.
    fn pass_on(&mut self) {
        let buffer = std::mem::take(&mut self.buffer);
        self.send(&buffer);
        self.buffer = buffer;
        self.buffer.clear();
    }

    fn send(&mut self, data: &[u8]) {
        if self.error.is_none() && !data.is_empty() {
            self.crc.update(data);
            if let Err(error) = self.out.write_all(data) {
                self.error = Some(error);
            }
        }
    }
}

/// A bounds-checked little-endian cursor over one section (see the module docs).
pub struct ByteReader<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// Offset of `bytes` in the file, for error messages.
    offset: usize,
    /// The section's name, for error messages.
    section: &'a str,
}

impl<'a> ByteReader<'a> {
    /// A reader over `bytes`, which start at byte `offset` of the file and hold `section`.
    pub fn new(bytes: &'a [u8], offset: usize, section: &'a str) -> Self {
        Self { bytes, pos: 0, offset, section }
    }

    pub fn take(&mut self, n: usize, what: &str) -> PolyResult<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or_else(|| {
            bad(format!(
                "truncated {} section: {what} needs {n} bytes at offset {} but the section ends \
                 at {}",
                self.section,
                self.pos + self.offset,
                self.bytes.len() + self.offset
            ))
        })?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn array<const N: usize>(&mut self, what: &str) -> PolyResult<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    pub fn u8(&mut self, what: &str) -> PolyResult<u8> {
        Ok(self.array::<1>(what)?[0])
    }

    pub fn flag(&mut self, what: &str) -> PolyResult<bool> {
        match self.u8(what)? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(bad(format!("{what} must be 0 or 1, got {other}"))),
        }
    }

    pub fn u32(&mut self, what: &str) -> PolyResult<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    pub fn u64(&mut self, what: &str) -> PolyResult<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// A length or count written by [`ByteWriter::len`], at most `limit` (so that a corrupted
    /// count cannot make the reader allocate without bound).
    pub fn len(&mut self, what: &str, limit: usize) -> PolyResult<usize> {
        let n = self.u64(what)?;
        match usize::try_from(n) {
            Ok(n) if n <= limit => Ok(n),
            _ => Err(bad(format!("{what} is {n}, more than the limit of {limit}"))),
        }
    }

    pub fn f32(&mut self, what: &str) -> PolyResult<f32> {
        Ok(f32::from_le_bytes(self.array(what)?))
    }

    pub fn f64(&mut self, what: &str) -> PolyResult<f64> {
        Ok(f64::from_le_bytes(self.array(what)?))
    }

    pub fn bytes(&mut self, what: &str) -> PolyResult<&'a [u8]> {
        let n = self.u32(what)? as usize;
        self.take(n, what)
    }

    pub fn string(&mut self, what: &str) -> PolyResult<String> {
        let bytes = self.bytes(what)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| bad(format!("{what} is not UTF-8")))
    }

    /// A component's options written by [`ByteWriter::options`]; errors name the field.
    pub fn options<T: serde::de::DeserializeOwned>(&mut self, what: &str) -> PolyResult<T> {
        let text = self.string(what)?;
        let mut json = serde_json::Deserializer::from_str(&text);
        serde_path_to_error::deserialize(&mut json).map_err(|e| {
            let field = e.path().to_string();
            bad(format!("{what}: field {field:?}: {}", e.into_inner()))
        })
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// Fails unless every byte was read.
    pub fn finish(&self) -> PolyResult<()> {
        match self.remaining() {
            0 => Ok(()),
            n => {
                Err(bad(format!("{n} unexpected bytes at the end of the {} section", self.section)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_and_overreads_name_the_field() {
        let mut w = ByteWriter::new();
        w.u8(7);
        w.flag(true);
        w.u32(70_000);
        w.u64(1 << 40);
        w.len(3);
        w.f32(1.5);
        w.f64(-2.25);
        w.str("ns");
        let bytes = w.into_bytes();
        let mut r = ByteReader::new(&bytes, 100, "test");
        assert_eq!(r.u8("a").unwrap(), 7);
        assert!(r.flag("b").unwrap());
        assert_eq!(r.u32("c").unwrap(), 70_000);
        assert_eq!(r.u64("d").unwrap(), 1 << 40);
        assert!(r.clone_len_limit_check());
        assert_eq!(r.len("e", 3).unwrap(), 3);
        assert_eq!(r.f32("f").unwrap(), 1.5);
        assert_eq!(r.f64("g").unwrap(), -2.25);
        assert_eq!(r.string("h").unwrap(), "ns");
        r.finish().unwrap();
        let err = r.u64("weight count").unwrap_err().to_string();
        assert!(err.contains("weight count") && err.contains("offset") && err.contains("test"));
    }

    impl ByteReader<'_> {
        /// A count above its limit is refused before anything is allocated.
        fn clone_len_limit_check(&self) -> bool {
            let mut copy = ByteReader { ..*self };
            copy.len("e", 2).is_err()
        }
    }

    #[test]
    fn bad_flags_and_utf8_are_refused() {
        let mut r = ByteReader::new(&[2], 0, "test");
        assert!(r.flag("constant flag").unwrap_err().to_string().contains("constant flag"));
        let mut w = ByteWriter::new();
        w.bytes(&[0xff, 0xfe]);
        let bytes = w.into_bytes();
        let mut r = ByteReader::new(&bytes, 0, "test");
        assert!(r.string("name").unwrap_err().to_string().contains("not UTF-8"));
    }
}

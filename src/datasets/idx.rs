//! Reader for the IDX files of MNIST (LeCun et al.): a big-endian header — magic number
//! 0x0000_08NN (unsigned bytes, NN dimensions), then NN u32 sizes — followed by the data.
//! Images are magic 2051 (3 dimensions: count, rows, columns), labels magic 2049 (1: count).
//! Files may be gzip-compressed (detected by the gzip magic bytes, not the file name).

use std::io::Read;
use std::path::Path;

use flate2::read::MultiGzDecoder;

use crate::error::{PolyError, PolyResult};

/// Magic number of an IDX file of unsigned bytes with 3 dimensions (images).
pub const IMAGES_MAGIC: u32 = 2051;
/// Magic number of an IDX file of unsigned bytes with 1 dimension (labels).
pub const LABELS_MAGIC: u32 = 2049;

/// A stack of gray-level images, row-major, one byte per pixel (0 = background for MNIST).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdxImages {
    pub rows: usize,
    pub cols: usize,
    /// `len() · rows · cols` bytes, image after image.
    pub pixels: Vec<u8>,
}

impl IdxImages {
    /// Number of images.
    pub fn len(&self) -> usize {
        self.pixels.len().checked_div(self.rows * self.cols).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.pixels.is_empty()
    }

    /// Image `k` (`rows · cols` bytes).
    pub fn image(&self, k: usize) -> &[u8] {
        let size = self.rows * self.cols;
        &self.pixels[k * size..(k + 1) * size]
    }
}

/// Reads an IDX image file (gzip or plain).
pub fn read_images(path: impl AsRef<Path>) -> PolyResult<IdxImages> {
    let path = path.as_ref();
    parse_images(&read_maybe_gzip(path)?, &path.display().to_string())
}

/// Reads an IDX label file (gzip or plain).
pub fn read_labels(path: impl AsRef<Path>) -> PolyResult<Vec<u8>> {
    let path = path.as_ref();
    parse_labels(&read_maybe_gzip(path)?, &path.display().to_string())
}

/// Parses the (decompressed) bytes of an IDX image file; `source` names it in errors.
pub fn parse_images(bytes: &[u8], source: &str) -> PolyResult<IdxImages> {
    let dims = parse_header(bytes, IMAGES_MAGIC, 3, "image", source)?;
    let (count, rows, cols) = (dims[0], dims[1], dims[2]);
    if rows == 0 || cols == 0 {
        return Err(format_error(source, format!("images of {rows}×{cols} pixels are empty")));
    }
    let data = check_data_len(bytes, 16, &[count, rows, cols], source)?;
    Ok(IdxImages { rows, cols, pixels: data.to_vec() })
}

/// Parses the (decompressed) bytes of an IDX label file; `source` names it in errors.
pub fn parse_labels(bytes: &[u8], source: &str) -> PolyResult<Vec<u8>> {
    let dims = parse_header(bytes, LABELS_MAGIC, 1, "label", source)?;
    Ok(check_data_len(bytes, 8, &dims, source)?.to_vec())
}

/// A file whose content is not a valid IDX file (a value error: the file was read fine).
fn format_error(source: &str, reason: String) -> PolyError {
    PolyError::InvalidInput(format!("{source}: {reason}"))
}

fn read_maybe_gzip(path: &Path) -> PolyResult<Vec<u8>> {
    let name = path.display().to_string();
    let raw = std::fs::read(path).map_err(|e| PolyError::io(&name, "cannot read", &e))?;
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::with_capacity(raw.len() * 4);
        MultiGzDecoder::new(raw.as_slice())
            .read_to_end(&mut out)
            .map_err(|e| format_error(&name, format!("bad gzip data: {e}")))?;
        Ok(out)
    } else {
        Ok(raw)
    }
}

/// Checks the magic number and returns the `n_dims` sizes.
fn parse_header(
    bytes: &[u8],
    magic: u32,
    n_dims: usize,
    kind: &str,
    source: &str,
) -> PolyResult<Vec<usize>> {
    let header_len = 4 + 4 * n_dims;
    let word = |k: usize| {
        u32::from_be_bytes([bytes[4 * k], bytes[4 * k + 1], bytes[4 * k + 2], bytes[4 * k + 3]])
    };
    if bytes.len() >= 4 && word(0) != magic {
        return Err(format_error(
            source,
            format!("not an IDX {kind} file: magic number {} (expected {magic})", word(0)),
        ));
    }
    if bytes.len() < header_len {
        return Err(format_error(
            source,
            format!(
                "not an IDX {kind} file: {} bytes is shorter than the {header_len}-byte header",
                bytes.len()
            ),
        ));
    }
    Ok((1..=n_dims).map(|k| word(k) as usize).collect())
}

/// The data after the header, which must be exactly the product of the sizes.
fn check_data_len<'a>(
    bytes: &'a [u8],
    header_len: usize,
    dims: &[usize],
    source: &str,
) -> PolyResult<&'a [u8]> {
    let expected = dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
    let data = &bytes[header_len..];
    let shape = dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("×");
    match expected {
        Some(expected) if expected == data.len() => Ok(data),
        Some(expected) => Err(format_error(
            source,
            format!("header says {shape} = {expected} data bytes but the file has {}", data.len()),
        )),
        None => Err(format_error(source, format!("header sizes {shape} overflow"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::GzEncoder;
    use flate2::Compression;
    use std::io::Write;

    fn header(magic: u32, dims: &[u32]) -> Vec<u8> {
        let mut out = magic.to_be_bytes().to_vec();
        for d in dims {
            out.extend(d.to_be_bytes());
        }
        out
    }

    #[test]
    fn parses_images_and_labels() {
        let mut bytes = header(2051, &[2, 2, 3]);
        bytes.extend(0..12u8);
        let images = parse_images(&bytes, "mem").unwrap();
        assert_eq!((images.len(), images.rows, images.cols), (2, 2, 3));
        assert_eq!(images.image(1), &[6, 7, 8, 9, 10, 11]);
        let mut bytes = header(2049, &[3]);
        bytes.extend([7, 0, 9]);
        assert_eq!(parse_labels(&bytes, "mem").unwrap(), vec![7, 0, 9]);
    }

    #[test]
    fn bad_files_fail_clearly() {
        let labels = {
            let mut b = header(2049, &[1]);
            b.push(3);
            b
        };
        let err = parse_images(&labels, "x.idx").unwrap_err().to_string();
        assert_eq!(err, "x.idx: not an IDX image file: magic number 2049 (expected 2051)");
        let err = parse_labels(&[0, 0, 8], "y").unwrap_err().to_string();
        assert_eq!(err, "y: not an IDX label file: 3 bytes is shorter than the 8-byte header");
        let mut truncated = header(2051, &[10, 28, 28]);
        truncated.extend([0u8; 100]);
        let err = parse_images(&truncated, "t").unwrap_err().to_string();
        assert_eq!(err, "t: header says 10×28×28 = 7840 data bytes but the file has 100");
        let mut long = header(2049, &[1]);
        long.extend([1, 2]);
        let err = parse_labels(&long, "l").unwrap_err().to_string();
        assert_eq!(err, "l: header says 1 = 1 data bytes but the file has 2");
        let err = parse_images(&header(2051, &[0, 0, 28]), "e").unwrap_err().to_string();
        assert_eq!(err, "e: images of 0×28 pixels are empty");
        let err = read_labels("/nonexistent/labels.gz").unwrap_err();
        assert!(err.to_string().starts_with("/nonexistent/labels.gz: "), "{err}");
    }

    #[test]
    fn reads_gzip_and_plain_files() {
        let dir = std::env::temp_dir().join(format!("pp-idx-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut bytes = header(2049, &[4]);
        bytes.extend([1, 2, 3, 4]);
        let plain = dir.join("labels");
        std::fs::write(&plain, &bytes).unwrap();
        let gz = dir.join("labels.gz");
        let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
        encoder.write_all(&bytes).unwrap();
        std::fs::write(&gz, encoder.finish().unwrap()).unwrap();
        assert_eq!(read_labels(&plain).unwrap(), vec![1, 2, 3, 4]);
        assert_eq!(read_labels(&gz).unwrap(), vec![1, 2, 3, 4]);
        // A gzip file cut short is an error, not silently truncated data.
        let full = std::fs::read(&gz).unwrap();
        std::fs::write(&gz, &full[..full.len() - 6]).unwrap();
        let err = read_labels(&gz).unwrap_err().to_string();
        assert!(err.contains("bad gzip data"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! Bindings of the digit stream (INFIMNIST-style elastic distortions) and the IDX readers.

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::datasets::{read_images, read_labels, DigitStream, Distortion, IdxImages};

use super::error::py_error;

/// The images of an MNIST IDX file: (pixels as a flat uint8 array, rows, cols).
#[pyfunction]
fn read_idx_images(
    py: Python<'_>,
    path: std::path::PathBuf,
) -> PyResult<(Bound<'_, PyArray1<u8>>, usize, usize)> {
    let images = py.detach(|| read_images(&path)).map_err(py_error)?;
    let (rows, cols) = (images.rows, images.cols);
    Ok((PyArray1::from_vec(py, images.pixels), rows, cols))
}

/// The labels of an MNIST IDX file.
#[pyfunction]
fn read_idx_labels(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Bound<'_, PyArray1<u8>>> {
    let labels = py.detach(|| read_labels(&path)).map_err(py_error)?;
    Ok(PyArray1::from_vec(py, labels))
}

/// Pixels (float32, flat) and labels of a batch of generated digits.
type ImageBatch<'py> = (Bound<'py, PyArray1<f32>>, Bound<'py, PyArray1<u8>>);

/// An endless, seeded stream of distorted digits; example i depends only on (seed, i).
#[pyclass(module = "polars_poly._internal", name = "DigitStream", frozen)]
pub struct PyDigitStream {
    stream: DigitStream,
}

#[pymethods]
impl PyDigitStream {
    #[new]
    #[pyo3(signature = (pixels, labels, rows, cols, seed, alpha, sigma, max_rotation, max_scale, max_shear, max_translation))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        pixels: PyReadonlyArray1<'_, u8>,
        labels: PyReadonlyArray1<'_, u8>,
        rows: usize,
        cols: usize,
        seed: u64,
        alpha: f64,
        sigma: f64,
        max_rotation: f64,
        max_scale: f64,
        max_shear: f64,
        max_translation: f64,
    ) -> PyResult<Self> {
        let pixels = pixels.as_slice()?;
        if rows == 0 || cols == 0 || pixels.len() % (rows * cols) != 0 {
            return Err(PyValueError::new_err(format!(
                "{} pixels are not a whole number of {rows}x{cols} images",
                pixels.len()
            )));
        }
        let images = IdxImages { rows, cols, pixels: pixels.to_vec() };
        let distortion =
            Distortion { alpha, sigma, max_rotation, max_scale, max_shear, max_translation };
        let stream =
            DigitStream::new(&images, labels.as_slice()?, seed, distortion).map_err(py_error)?;
        Ok(Self { stream })
    }

    /// Examples `start .. start + count`: (pixels float32 in [0, 1], count x rows*cols flat;
    /// labels uint8). Generated in parallel, the same for any thread count.
    fn batch<'py>(&self, py: Python<'py>, start: u64, count: usize) -> PyResult<ImageBatch<'py>> {
        let size = self.stream.image_len();
        let total =
            count.checked_mul(size).ok_or_else(|| PyValueError::new_err("batch too large"))?;
        let (pixels, labels) = py
            .detach(|| {
                let mut pixels = vec![0.0f32; total];
                let mut labels = vec![0u8; count];
                self.stream.fill(start, &mut pixels, &mut labels).map(|()| (pixels, labels))
            })
            .map_err(py_error)?;
        Ok((PyArray1::from_vec(py, pixels), PyArray1::from_vec(py, labels)))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read_idx_images, m)?)?;
    m.add_function(wrap_pyfunction!(read_idx_labels, m)?)?;
    m.add_class::<PyDigitStream>()?;
    Ok(())
}

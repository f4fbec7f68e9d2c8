//! Data sets for experiments and benchmarks: the MNIST IDX reader and an INFIMNIST-style stream
//! of elastically distorted digits (the DoS paper's training data, §4).

pub mod elastic;
pub mod idx;

pub use elastic::{DigitStream, Distortion, Scratch};
pub use idx::{read_images, read_labels, IdxImages};

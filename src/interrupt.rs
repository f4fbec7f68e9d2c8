//! Cooperative interruption of long loops (Ctrl-C).
//!
//! The engine knows nothing of signals or Python: its long loops (training, scoring, expansion,
//! readers) call [`check`] every example, row or line, which costs one relaxed atomic load, and
//! stop with [`PolyError::Interrupted`] once [`request`] was called. Whoever runs the engine
//! decides what requests a stop; the Python bindings do it from a SIGINT handler installed for
//! the duration of a long call (`crate::python::interrupt`), so Ctrl-C stops parallel loops on
//! every thread within a few milliseconds, with no Python call inside the loop.
//!
//! What an interrupted operation leaves behind is the same as for any error met part way: a
//! learner keeps the examples it learned before the stop (exactly as if the data had ended
//! there); an expansion or a reader returns nothing.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{PolyError, PolyResult};

static STOP: AtomicBool = AtomicBool::new(false);

/// Asks every running loop to stop at its next [`check`].
pub fn request() {
    STOP.store(true, Ordering::Relaxed);
}

/// Forgets an earlier [`request`] (a new operation starts).
pub fn clear() {
    STOP.store(false, Ordering::Relaxed);
}

/// Whether a stop was requested.
#[inline]
pub fn requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// `Err(PolyError::Interrupted)` once a stop was requested.
#[inline]
pub fn check() -> PolyResult<()> {
    if requested() {
        Err(PolyError::Interrupted)
    } else {
        Ok(())
    }
}

// Tested in tests/interrupt.rs: a stop request reaches every loop of the process, so the test
// runs in a process of its own rather than beside the unit tests.

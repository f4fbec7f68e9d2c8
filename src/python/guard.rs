//! What every call into the engine goes through: Ctrl-C, and panics.
//!
//! **Ctrl-C.** Python runs its SIGINT handler only between bytecodes, so a Rust call that
//! releases the GIL for a minute would otherwise ignore Ctrl-C for that minute. While a long call
//! runs on the main thread, SIGINT instead requests a stop from the engine
//! ([`crate::interrupt`]), whose loops check for it every example, row or line; the call then
//! raises `KeyboardInterrupt` and Python's own handler is back in place. Calls on other threads
//! change nothing: Python delivers Ctrl-C only to its main thread.
//!
//! **Ctrl-C in a query.** A plugin expression runs inside a Polars query, on Polars' threads,
//! with no call of ours on the main thread to watch SIGINT: Polars notices Ctrl-C between its
//! own steps, but one of our calls in flight (scoring a batch with a large model) ran to its
//! end, 0.9-4 s. So the first expression built installs [`chain_sigint`]'s handler for the
//! process: on SIGINT it requests a stop, then runs the handler it replaced (Python's, which
//! raises `KeyboardInterrupt` as ever). Our calls in flight stop at their next check, and calls
//! the query starts before Polars has stopped it fail at once; the request is forgotten when
//! the first call of a query starts half a second or more after it ([`guarded_expr`]).
//!
//! **Panics.** Bad input is an error, never a panic; a panic left is a bug. It becomes a
//! `RuntimeError` that says so (not PyO3's `PanicException`, which `except Exception` misses, nor
//! Polars' "the plugin panicked", which names nothing).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use polars::prelude::{polars_err, PolarsError, PolarsResult, Series};
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError};
use pyo3::prelude::*;

use crate::interrupt;

/// Runs `op` (an engine call from Python) with Ctrl-C requesting a stop: `KeyboardInterrupt` when
/// it did, whatever `op` returned; a panic becomes a `RuntimeError` (see the module docs).
pub fn guarded<T>(op: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    let watch = Watch::start();
    let result = catch_unwind(AssertUnwindSafe(op));
    let stopped = watch.is_some() && interrupt::requested();
    drop(watch);
    if stopped {
        return Err(PyKeyboardInterrupt::new_err("interrupted (Ctrl-C)"));
    }
    result.unwrap_or_else(|panic| Err(PyRuntimeError::new_err(bug_report(&*panic))))
}

/// A plugin expression's body over `inputs`, its panic turned into an error that says it is a
/// bug.
///
/// Polars hands an expression its input in batches (always in lazy and streaming queries), and
/// a plugin cannot know where its batch starts in the whole input: an error naming a row says
/// that the number counts from the batch's first row, rather than letting it pass for the row
/// of the input, and how to find that row. (Passing `pl.row_index()` as an extra input would
/// give the offset, but it stops Polars pushing filters and slices below the expression: a
/// `.head(10)` of a scored scan would score every row.)
pub fn guarded_expr<T>(
    expression: &str,
    inputs: &[Series],
    op: impl FnOnce() -> PolarsResult<T>,
) -> PolarsResult<T> {
    let _in_flight = InFlight::enter();
    match catch_unwind(AssertUnwindSafe(op)) {
        Ok(Err(PolarsError::ComputeError(message))) if message.contains("row ") => {
            let n_rows = inputs.first().map_or(0, |s| s.len());
            Err(polars_err!(
                ComputeError: "{message} [row numbers count from the first row of the \
                {n_rows}-row batch Polars passed to {expression}; lazy and streaming queries \
                split their input into such batches and do not say where a batch starts. To \
                find the row in the whole input, filter for the value named above after \
                `.with_row_index()`]"
            ))
        }
        Ok(result) => result,
        Err(panic) => Err(polars_err!(ComputeError: "{expression}: {}", bug_report(&*panic))),
    }
}

/// Plugin calls running now, on any thread.
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// Whether a [`Watch`] is installed (a guarded call on the main thread owns the stop request).
static WATCHING: AtomicBool = AtomicBool::new(false);

/// When Ctrl-C last requested a stop for plugin expressions ([`monotonic_nanos`]; 0: never).
static REQUESTED_AT: AtomicU64 = AtomicU64::new(0);

/// How long a stop requested by Ctrl-C outlives the calls it stopped: Polars notices Ctrl-C
/// between its own steps and may start more of the interrupted query's calls meanwhile (0.1-0.3
/// s); each of them must fail at once rather than forget the stop and score its whole batch (a
/// second or more). A query started within this time of Ctrl-C is interrupted too.
const STOP_GRACE_NANOS: u64 = 500_000_000;

/// CLOCK_MONOTONIC in nanoseconds (async-signal-safe: the SIGINT handler reads it).
fn monotonic_nanos() -> u64 {
    #[cfg(target_os = "linux")]
    // SAFETY: clock_gettime writes the timespec it is given, nothing else.
    unsafe {
        let mut now: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now);
        (now.tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(now.tv_nsec as u64)
    }
    #[cfg(not(target_os = "linux"))]
    0
}

/// One plugin call in flight; the first of a query forgets a stop requested by Ctrl-C during an
/// earlier one (its calls all ended since, [`STOP_GRACE_NANOS`] ago or more), unless a watched
/// call owns the request.
struct InFlight;

impl InFlight {
    fn enter() -> Self {
        if IN_FLIGHT.fetch_add(1, Ordering::AcqRel) == 0 && !WATCHING.load(Ordering::Acquire) {
            let at = REQUESTED_AT.load(Ordering::Acquire);
            if at == 0 || monotonic_nanos().saturating_sub(at) >= STOP_GRACE_NANOS {
                interrupt::clear();
            }
        }
        InFlight
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The handler [`chain_sigint`] replaced, for ours to run after requesting a stop: its
/// address and whether it takes `SA_SIGINFO`'s three arguments (0: none installed yet).
static CHAINED_HANDLER: AtomicUsize = AtomicUsize::new(0);
static CHAINED_SIGINFO: AtomicBool = AtomicBool::new(false);

#[cfg(target_os = "linux")]
extern "C" fn on_sigint_chained(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    // Atomic operations, clock_gettime and a call of the previous handler: async-signal-safe.
    REQUESTED_AT.store(monotonic_nanos(), Ordering::Release);
    interrupt::request();
    let previous = CHAINED_HANDLER.load(Ordering::Relaxed);
    if previous == 0 || previous == libc::SIG_DFL || previous == libc::SIG_IGN {
        return;
    }
    // SAFETY: `previous` is the handler the kernel would have called, with the arguments its
    // flags ask for (see `chain_sigint`).
    unsafe {
        if CHAINED_SIGINFO.load(Ordering::Relaxed) {
            let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(previous);
            handler(signal, info, context);
        } else {
            let handler: extern "C" fn(libc::c_int) = std::mem::transmute(previous);
            handler(signal);
        }
    }
}

/// Installs the process's SIGINT handler for plugin expressions (see the module docs), once;
/// only from the main thread, and only over a handler (Python's): a program that ignores
/// SIGINT or left the default keeps it. Whether ours is installed.
#[pyfunction]
fn chain_sigint() -> bool {
    #[cfg(target_os = "linux")]
    // SAFETY: as in `Watch::start`; the replaced handler is kept for ours to call.
    unsafe {
        if libc::gettid() != libc::getpid() {
            return false;
        }
        let mut current: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGINT, std::ptr::null(), &mut current) != 0 {
            return false;
        }
        let ours = on_sigint_chained as *const () as libc::sighandler_t;
        if current.sa_sigaction == ours {
            return true;
        }
        if current.sa_sigaction == libc::SIG_IGN || current.sa_sigaction == libc::SIG_DFL {
            return false;
        }
        CHAINED_SIGINFO.store(current.sa_flags & libc::SA_SIGINFO != 0, Ordering::Relaxed);
        CHAINED_HANDLER.store(current.sa_sigaction, Ordering::Release);
        let mut chained: libc::sigaction = std::mem::zeroed();
        chained.sa_sigaction = ours;
        chained.sa_flags = libc::SA_SIGINFO | (current.sa_flags & libc::SA_ONSTACK);
        chained.sa_mask = current.sa_mask;
        libc::sigaction(libc::SIGINT, &chained, std::ptr::null_mut()) == 0
    }
    #[cfg(not(target_os = "linux"))]
    false
}

/// The message of a caught panic.
fn bug_report(panic: &(dyn std::any::Any + Send)) -> String {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned());
    format!(
        "internal error in polars-poly (a bug, please report it with the input that caused \
         it): {message}"
    )
}

/// Our SIGINT handler, installed for one call; dropping it puts the previous handler back.
struct Watch {
    #[cfg(target_os = "linux")]
    previous: libc::sigaction,
}

extern "C" fn on_sigint(_signal: libc::c_int) {
    // An atomic store: async-signal-safe.
    interrupt::request();
}

impl Watch {
    /// `None` off the main thread, off Linux, and when SIGINT is ignored (then nothing changes).
    fn start() -> Option<Self> {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: gettid and getpid only read the calling thread's ids.
            let main_thread = unsafe { libc::gettid() == libc::getpid() };
            if !main_thread {
                return None;
            }
            interrupt::clear();
            // SAFETY: sigaction structs are plain data for which all-zero is valid; installing
            // a handler that only performs an atomic store is sound, and the previous one is
            // kept to be restored.
            unsafe {
                let mut ours: libc::sigaction = std::mem::zeroed();
                ours.sa_sigaction = on_sigint as *const () as libc::sighandler_t;
                libc::sigemptyset(&mut ours.sa_mask);
                let mut previous: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(libc::SIGINT, &ours, &mut previous) != 0 {
                    return None;
                }
                let watch = Watch { previous };
                if watch.previous.sa_sigaction == libc::SIG_IGN {
                    // Ctrl-C is ignored on purpose: keep it so (the drop restores SIG_IGN).
                    return None;
                }
                WATCHING.store(true, Ordering::Release);
                Some(watch)
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            None
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        // SAFETY: restores the handler that was installed before `start`.
        unsafe {
            libc::sigaction(libc::SIGINT, &self.previous, std::ptr::null_mut());
        }
        // Loops run outside a watch (plugin expressions) must not see this call's request.
        interrupt::clear();
        WATCHING.store(false, Ordering::Release);
    }
}

/// Asks every engine loop running on any thread to stop (`requested`), or forgets that request.
/// For Python code that runs engine calls on other threads (apple's ranking race): when Ctrl-C
/// reaches it while it waits for them, it asks them to stop, waits, and clears the request (a
/// call on another thread has no watch to do either).
#[pyfunction]
fn set_engine_stop(requested: bool) {
    if requested {
        interrupt::request();
    } else {
        interrupt::clear();
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(set_engine_stop, m)?)?;
    m.add_function(wrap_pyfunction!(chain_sigint, m)?)
}

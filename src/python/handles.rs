//! Handles: how a plugin expression finds its model. Every model object registers a weak
//! reference under a process-unique id; an expression's kwargs carry only that id (kwargs are
//! pickled for every batch; the weights are not). A handle whose model was dropped falls back
//! to the model's file when the model came from one or was saved to one ([`reload`]), else
//! fails with a clear error.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, RwLock, Weak};

use std::path::Path;

use crate::dos::PassiveAggressive;
use crate::error::PolyResult;
use crate::model::file::read_file;
use crate::model::{Model, OnlineModel};

/// A model shared between its Python object and the expressions scoring with it.
#[derive(Clone)]
pub enum Shared {
    Online(Arc<RwLock<OnlineModel>>),
    PassiveAggressive(Arc<RwLock<PassiveAggressive>>),
}

enum Registered {
    Online(Weak<RwLock<OnlineModel>>),
    PassiveAggressive(Weak<RwLock<PassiveAggressive>>),
}

static REGISTRY: LazyLock<Mutex<HashMap<u64, Registered>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));
static NEXT_HANDLE: AtomicU64 = AtomicU64::new(1);

/// A registered model's id; unregisters on drop.
pub struct Handle(pub u64);

impl Handle {
    pub fn register(model: &Shared) -> Self {
        let id = NEXT_HANDLE.fetch_add(1, Ordering::Relaxed);
        let weak = match model {
            Shared::Online(m) => Registered::Online(Arc::downgrade(m)),
            Shared::PassiveAggressive(m) => Registered::PassiveAggressive(Arc::downgrade(m)),
        };
        if let Ok(mut registry) = REGISTRY.lock() {
            registry.insert(id, weak);
        }
        Handle(id)
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        if let Ok(mut registry) = REGISTRY.lock() {
            registry.remove(&self.0);
        }
    }
}

/// A model file's path, checksum and the class of a one-against-all file.
type FileModel = (String, u32, usize);

/// Models read back from their files for expressions that outlived them, by (path, file
/// checksum, class): one copy per file in the process, however many queries use it.
static RELOADED: LazyLock<Mutex<HashMap<FileModel, Shared>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The model saved in `path` whose file checksum is `checksum` (the file's last 4 bytes), read
/// once per process: how an expression of a saved or loaded model scores after the model
/// object is gone, or in another process. A file changed since is refused. `head` picks one
/// class's model of a one-against-all file.
pub fn reload(path: &str, checksum: u32, head: usize) -> PolyResult<Shared> {
    let key = (path.to_owned(), checksum, head);
    if let Some(found) = RELOADED.lock().ok().and_then(|cached| cached.get(&key).cloned()) {
        return Ok(found);
    }
    let bytes = read_file(Path::new(path))?;
    if file_checksum(&bytes) != Some(checksum) {
        return crate::invalid!(
            "the model file {path:?} changed since the expression was built from it"
        );
    }
    let shared = shared_model(&bytes, head, path)?;
    if let Ok(mut cached) = RELOADED.lock() {
        cached.insert(key, shared.clone());
    }
    Ok(shared)
}

/// The model of the model-file bytes an expression carries as its last input (a model that
/// was never saved, scoring after its object is gone or in another process), read once per
/// process; `head` picks one class's model of a one-against-all model.
pub fn embedded(bytes: &[u8], head: usize) -> PolyResult<Shared> {
    let Some(checksum) = file_checksum(bytes) else {
        return crate::invalid!("the model bytes of this expression are truncated");
    };
    // Keyed by the file checksum and length: the file's own check rejects damaged bytes.
    let key = (format!("<embedded model of {} bytes>", bytes.len()), checksum, head);
    if let Some(found) = RELOADED.lock().ok().and_then(|cached| cached.get(&key).cloned()) {
        return Ok(found);
    }
    let shared = shared_model(bytes, head, &key.0)?;
    if let Ok(mut cached) = RELOADED.lock() {
        cached.insert(key, shared.clone());
    }
    Ok(shared)
}

/// A model file's checksum: its last 4 bytes, little-endian.
fn file_checksum(bytes: &[u8]) -> Option<u32> {
    let at = bytes.len().checked_sub(4)?;
    bytes[at..].try_into().ok().map(u32::from_le_bytes)
}

/// The model in model-file `bytes` (class `head` of a one-against-all model), to share.
fn shared_model(bytes: &[u8], head: usize, path: &str) -> PolyResult<Shared> {
    Ok(match Model::from_bytes(bytes)?.0 {
        Model::Online(m) => Shared::Online(Arc::new(RwLock::new(m))),
        Model::OneAgainstAll(mut heads) if head < heads.len() => {
            Shared::Online(Arc::new(RwLock::new(heads.swap_remove(head))))
        }
        Model::OneAgainstAll(heads) => {
            return crate::invalid!(
                "the model file {path:?} holds {} classes, not a class number {head}",
                heads.len()
            );
        }
        Model::PassiveAggressive(m) => Shared::PassiveAggressive(Arc::new(RwLock::new(m))),
    })
}

/// The live model of handle `id`.
pub fn lookup(id: u64) -> Option<Shared> {
    let registry = REGISTRY.lock().ok()?;
    match registry.get(&id)? {
        Registered::Online(m) => m.upgrade().map(Shared::Online),
        Registered::PassiveAggressive(m) => m.upgrade().map(Shared::PassiveAggressive),
    }
}

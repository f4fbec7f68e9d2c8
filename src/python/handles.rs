//! Handles: how a plugin expression finds its model. Every model object registers a weak
//! reference under a process-unique id; an expression's kwargs carry only that id (kwargs are
//! pickled for every batch; the weights are not). A handle whose model was dropped fails with a
//! clear error.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, RwLock, Weak};

use crate::dos::PaClassifier;
use crate::model::OnlineModel;

/// A model shared between its Python object and the expressions scoring with it.
#[derive(Clone)]
pub enum Shared {
    Online(Arc<RwLock<OnlineModel>>),
    PassiveAggressive(Arc<RwLock<PaClassifier>>),
}

enum Registered {
    Online(Weak<RwLock<OnlineModel>>),
    PassiveAggressive(Weak<RwLock<PaClassifier>>),
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

/// The live model of handle `id`.
pub fn lookup(id: u64) -> Option<Shared> {
    let registry = REGISTRY.lock().ok()?;
    match registry.get(&id)? {
        Registered::Online(m) => m.upgrade().map(Shared::Online),
        Registered::PassiveAggressive(m) => m.upgrade().map(Shared::PassiveAggressive),
    }
}

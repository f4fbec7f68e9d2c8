//! Bindings of distributed training's all-reduce: the average of models trained apart from one
//! starting model ([`crate::model::average`] for the online learner, [`crate::dos::average`]
//! for the DoS and passive-aggressive classifiers).

use std::sync::{Arc, RwLock};

use pyo3::prelude::*;

use super::dos::PyPassiveAggressive;
use super::error::{poisoned, py_error};
use super::guard::guarded;
use super::learner::PyLearner;
use crate::dos::PassiveAggressive;
use crate::error::PolyResult;
use crate::model::average::{average, Weighting};
use crate::model::OnlineModel;

/// `average(start, shards)` under the models' read locks, without the GIL and guarded.
fn averaged<M: Send + Sync>(
    py: Python<'_>,
    start: Option<Arc<RwLock<M>>>,
    shards: Vec<Arc<RwLock<M>>>,
    average: impl FnOnce(Option<&M>, &[&M]) -> PolyResult<M> + Send,
) -> PyResult<M> {
    py.detach(|| {
        guarded(|| {
            let start = start.as_ref().map(|s| s.read()).transpose().map_err(poisoned)?;
            let guards =
                shards.iter().map(|s| s.read()).collect::<Result<Vec<_>, _>>().map_err(poisoned)?;
            let models: Vec<&M> = guards.iter().map(|g| &**g).collect();
            average(start.as_deref(), &models).map_err(py_error)
        })
    })
}

/// The average of online learners `shards`, each trained for one round from `start` (`None`:
/// from scratch), weighted by `weighting` (`"examples"` or `"adaptive"`).
#[pyfunction]
#[pyo3(signature = (start, shards, weighting))]
fn average_learners(
    py: Python<'_>,
    start: Option<PyRef<'_, PyLearner>>,
    shards: Vec<PyRef<'_, PyLearner>>,
    weighting: &str,
) -> PyResult<PyLearner> {
    let weighting = Weighting::from_name(weighting).map_err(py_error)?;
    let start = start.map(|s| s.shared());
    let shards = shards.iter().map(|s| s.shared()).collect();
    let merged = averaged(py, start, shards, |start, models: &[&OnlineModel]| {
        average(start, models, weighting)
    })?;
    Ok(PyLearner::wrap(merged))
}

/// The aligned average of DoS / passive-aggressive classifiers `shards`, each trained for one
/// round from `start` (`None`: from the same fresh classifier).
#[pyfunction]
#[pyo3(signature = (start, shards))]
fn average_passive_aggressive(
    py: Python<'_>,
    start: Option<PyRef<'_, PyPassiveAggressive>>,
    shards: Vec<PyRef<'_, PyPassiveAggressive>>,
) -> PyResult<PyPassiveAggressive> {
    let start = start.map(|s| s.shared());
    let shards = shards.iter().map(|s| s.shared()).collect();
    let merged = averaged(py, start, shards, PassiveAggressive::average)?;
    Ok(PyPassiveAggressive::wrap(merged))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(average_learners, m)?)?;
    m.add_function(wrap_pyfunction!(average_passive_aggressive, m)?)?;
    Ok(())
}

//! The one way every estimator scores inside Polars queries: the `model_predict` plugin
//! expression, GIL-free, finding its model through a [`super::handles`] id. Outputs: `score`
//! and `probability` (online learners; Float64), `class_id` (passive-aggressive classifiers;
//! UInt32, the Python layer maps ids to labels). Null rows stay null. The estimators' own
//! `predict` calls the same functions.

use std::sync::RwLock;

use polars::prelude::*;
use pyo3_polars::derive::polars_expr;
use serde::Deserialize;

use super::arrow_io::to_polars_error;
use super::guard::guarded_expr;
use super::handles::{embedded, lookup, reload, Shared};
use super::input::{column_names, empty_rows, feature_series, with_nulls, Columns};
use crate::dos::PassiveAggressive;
use crate::learner::Batch;
use crate::model::OnlineModel;

fn poisoned<T>(_: T) -> PolarsError {
    polars_err!(ComputeError: "the model is unusable: a thread panicked while holding it")
}

fn output_name(series: &[Series]) -> PlSmallStr {
    series.first().map_or_else(|| PlSmallStr::from_static("prediction"), |s| s.name().clone())
}

/// Predictions of `series` (one sparse column per namespace); `output` is "score" or
/// "probability"; `parallel` spreads rows over threads.
pub fn online_predict(
    model: &RwLock<OnlineModel>,
    series: &[Series],
    output: &str,
    parallel: bool,
) -> PolarsResult<Series> {
    let learner = model.read().map_err(poisoned)?;
    let (columns, mut out) = over_rows(&learner, series, |batch| {
        let mut out = Vec::new();
        learner.predict_batch_with(batch, &mut out, parallel).map(|()| out)
    })?;
    if output == "probability" {
        for p in &mut out {
            *p = OnlineModel::probability(*p);
        }
    }
    Ok(with_nulls::<Float64Type>(&columns, output_name(series), out))
}

/// What each pair of the factorization's fields carries over the rows of `series`
/// ([`OnlineModel::ffm_pair_terms`]).
pub fn online_ffm_pair_terms(
    model: &RwLock<OnlineModel>,
    series: &[Series],
) -> PolarsResult<Vec<f64>> {
    let learner = model.read().map_err(poisoned)?;
    Ok(over_rows(&learner, series, |batch| learner.ffm_pair_terms(batch))?.1)
}

/// `run` on the batch of `series` (the model's feature columns, strings hashed with its bits);
/// the columns read, for their nulls.
fn over_rows<'s, T>(
    learner: &OnlineModel,
    series: &'s [Series],
    run: impl FnOnce(&Batch<'_>) -> crate::error::PolyResult<T>,
) -> PolarsResult<(Columns<'s>, T)> {
    let columns = Columns::hashing_text(series, 0, Some(learner.config().string_bits()))?;
    let offsets = [0i64];
    let empty = empty_rows(&offsets)?;
    let namespaces = columns.namespaces(&empty);
    let trained_on = &learner.config().namespaces;
    if namespaces.len() != trained_on.len() {
        polars_bail!(ComputeError: "the model was trained on {} feature column(s) ({:?}) but got {}", trained_on.len(), trained_on, namespaces.len());
    }
    let names = column_names(series);
    let batch = Batch::new(&namespaces, &[], None).map_err(to_polars_error)?.with_names(&names);
    let result = run(&batch).map_err(to_polars_error)?;
    Ok((columns, result))
}

/// Class ids of `series` (one sparse column), from the aligned averages where they exist when
/// `use_average` (else from the last models).
pub fn class_ids(
    model: &RwLock<PassiveAggressive>,
    series: &[Series],
    use_average: bool,
) -> PolarsResult<Series> {
    let columns = Columns::new(series, 0)?;
    let classifier = model.read().map_err(poisoned)?;
    let batch = columns.example_batch(classifier.n_features()).map_err(to_polars_error)?;
    let ids = classifier.predict(&batch, use_average).map_err(to_polars_error)?;
    Ok(with_nulls::<UInt32Type>(&columns, output_name(series), ids))
}

#[derive(Deserialize)]
struct PredictKwargs {
    handle: u64,
    output: String,
    /// The model's file and its checksum, when it came from one or was saved to one since it
    /// last learned (empty path: none).
    #[serde(default)]
    source: String,
    #[serde(default)]
    checksum: u32,
    /// The class whose model this is, in a one-against-all file.
    #[serde(default)]
    head: usize,
    /// The last input is the model file's bytes (a one-value Binary column).
    #[serde(default)]
    embedded: bool,
}

fn prediction_output(inputs: &[Field], kwargs: PredictKwargs) -> PolarsResult<Field> {
    let name =
        inputs.first().map_or_else(|| PlSmallStr::from_static("prediction"), |f| f.name().clone());
    let dtype = if kwargs.output == "class_id" { DataType::UInt32 } else { DataType::Float64 };
    Ok(Field::new(name, dtype))
}

/// The model's predictions of sparse feature columns, elementwise.
#[polars_expr(output_type_func_with_kwargs=prediction_output)]
fn model_predict(inputs: &[Series], kwargs: PredictKwargs) -> PolarsResult<Series> {
    guarded_expr("model_predict", inputs, || model_predict_body(inputs, kwargs))
}

fn model_predict_body(inputs: &[Series], kwargs: PredictKwargs) -> PolarsResult<Series> {
    let (inputs, model_bytes) = match inputs.split_last() {
        Some((last, features)) if kwargs.embedded => (features, Some(last)),
        _ => (inputs, None),
    };
    let model = match lookup(kwargs.handle) {
        Some(model) => model,
        None if !kwargs.source.is_empty() => {
            reload(&kwargs.source, kwargs.checksum, kwargs.head).map_err(to_polars_error)?
        }
        None if model_bytes.is_some() => {
            let bytes = model_bytes.and_then(|c| c.binary().ok()?.get(0));
            let Some(bytes) = bytes else {
                polars_bail!(ComputeError: "model_predict: the model bytes input is missing")
            };
            embedded(bytes, kwargs.head).map_err(to_polars_error)?
        }
        None => {
            polars_bail!(ComputeError: "the model of this expression is gone (its estimator was garbage-collected or refitted, or the query runs in another process) and it was never saved: keep the fitted estimator while the query runs, or save it (expressions of a saved or loaded model read it back from its file)")
        }
    };
    let series: Vec<Series> = inputs.iter().map(feature_series).collect::<PolarsResult<_>>()?;
    match (model, kwargs.output.as_str()) {
        // Inside a query Polars already spreads batches over its threads: stay on this one.
        (Shared::Online(m), output @ ("score" | "probability")) => {
            online_predict(&m, &series, output, false)
        }
        (Shared::PassiveAggressive(m), "class_id") => class_ids(&m, &series, true),
        (_, output) => {
            polars_bail!(InvalidOperation: "model_predict: output {output:?} does not fit this model")
        }
    }
}

//! Reading model files of format versions 1 and 2 (polars-poly 0.1 before the sectioned
//! container of [`super::file`]). They are read, never written.
//!
//! Payload, in order: config (`bits u32`, loss code `u8` — 0 squared, 1 logistic, 2 hinge,
//! 3 quantile — then `tau f64`, update-rule flags `u8`, `learning_rate`, `power_t`,
//! `initial_t`, `l1`, `l2` (`f64` each), namespace count `u32` and names); the expansion (kind
//! `u8`: 1 interactions as in [`crate::learner::stored`]; 2 apple: `alpha f64`, ranking code
//! `u8` — 0 magnitude, 1 SSM, 2 max-magnitude —, `fallback u8`, identity code `u8` — 0
//! canonical, 1 path —, `max_degree u8`, schedule code `u8` — 0 auto, 1 epochs, 2 doubling —,
//! `epochs u32`, `doubling_first u64`, `constant u8`, `window u64`, `budget u64`, planned
//! points (count `u32`, then `u64`s), then progress and parents as in
//! [`crate::apple::stored`] with a `u32` parent count); the training state as in
//! [`crate::learner::stored`]; the Python layer's metadata (`u32` length + UTF-8); the
//! weights as in [`crate::learner::stored`].
//!
//! The numeric codes are frozen: this table is the only place they live, and an unknown code
//! is refused.
//!
//! Version 1 had the same layout; its canonical apple monomials of degree >= 3 had other
//! weight slots (a hash chain over the sorted factors, see `crate::apple::monomial`). A
//! version-1 file is read when it cannot hold such weights (no apple, path identity, or no
//! parent of degree >= 2) and refused otherwise, with a message saying so.

use super::feature_set::FeatureSet;
use crate::apple::monomial::Identity;
use crate::apple::stored::{self as apple_stored, read_state_with};
use crate::apple::{Apple, AppleConfig, Ranking, ScheduleKind};
use crate::codec::{bad, ByteReader};
use crate::error::PolyResult;
use crate::learner::loss::{Hinge, Logistic, Quantile, Squared};
use crate::learner::stored::{read_names, read_rates, read_rule, read_training, read_weights};
use crate::learner::{Interactions, Learner, LearnerConfig, Loss};
use crate::versions;

const EXPANSION_INTERACTIONS: u8 = 1;
const EXPANSION_APPLE: u8 = 2;

/// Reads a version-1 or -2 payload (already checked by [`super::file`]); returns the learner
/// and the Python layer's metadata.
pub(crate) fn read(version: u32, payload: &[u8]) -> PolyResult<(Learner<FeatureSet>, String)> {
    let mut r = ByteReader::new(payload, super::file::HEADER, "payload");
    let config = read_config(&mut r)?;
    let expansion = match r.u8("expansion kind")? {
        EXPANSION_INTERACTIONS => {
            FeatureSet::Interactions(Interactions::read_section(&mut r, version)?)
        }
        EXPANSION_APPLE => {
            let apple = read_apple(&mut r)?;
            if version == versions::CHAINED_SLOTS && has_degree_3_weights(&apple) {
                return Err(bad(format!(
                    "format version {version} stored this apple model's monomials of degree >= 3 \
                     in weight slots this build no longer uses; retrain the model (this build \
                     writes version {})",
                    versions::CURRENT
                )));
            }
            FeatureSet::from(apple)
        }
        kind => return Err(bad(format!("unknown expansion kind {kind}"))),
    };
    let (state, labels, progress) = read_training(&mut r, config.initial_t)?;
    let metadata = r.string("metadata")?;
    let table = read_weights(&mut r, config.bits, config.rule)?;
    r.finish()?;
    let learner = Learner::from_parts(config, expansion, table, state, labels, progress, None)
        .map_err(|e| bad(e.to_string()))?;
    Ok((learner, metadata))
}

fn read_config(r: &mut ByteReader<'_>) -> PolyResult<LearnerConfig> {
    let bits = r.u32("bits")?;
    let loss_code = r.u8("loss")?;
    let tau = r.f64("quantile tau")?;
    let loss = match loss_code {
        0 => Loss::Squared(Squared),
        1 => Loss::Logistic(Logistic),
        2 => Loss::Hinge(Hinge),
        3 => Loss::Quantile(Quantile { tau }),
        other => return Err(bad(format!("unknown loss code {other}"))),
    };
    let rule = read_rule(r)?;
    let [eta0, power_t, initial_t, l1, l2] = read_rates(r)?;
    let namespaces = read_names(r)?;
    let config = LearnerConfig {
        bits,
        max_bits: None,
        loss,
        rule,
        eta0,
        power_t,
        initial_t,
        l1,
        l2,
        namespaces,
        field_scales: false,
        initial_weight: 0.0,
        ffm: None,
    };
    config.validate().map_err(|e| bad(e.to_string()))?;
    Ok(config)
}

fn read_apple(r: &mut ByteReader<'_>) -> PolyResult<Apple> {
    let alpha = r.f64("apple alpha")?;
    let ranking = match r.u8("apple heuristic")? {
        0 => Ranking::Magnitude,
        1 => Ranking::Ssm,
        2 => Ranking::MaxMagnitude,
        other => return Err(bad(format!("unknown apple heuristic code {other}"))),
    };
    let fallback = r.flag("apple fallback flag")?;
    let identity = match r.u8("apple identity")? {
        0 => Identity::Canonical,
        1 => Identity::Path,
        other => return Err(bad(format!("unknown apple identity code {other}"))),
    };
    let max_degree = r.u8("apple max_degree")?;
    let schedule = match r.u8("apple schedule")? {
        0 => ScheduleKind::Auto,
        1 => ScheduleKind::Epochs,
        2 => ScheduleKind::Doubling,
        other => return Err(bad(format!("unknown apple schedule code {other}"))),
    };
    let named = AppleConfig {
        alpha,
        ranking,
        fallback,
        identity,
        max_degree,
        schedule,
        // Models of this format never caught up.
        catch_up: 0,
        ..AppleConfig::default()
    };
    let config = apple_stored::read_config_tail(r, named)?;
    let n_planned = r.u32("apple planned count")?;
    let planned =
        (0..n_planned).map(|_| r.u64("apple planned point")).collect::<PolyResult<Vec<_>>>()?;
    read_state_with(r, config, planned, |r| Ok(r.u32("apple parent count")? as usize))
}

/// Whether a canonical apple model can have trained monomials of degree >= 3: those are children
/// of parents of degree >= 2.
fn has_degree_3_weights(apple: &Apple) -> bool {
    apple.config().identity == Identity::Canonical
        && apple.config().max_degree >= 3
        && apple.parents().iter().any(|p| p.monomial.degree() >= 2)
}

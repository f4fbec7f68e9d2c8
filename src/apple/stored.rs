//! apple's stored bytes: its section of the model file ([`crate::model::file`]), little-endian
//! ([`crate::codec`]):
//!
//! * config: from format version 10 on, [`AppleConfig`]'s serde form as JSON
//!   ([`ByteWriter::options`]). Before, `alpha f64`, ranking name, `fallback u8`, identity name, `max_degree u8`, schedule
//!   name, `epochs u32`, `doubling_first u64`, `constant u8`, `window u64`, `budget u64`, from
//!   format version 7 on `catch_up u64` (names
//!   are `u32` length + UTF-8, from the registries [`Ranking::NAMES`], [`Identity::NAMES`] and
//!   [`ScheduleKind::NAMES`]: a name the build does not know is refused, never read as another);
//! * planned expansion points (count `u64`, then `u64`s); progress `learned u64`,
//!   `nonzeros f64`, `expansions u32`;
//! * parents in the order they were added (count `u64`, then per parent `expansion u32`,
//!   identity `key u64`, `degree u8` and its `degree` factor hashes `u64`, increasing).

use super::adaptive::{Apple, AppleConfig, AppleProgress};
use super::monomial::{Identity, Monomial};
use super::parents::Parent;
use super::ranking::Ranking;
use super::schedule::ScheduleKind;
use crate::codec::{bad, ByteReader, ByteWriter};
use crate::error::PolyResult;
use crate::versions;

/// Most planned points or parents a stored model may list (bounds what a corrupted count can
/// allocate; real models have a handful of points and at most millions of parents).
const MAX_STORED: usize = 1 << 32;

impl Apple {
    /// Writes apple's section (see the module docs).
    pub fn write_section(&self, w: &mut ByteWriter) {
        w.options(self.config());
        self.write_schedule_and_state(w);
    }

    /// The section in the layout of format version 9 (positional options), to test the reader
    /// of older files.
    #[cfg(test)]
    pub(crate) fn write_section_v9(&self, w: &mut ByteWriter) {
        let c = self.config();
        w.f64(c.alpha);
        w.str(c.ranking.name());
        w.flag(c.fallback);
        w.str(c.identity.name());
        w.u8(c.max_degree);
        w.str(c.schedule.name());
        w.u32(c.epochs);
        w.u64(c.doubling_first);
        w.flag(c.constant);
        w.u64(c.window as u64);
        w.u64(c.budget as u64);
        w.u64(c.catch_up as u64);
        self.write_schedule_and_state(w);
    }

    fn write_schedule_and_state(&self, w: &mut ByteWriter) {
        let planned = &self.schedule().planned;
        w.len(planned.len());
        for &point in planned {
            w.u64(point);
        }
        write_state(w, self);
    }

    /// Reads apple's section of a file of format `version`.
    pub fn read_section(r: &mut ByteReader<'_>, version: u32) -> PolyResult<Self> {
        let config = if version >= versions::SELF_DESCRIBING {
            r.options("apple options")?
        } else {
            read_config(r, version)?
        };
        let n_planned = r.len("apple planned count", MAX_STORED.min(r.remaining() / 8))?;
        let planned =
            (0..n_planned).map(|_| r.u64("apple planned point")).collect::<PolyResult<Vec<_>>>()?;
        read_state(r, config, planned)
    }
}

/// The config of a file of format version 9 or older (see the module docs).
fn read_config(r: &mut ByteReader<'_>, version: u32) -> PolyResult<AppleConfig> {
    let named = |r: &mut ByteReader<'_>, what: &str| r.string(what);
    let alpha = r.f64("apple alpha")?;
    let ranking = Ranking::parse(&named(r, "apple ranking")?).map_err(|e| bad(e.to_string()))?;
    let fallback = r.flag("apple fallback flag")?;
    let identity = Identity::parse(&named(r, "apple identity")?).map_err(|e| bad(e.to_string()))?;
    let max_degree = r.u8("apple max_degree")?;
    let schedule =
        ScheduleKind::parse(&named(r, "apple schedule")?).map_err(|e| bad(e.to_string()))?;
    let named = AppleConfig {
        alpha,
        ranking,
        fallback,
        identity,
        max_degree,
        schedule,
        ..AppleConfig::default()
    };
    let config = read_config_tail(r, named)?;
    let catch_up = if version >= versions::APPLE_CATCH_UP {
        usize::try_from(r.u64("apple catch_up")?).map_err(|_| bad("apple catch_up too large"))?
    } else {
        0
    };
    Ok(AppleConfig { catch_up, ..config })
}

/// The settings after the named ones (epochs, doubling_first, constant, window, budget), laid
/// out alike in every format version: `config` with them read in. Shared with the older reader.
pub(crate) fn read_config_tail(
    r: &mut ByteReader<'_>,
    config: AppleConfig,
) -> PolyResult<AppleConfig> {
    Ok(AppleConfig {
        epochs: r.u32("apple epochs")?,
        doubling_first: r.u64("apple doubling_first")?,
        constant: r.flag("apple constant flag")?,
        window: usize::try_from(r.u64("apple window")?)
            .map_err(|_| bad("apple window too large"))?,
        budget: usize::try_from(r.u64("apple budget")?)
            .map_err(|_| bad("apple budget too large"))?,
        ..config
    })
}

/// Progress and parents (see the module docs); shared with the version-2 reader.
pub(crate) fn write_state(w: &mut ByteWriter, apple: &Apple) {
    let progress = apple.progress();
    w.u64(progress.learned);
    w.f64(progress.nonzeros);
    w.u32(progress.expansions);
    w.len(apple.parents().len());
    for parent in apple.parents() {
        w.u32(parent.expansion);
        w.u64(parent.key);
        w.u8(parent.monomial.degree() as u8);
        for &h in parent.monomial.factors() {
            w.u64(h);
        }
    }
}

/// Reads progress and parents and assembles the apple state; `parent_count` reads the count
/// (its width differs between format versions).
pub(crate) fn read_state_with(
    r: &mut ByteReader<'_>,
    config: AppleConfig,
    planned: Vec<u64>,
    parent_count: impl FnOnce(&mut ByteReader<'_>) -> PolyResult<usize>,
) -> PolyResult<Apple> {
    let progress = AppleProgress {
        learned: r.u64("apple learned")?,
        nonzeros: r.f64("apple nonzeros")?,
        expansions: r.u32("apple expansions")?,
    };
    let n_parents = parent_count(r)?;
    // Each parent takes at least 13 bytes: never reserve more than the section can hold.
    let mut parents = Vec::with_capacity(n_parents.min(r.remaining() / 13));
    for _ in 0..n_parents {
        let expansion = r.u32("apple parent expansion")?;
        let key = r.u64("apple parent key")?;
        let degree = r.u8("apple parent degree")?;
        let factors =
            (0..degree).map(|_| r.u64("apple parent factor")).collect::<PolyResult<Vec<_>>>()?;
        if factors.windows(2).any(|w| w[0] > w[1]) {
            return Err(bad("apple parent factors are not sorted"));
        }
        parents.push(Parent { monomial: Monomial::new(factors), expansion, key });
    }
    Apple::from_parts(config, planned, parents, progress).map_err(|e| bad(e.to_string()))
}

fn read_state(r: &mut ByteReader<'_>, config: AppleConfig, planned: Vec<u64>) -> PolyResult<Apple> {
    read_state_with(r, config, planned, |r| r.len("apple parent count", MAX_STORED))
}

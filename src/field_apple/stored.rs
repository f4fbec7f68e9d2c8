//! Field-level apple's section of the model file: its options (from format version 10 on,
//! [`FieldAppleConfig`]'s serde form as JSON, [`ByteWriter::options`]; before, `max_crosses u64`,
//! `budget f64`, `check_every u64`, `z f64`, `shadow_bits u32`, `constant u8`, from format
//! version 6 on `catch_up u64`), then the crosses in the order they were added (each its
//! count of fields `u64` (from format version 11 on; two before), its field numbers and the
//! learned-example count at which it joined), then the learned-example count. Shadows are
//! not stored (see the module docs of [`super`]).

use super::{Cross, FieldApple, FieldAppleConfig, MAX_FIELDS};
use crate::codec::{bad, ByteReader, ByteWriter};
use crate::error::PolyResult;
use crate::versions;

/// Most crosses a file may list (far above any `max_crosses` in use; guards allocation).
const MAX_STORED_CROSSES: usize = 1 << 16;

impl FieldApple {
    /// Writes the section (see the module docs).
    pub fn write_section(&self, w: &mut ByteWriter) {
        w.options(self.config());
        self.write_crosses(w);
    }

    /// The section in the layout of format version 9 (positional options), to test the reader
    /// of older files.
    #[cfg(test)]
    pub(crate) fn write_section_v9(&self, w: &mut ByteWriter) {
        let c = self.config();
        w.u64(c.max_crosses as u64);
        w.f64(c.budget);
        w.u64(c.check_every);
        w.f64(c.z);
        w.u32(c.shadow_bits);
        w.flag(c.constant);
        w.u64(c.catch_up as u64);
        self.write_pair_crosses(w);
    }

    fn write_crosses(&self, w: &mut ByteWriter) {
        w.len(self.crosses().len());
        for cross in self.crosses() {
            w.len(cross.fields.len());
            for &field in &cross.fields {
                w.u32(field as u32);
            }
            w.u64(cross.added_at);
        }
        w.u64(self.learned());
    }

    /// The crosses in the layout before format version 11 (two fields each), to test the
    /// reader of older files.
    #[cfg(test)]
    pub(crate) fn write_pair_crosses(&self, w: &mut ByteWriter) {
        w.len(self.crosses().len());
        for cross in self.crosses() {
            w.u32(cross.fields[0] as u32);
            w.u32(cross.fields[1] as u32);
            w.u64(cross.added_at);
        }
        w.u64(self.learned());
    }

    /// Reads the section of a file of format `version`.
    pub fn read_section(r: &mut ByteReader<'_>, version: u32) -> PolyResult<Self> {
        let config = if version >= versions::SELF_DESCRIBING {
            r.options("field_apple options")?
        } else {
            read_config(r, version)?
        };
        let n = r.len("field_apple cross count", MAX_STORED_CROSSES.min(r.remaining() / 16))?;
        let mut crosses = Vec::with_capacity(n);
        for _ in 0..n {
            let n_fields = if version >= versions::LONGER_CROSSES {
                r.len("field_apple cross length", MAX_FIELDS)?
            } else {
                2
            };
            let fields = (0..n_fields)
                .map(|_| r.u32("field_apple cross field").map(|f| f as usize))
                .collect::<PolyResult<Vec<_>>>()?;
            crosses.push(Cross { fields, added_at: r.u64("field_apple cross time")? });
        }
        let learned = r.u64("field_apple learned count")?;
        FieldApple::from_parts(config, crosses, learned).map_err(|e| bad(e.to_string()))
    }
}

/// The options of a file of format version 9 or older (see the module docs; before format 6 a
/// cross did not catch up).
fn read_config(r: &mut ByteReader<'_>, version: u32) -> PolyResult<FieldAppleConfig> {
    let max_crosses = usize::try_from(r.u64("field_apple max_crosses")?)
        .map_err(|_| bad("field_apple max_crosses too large"))?;
    Ok(FieldAppleConfig {
        max_crosses,
        budget: r.f64("field_apple budget")?,
        check_every: r.u64("field_apple check_every")?,
        z: r.f64("field_apple z")?,
        shadow_bits: r.u32("field_apple shadow_bits")?,
        constant: r.flag("field_apple constant flag")?,
        catch_up: if version >= versions::FIELD_CATCH_UP {
            usize::try_from(r.u64("field_apple catch_up")?)
                .map_err(|_| bad("field_apple catch_up too large"))?
        } else {
            0
        },
        max_fields: 2,
    })
}

//! Vowpal Wabbit's readable model (`--readable_model`; `--invert_hash` adds the names): its
//! header, the run's state when the model keeps it (`save_resume`, vw's default, `:1`), then
//! one line per nonzero weight slot in slot order, `slot:w` or, keeping state, `slot:w G N`
//! (the values the update rule keeps), each name first with `--invert_hash`
//! (`f^word:slot:...`). Numbers are printed as C++ streams print them (`%g`, 6 digits).
//!
//! The header's `Version` names this program and its `Checksum` hashes the header's text:
//! vw's hashes its own binary model file, which this program does not write.

use std::collections::HashMap;
use std::io::{self, Write};

use super::report::{SharedData, VwReport};
use crate::hashing::murmur3_32;
use crate::learner::{Expansion, Learner};

/// What the header says besides the model: the writer, the model-shaping flags as vw spells
/// them (` --quadratic ab --noconstant`), the reader's n-grams and skips.
#[derive(Clone, Debug, Default)]
pub struct ReadableHeader {
    pub version: String,
    pub options: String,
    pub ngram: Vec<String>,
    pub skips: Vec<String>,
}

/// Writes `learner` in vw's readable layout; `report`: the run's shared data (`None`: no run,
/// all zero); `save_resume`: with the state; `names`: slot -> feature name (`--invert_hash`).
pub fn write_readable<E: Expansion>(
    out: &mut dyn Write,
    learner: &Learner<E>,
    report: Option<&VwReport>,
    header: &ReadableHeader,
    save_resume: bool,
    names: Option<&HashMap<u32, String>>,
) -> io::Result<()> {
    let config = learner.config();
    let range = learner.label_range();
    let mut head = String::new();
    head.push_str(&format!("Version {}\nId \n", header.version));
    head.push_str(&format!("Min label:{}\nMax label:{}\n", g(range.min), g(range.max)));
    head.push_str(&format!("bits:{}\nlda:0\n", config.bits));
    let list = |items: &[String]| items.iter().map(|item| format!("{item} ")).collect::<String>();
    head.push_str(&format!("{} ngram:{}\n", header.ngram.len(), list(&header.ngram)));
    head.push_str(&format!("{} skip:{}\n", header.skips.len(), list(&header.skips)));
    head.push_str(&format!("options:{}\n", header.options));
    out.write_all(head.as_bytes())?;
    writeln!(out, "Checksum: {}", murmur3_32(head.as_bytes(), 0))?;
    writeln!(out, ":{}", u8::from(save_resume))?;
    if save_resume {
        write_state(out, learner, report)?;
    }
    let weights = learner.weights();
    let rule = config.rule;
    let initial_t = config.initial_t as f32;
    let mut line = String::new();
    for slot in 0..weights.n_slots() as u32 {
        let w = if save_resume {
            weights.weight(slot)
        } else {
            // Without the state, the plain weights (vw syncs its lazy L1/L2 first).
            learner.effective_weight(slot) as f32
        };
        if w == 0.0 {
            continue;
        }
        line.clear();
        if let Some(name) = names.and_then(|names| names.get(&slot)) {
            line.push_str(name);
            line.push(':');
        }
        line.push_str(&format!("{slot}:{}", g(f64::from(w))));
        if save_resume {
            if rule.adaptive {
                let sum = weights.adaptive_sum(slot) + initial_t;
                line.push_str(&format!(" {}", g(f64::from(sum))));
            }
            if rule.normalized {
                line.push_str(&format!(" {}", g(f64::from(weights.normalizer(slot)))));
            }
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// vw's `save_load_online_state_gd` lines, before the weights.
fn write_state<E: Expansion>(
    out: &mut dyn Write,
    learner: &Learner<E>,
    report: Option<&VwReport>,
) -> io::Result<()> {
    let config = learner.config();
    let state = learner.state();
    let range = learner.label_range();
    let shared = report.map_or_else(SharedData::no_run, VwReport::shared_data);
    let lines = [
        ("initial_t", g(config.initial_t)),
        ("norm normalizer", g(state.normalized_sum_norm_x)),
        ("t", g(state.t + config.initial_t)),
        ("sum_loss", g(shared.sum_loss)),
        ("sum_loss_since_last_dump", g(shared.sum_loss_since_last_dump)),
        ("dump_interval", g(shared.dump_interval)),
        ("min_label", g(range.min)),
        ("max_label", g(range.max)),
        ("weighted_labeled_examples", g(shared.weighted_labeled_examples)),
        ("weighted_labels", g(shared.weighted_labels)),
        ("weighted_unlabeled_examples", g(shared.weighted_unlabeled_examples)),
        ("example_number", shared.example_number.to_string()),
        ("total_features", shared.total_features.to_string()),
        ("total_weight", g(state.total_weight)),
        ("sd::oec.weighted_labeled_examples", g(shared.old_weighted_labeled_examples)),
        ("current_pass", shared.current_pass.to_string()),
        ("l1_state", g(state.gravity)),
        ("l2_state", g(state.contraction)),
    ];
    for (name, value) in lines {
        writeln!(out, "{name} {value}")?;
    }
    Ok(())
}

/// `x` as a C++ stream prints a number by default (`%g`: 6 significant digits, trailing zeros
/// dropped, scientific below 1e-4 and from 1e6).
pub fn g(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let scientific = format!("{x:.5e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if !(-4..6).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        return format!("{}e{sign}{:02}", trim_zeros(mantissa), exponent.abs());
    }
    let decimals = (5 - exponent).max(0) as usize;
    trim_zeros(&format!("{x:.decimals$}")).to_owned()
}

fn trim_zeros(number: &str) -> &str {
    if number.contains('.') {
        number.trim_end_matches('0').trim_end_matches('.')
    } else {
        number
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_cpp_streams_print_them() {
        let cases = [
            (0.0, "0"),
            (1.0, "1"),
            (25.0, "25"),
            (0.73251, "0.73251"),
            (189.59834, "189.598"),
            (0.0650571234, "0.0650571"),
            (-0.024526, "-0.024526"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (123456.7, "123457"),
            (1234567.0, "1.23457e+06"),
            (999999.7, "1e+06"),
            (-3.5e-7, "-3.5e-07"),
            (12.7545, "12.7545"),
        ];
        for (x, expected) in cases {
            assert_eq!(g(x), expected, "{x}");
        }
    }
}

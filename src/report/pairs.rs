//! PQC against classical at each NIST level: the pairs of algorithms
//! compared (same kind, level, operation, host and threads), the aspects
//! compared (time per operation, bytes), and the headlines they give.

use crate::report::headline::Finding;
use crate::report::headline::Group;
use crate::report::model::{level_bucket, Dataset, Entry, SrcRef};

use crate::analyse::estimate::{self, Ratio};
use crate::core::catalog::{Kind, Operation};
use crate::core::units;
use crate::report::change::{self, Verdict, NOISE_THRESHOLD};
use crate::report::families::Class;
use crate::report::table::natural_cmp;
use std::collections::{BTreeMap, BTreeSet};

/// What is compared in a PQC-against-classical pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Aspect {
    /// `KeyGen`, `Exchange`, `Public key`, ...
    pub name: String,
    /// PQC's value (milliseconds or bytes).
    pub pqc: f64,
    /// The classical value.
    pub classical: f64,
    /// Time (lower is better) or bytes (lower is better too).
    pub is_time: bool,
    /// Records used.
    pub sources: Vec<SrcRef>,
    /// What the sum covers, for `Exchange`.
    pub note: Option<String>,
    /// PQC's throughput over the classical one's with its 95% interval
    /// ([`estimate::ratio`]); `None` for sizes and sums.
    pub ratio: Option<Ratio>,
}

impl Aspect {
    /// Ratio ≥ 1 and its word from PQC's side: faster/slower or
    /// smaller/larger, `on par`, or `unclear`. A time is on par only when
    /// the change interval from both records' runs lies within the noise
    /// threshold, and unclear when it straddles it; without runs on both
    /// sides (and for bytes) the ratio decides, on par below 5%.
    pub fn verdict(&self) -> (f64, &'static str, bool) {
        let r = self.classical / self.pqc;
        let pqc_wins = r >= 1.0;
        let mag = if pqc_wins { r } else { 1.0 / r };
        let from_runs = self
            .interval()
            .map(|_| change::verdict(self.ratio.and_then(|r| r.change().1), NOISE_THRESHOLD));
        let word = match (self.is_time, pqc_wins) {
            _ if from_runs == Some(Verdict::Same) => "on par",
            _ if from_runs == Some(Verdict::Unclear) => "unclear",
            _ if from_runs.is_none() && mag < 1.05 => "on par",
            (true, true) => "faster",
            (true, false) => "slower",
            (false, true) => "smaller",
            (false, false) => "larger",
        };
        (mag, word, pqc_wins)
    }

    /// The 95% interval of the ratio `verdict` gives (the winner's speed
    /// over the loser's), for a time with runs on both sides.
    pub fn interval(&self) -> Option<[f64; 2]> {
        if !self.is_time {
            return None;
        }
        let r = self.ratio?;
        let pqc_wins = self.classical >= self.pqc;
        if pqc_wins { r } else { r.inverted() }.ci95
    }

    /// What backs the verdict: the interval, or that there is none.
    pub fn basis(&self) -> Option<String> {
        match self.interval() {
            Some(ci) => Some(change::ratio_interval_text(self.verdict().0, ci)),
            // A whole exchange sums each side's operations: a ratio of
            // sums, with no interval of its own.
            None if self.is_time && self.ratio.is_none() && self.sources.len() > 2 => {
                Some(SUMS.into())
            }
            None if self.is_time => Some(
                self.ratio
                    .and_then(|r| r.basis())
                    .unwrap_or(change::NO_RUNS)
                    .into(),
            ),
            None => None,
        }
    }

    /// The ratio as printed (at its interval's decimals where it has one).
    pub fn figure(&self) -> String {
        change::ratio_text(self.verdict().0, self.interval().is_some())
    }

    /// `7.6× faster (95% CI 7.4×–7.8×)`.
    pub fn words(&self) -> String {
        let (mag, word, pqc_wins) = self.verdict();
        let basis = self.basis().map(|b| format!(" ({b})")).unwrap_or_default();
        let _ = mag;
        let figure = self.figure();
        match word {
            "on par" => format!("on par at {figure}{basis}"),
            "unclear" => format!(
                "unclear: {figure} {}{basis}",
                if pqc_wins { "faster" } else { "slower" }
            ),
            _ => format!("{figure} {word}{basis}"),
        }
    }

    /// The two figures: `74.0 µs vs 560 µs`.
    pub fn figures(&self) -> String {
        if self.is_time {
            format!(
                "{} vs {}",
                units::time_ms(self.pqc),
                units::time_ms(self.classical)
            )
        } else {
            format!(
                "{} vs {}",
                units::bytes(self.pqc as usize),
                units::bytes(self.classical as usize)
            )
        }
    }
}

/// What a whole exchange's ratio stands on: each side's operations'
/// medians summed.
pub const SUMS: &str = "ratio of summed medians, no interval";

/// A PQC algorithm against a classical one of the same NIST level.
#[derive(Debug, Clone)]
pub struct Pair {
    /// KEM or signature.
    pub kind: Kind,
    /// Level column: 1, 3 or 5.
    pub level: u8,
    /// The PQC algorithm.
    pub pqc: String,
    /// Its NIST category.
    pub pqc_level: u8,
    /// The classical algorithm.
    pub classical: String,
    /// Its category of equivalent strength.
    pub classical_level: u8,
    /// Host both ran on.
    pub host: String,
    /// Threads both ran with.
    pub threads: usize,
    /// Time and size aspects.
    pub aspects: Vec<Aspect>,
}

/// Preferred level for a headline pair: 3 (the common deployment choice),
/// then 1, then 5.
pub(crate) const LEVEL_PREFERENCE: [u8; 3] = [3, 1, 5];

/// Order of classical baselines within a level: the ones the standards
/// bodies compare against first.
pub(crate) fn baseline_rank(name: &str) -> usize {
    let n = name.to_ascii_uppercase();
    let order = [
        "ECDH", "X25519", "X448", "ECDSA", "RSA-PSS", "PSS", "RSA", "ED25519", "ED448",
    ];
    order
        .iter()
        .position(|m| n.contains(m))
        .unwrap_or(order.len())
}

/// The record to quote for (host, algorithm, operation, threads) on a CPU:
/// ok throughput, liboqs before others, the latest file last wins.
pub(crate) fn pick_cpu<'a>(
    ds: &Dataset<'a>,
    host: &str,
    alg: &str,
    op: Operation,
    threads: usize,
) -> Option<Entry<'a>> {
    ds.entries
        .iter()
        .filter(|e| {
            !e.is_gpu()
                && e.host() == host
                && e.rec.algorithm == alg
                && e.rec.operation == op
                && e.rec.threads == threads
                && e.ok_throughput().is_some()
        })
        .max_by(|a, b| {
            let pa = (a.rec.provider == "liboqs") as u8;
            let pb = (b.rec.provider == "liboqs") as u8;
            pa.cmp(&pb)
                .then_with(|| a.run.metadata.date.cmp(&b.run.metadata.date))
                .then_with(|| a.src.cmp(&b.src))
        })
        .copied()
}

/// Every PQC-against-classical pair on every host.
pub(crate) fn pairs(ds: &Dataset) -> Vec<Pair> {
    let mut out = vec![];
    let hosts: BTreeSet<&str> = ds.entries.iter().map(|e| e.host()).collect();
    for host in hosts {
        let on_host: Vec<&Entry> = ds
            .entries
            .iter()
            .filter(|e| e.host() == host && !e.is_gpu() && e.ok_throughput().is_some())
            .collect();
        for (kind, fam) in [(Kind::Kem, "ML-KEM"), (Kind::Signature, "ML-DSA")] {
            // (algorithm, level, threads set)
            let algs = |class: Class, want_fam: Option<&str>| {
                let mut m: BTreeMap<String, (u8, BTreeSet<usize>)> = BTreeMap::new();
                for e in on_host.iter().filter(|e| {
                    e.class == class
                        && e.rec.kind == kind
                        && want_fam.is_none_or(|f| e.rec.family == f)
                }) {
                    if let Some(l) = e.rec.nist_level {
                        m.entry(e.rec.algorithm.clone())
                            .or_insert((l, BTreeSet::new()))
                            .1
                            .insert(e.rec.threads);
                    }
                }
                m
            };
            let pqc = algs(Class::Pqc, Some(fam));
            let classical = algs(Class::Classical, None);
            for (p_alg, (p_level, p_threads)) in &pqc {
                let bucket = level_bucket(Some(*p_level));
                let mut cands: Vec<(&String, &(u8, BTreeSet<usize>))> = classical
                    .iter()
                    .filter(|(_, (l, _))| level_bucket(Some(*l)) == bucket)
                    .collect();
                cands.sort_by(|a, b| {
                    baseline_rank(a.0)
                        .cmp(&baseline_rank(b.0))
                        .then_with(|| natural_cmp(a.0, b.0))
                });
                for (c_alg, (c_level, c_threads)) in cands {
                    let common: Vec<usize> = p_threads.intersection(c_threads).copied().collect();
                    let Some(&threads) = common.iter().find(|t| **t == 1).or(common.first()) else {
                        continue;
                    };
                    if let Some(pair) =
                        make_pair(ds, host, kind, p_alg, *p_level, c_alg, *c_level, threads)
                    {
                        out.push(pair);
                    }
                }
            }
        }
    }
    out.sort_by(|a, b| {
        (a.kind == Kind::Signature, a.level, &a.host)
            .cmp(&(b.kind == Kind::Signature, b.level, &b.host))
            .then_with(|| baseline_rank(&a.classical).cmp(&baseline_rank(&b.classical)))
            .then_with(|| natural_cmp(&a.classical, &b.classical))
    });
    out
}

/// `pqc` against `classical` on one host and thread count: times of the
/// operations both measured, then sizes; `None` when no operation is
/// measured by both.
#[allow(clippy::too_many_arguments)]
pub(crate) fn make_pair(
    ds: &Dataset,
    host: &str,
    kind: Kind,
    pqc: &str,
    pqc_level: u8,
    classical: &str,
    classical_level: u8,
    threads: usize,
) -> Option<Pair> {
    let mut aspects = time_aspects(ds, host, kind, pqc, classical, threads)?;
    if aspects.is_empty() {
        return None;
    }
    aspects.extend(size_aspects(ds, kind, pqc, classical));
    Some(Pair {
        kind,
        level: level_bucket(Some(pqc_level)).unwrap_or(pqc_level),
        pqc: pqc.into(),
        pqc_level,
        classical: classical.into(),
        classical_level,
        host: host.into(),
        threads,
        aspects,
    })
}

/// Median time per operation of each operation both measured (`None` when
/// a measured one has no time), and for a KEM the sum over a whole exchange.
fn time_aspects(
    ds: &Dataset,
    host: &str,
    kind: Kind,
    pqc: &str,
    classical: &str,
    threads: usize,
) -> Option<Vec<Aspect>> {
    let mut aspects = vec![];
    let mut sum = (0.0, 0.0, vec![], vec![], vec![]);
    for op in Operation::ALL {
        let p = pick_cpu(ds, host, pqc, op, threads);
        let c = pick_cpu(ds, host, classical, op, threads);
        if let Some(p) = p {
            sum.0 += p.ms()?;
            sum.2.push(p.src);
            sum.4.push(op.cli_name());
        }
        if let Some(c) = c {
            sum.1 += c.ms()?;
            sum.3.push(c.src);
        }
        if let (Some(p), Some(c)) = (p, c) {
            let signs = matches!(op, Operation::Sign | Operation::Verify);
            aspects.push(Aspect {
                name: op.label().to_string(),
                pqc: p.ms()?,
                classical: c.ms()?,
                is_time: true,
                sources: vec![p.src, c.src],
                note: signs
                    .then(|| message_note(p.rec.message_bytes, c.rec.message_bytes))
                    .flatten(),
                ratio: estimate::ratio(p.rec, c.rec),
            });
        }
    }
    if aspects.is_empty() {
        return Some(aspects);
    }
    if kind == Kind::Kem && sum.2.len() > 1 && !sum.3.is_empty() {
        let mut sources = sum.2.clone();
        sources.extend(sum.3.iter().copied());
        aspects.push(Aspect {
            name: "Exchange".into(),
            pqc: sum.0,
            classical: sum.1,
            is_time: true,
            sources,
            note: Some(format!("sum of {} on each side", sum.4.join(" + "))),
            ratio: None,
        });
    }
    Some(aspects)
}

/// Key, ciphertext and signature sizes of both, from the first record of
/// each that states them.
fn size_aspects(ds: &Dataset, kind: Kind, pqc: &str, classical: &str) -> Vec<Aspect> {
    let mut aspects = vec![];
    let sizes_of = |alg: &str| {
        ds.entries
            .iter()
            .find(|e| e.rec.algorithm == alg && e.rec.sizes.public_key_bytes > 0)
            .map(|e| (e.rec.sizes, e.src))
    };
    if let (Some((ps, psrc)), Some((cs, csrc))) = (sizes_of(pqc), sizes_of(classical)) {
        let src = vec![psrc, csrc];
        let mut size = |name: &str, a: usize, b: usize| {
            if a > 0 && b > 0 {
                aspects.push(Aspect {
                    name: name.into(),
                    pqc: a as f64,
                    classical: b as f64,
                    is_time: false,
                    sources: src.clone(),
                    note: None,
                    ratio: None,
                });
            }
        };
        size("Public key", ps.public_key_bytes, cs.public_key_bytes);
        match kind {
            Kind::Kem => {
                // A Diffie-Hellman reply is the peer's public key.
                let pct = ps.ciphertext_bytes.unwrap_or(0);
                let cct = cs.ciphertext_bytes.unwrap_or(cs.public_key_bytes);
                size("Ciphertext", pct, cct);
                size(
                    "Wire (public key + ciphertext)",
                    ps.public_key_bytes.saturating_add(pct),
                    cs.public_key_bytes.saturating_add(cct),
                );
            }
            Kind::Signature => {
                let psig = ps.signature_bytes.unwrap_or(0);
                let csig = cs.signature_bytes.unwrap_or(0);
                size("Signature", psig, csig);
                if psig > 0 && csig > 0 {
                    size(
                        "Signature + public key",
                        ps.public_key_bytes.saturating_add(psig),
                        cs.public_key_bytes.saturating_add(csig),
                    );
                }
            }
        }
    }
    aspects
}

/// The message a signing or verifying figure is for: `at a 1,024 B
/// message`, or both sizes when the two records differ.
pub fn message_note(pqc: Option<usize>, classical: Option<usize>) -> Option<String> {
    match (pqc, classical) {
        (Some(a), Some(b)) if a == b => Some(format!("at a {} message", units::bytes(a))),
        (Some(a), Some(b)) => Some(format!(
            "messages of {} and {}",
            units::bytes(a),
            units::bytes(b)
        )),
        (Some(a), None) | (None, Some(a)) => Some(format!("at a {} message", units::bytes(a))),
        (None, None) => None,
    }
}

/// Verb phrase for a headline about an aspect.
pub(crate) fn phrase(aspect: &str) -> &'static str {
    match aspect {
        "Exchange" => "completes a key exchange",
        "KeyGen" => "generates a key pair",
        "Encaps" => "encapsulates",
        "Decaps" => "decapsulates",
        "Sign" => "signs",
        "Verify" => "verifies",
        _ => "",
    }
}

/// The headlines on PQC against classical: per kind, the aspects that
/// matter most, each from the most-preferred NIST level that has it.
pub(crate) fn pair_findings(pairs: &[Pair]) -> Vec<Finding> {
    let mut out = vec![];
    let headline_aspects: [(Kind, &[&str]); 2] = [
        (
            Kind::Kem,
            &["Exchange", "Encaps", "Wire (public key + ciphertext)"],
        ),
        (
            Kind::Signature,
            &["Sign", "Verify", "KeyGen", "Signature + public key"],
        ),
    ];
    for (kind, names) in headline_aspects {
        let mut used_exchange = false;
        for name in names {
            if *name == "Encaps" && used_exchange {
                continue;
            }
            let chosen = LEVEL_PREFERENCE.iter().find_map(|lvl| {
                pairs
                    .iter()
                    .filter(|p| p.kind == kind && p.level == *lvl)
                    .find_map(|p| p.aspects.iter().find(|a| a.name == *name).map(|a| (p, a)))
            });
            let Some((p, a)) = chosen else { continue };
            used_exchange |= *name == "Exchange";
            out.push(pair_finding(p, a, name));
        }
    }
    out
}

/// The headline of one aspect of a pair: which side wins, by how much.
fn pair_finding(p: &Pair, a: &Aspect, name: &str) -> Finding {
    let (_, word, wins) = a.verdict();
    let figure = a.figure();
    let sentence = if a.is_time {
        format!(
            "{} {} {} {}.",
            p.pqc,
            phrase(name),
            change::ratio_phrase(&figure, word),
            p.classical
        )
    } else {
        format!(
            "{}'s {} is {} {}'s.",
            p.pqc,
            name.to_lowercase(),
            change::ratio_phrase(&figure, word),
            p.classical
        )
    };
    let detail = format!(
        "{} vs {} · NIST level {} · {}{}{}",
        p.pqc,
        p.classical,
        p.level,
        a.figures(),
        a.note
            .as_ref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default(),
        if a.is_time {
            format!(
                " · {} thread{} on {}",
                p.threads,
                if p.threads == 1 { "" } else { "s" },
                p.host
            )
        } else {
            String::new()
        }
    );
    Finding {
        group: if wins && !matches!(word, "on par" | "unclear") {
            Group::PqcFaster
        } else {
            Group::PqcCosts
        },
        figure,
        word: word.into(),
        sentence,
        detail,
        interval: a.basis(),
        ratio: match (a.ratio, a.sources.as_slice()) {
            (Some(r), [pqc, classical]) if a.is_time => {
                Some(crate::report::table::Marked::ahead(*pqc, *classical, r))
            }
            _ => None,
        },
        kat: None,
        sources: a.sources.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_words() {
        let a = Aspect {
            name: "Sign".into(),
            pqc: 0.1,
            classical: 0.76,
            is_time: true,
            sources: vec![],
            note: None,
            ratio: None,
        };
        assert_eq!(
            a.words(),
            "7.6× faster (ratio of medians, no runs to compare)"
        );
        let b = Aspect {
            name: "Public key".into(),
            pqc: 1184.0,
            classical: 97.0,
            is_time: false,
            sources: vec![],
            note: None,
            ratio: None,
        };
        assert_eq!(b.words(), "12× larger");
        assert_eq!(b.figures(), "1,184 B vs 97 B");
    }

    /// A time aspect between PQC and classical records whose runs took
    /// `pqc_ms` and `classical_ms` per operation, each run jittered by a
    /// fixed pattern of relative size `jitter`.
    fn timed(pqc_ms: f64, classical_ms: f64, jitter: f64) -> Aspect {
        let runs = |ms: f64| -> Vec<f64> {
            (0..20)
                .map(|i| {
                    let j = ((i * 7) % 20) as f64 / 19.0 - 0.5;
                    1000.0 / (ms * (1.0 + jitter * j))
                })
                .collect()
        };
        Aspect {
            name: "Encaps".into(),
            pqc: pqc_ms,
            classical: classical_ms,
            is_time: true,
            sources: vec![],
            note: None,
            ratio: estimate::ratio_of(
                &estimate::of_rates(&runs(pqc_ms)).unwrap(),
                &estimate::of_rates(&runs(classical_ms)).unwrap(),
            ),
        }
    }

    #[test]
    fn on_par_comes_from_the_change_interval_not_the_ratio() {
        // 2% apart with quiet runs: a real difference, though the ratio
        // alone (under 5%) would call it on par.
        let apart = timed(0.098, 0.1, 0.002);
        let (mag, word, wins) = apart.verdict();
        assert_eq!((word, wins), ("faster", true), "{}", apart.words());
        assert!((mag - 0.1 / 0.098).abs() < 1e-9);
        let [low, high] = apart.interval().unwrap();
        assert!(low > 1.0 && low <= mag && mag <= high, "{low} {high}");
        assert!(apart.words().contains("95% CI"), "{}", apart.words());
        let slower = timed(0.1, 0.098, 0.002);
        assert_eq!(slower.verdict().1, "slower", "{}", slower.words());
        // The same distribution on both sides is on par.
        let same = timed(0.1, 0.1, 0.002);
        assert_eq!(same.verdict().1, "on par", "{}", same.words());
        // Runs too noisy to place the change inside or outside +-1%.
        let noisy = timed(0.1, 0.1, 0.2);
        assert_eq!(noisy.verdict().1, "unclear", "{}", noisy.words());
    }

    #[test]
    fn baselines_in_order() {
        assert!(baseline_rank("ECDH-P256") < baseline_rank("X25519"));
        assert!(baseline_rank("ECDSA-P256") < baseline_rank("RSA-3072-PSS"));
        assert!(baseline_rank("RSA-3072-PSS") < baseline_rank("Ed25519"));
    }
}

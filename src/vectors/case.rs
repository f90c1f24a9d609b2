//! The vector runner's types: the [`Subject`] an implementation is, a
//! [`Case`] and its [`Outcome`], a [`Group`] and its tally.

use crate::core::catalog::Algorithm;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use crate::backend::native_gpu::host_checked::DsaForm;

/// Why an operation cannot be asked of an implementation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotApplicable(pub String);

/// What one operation gave: `Ok(Ok(value))`, `Ok(Err(refusal))`, or
/// `Err(NotApplicable)`.
pub type Op<T> = Result<Result<T, String>, NotApplicable>;

/// The start of a [`NotApplicable`] reason that is really an error of the
/// implementation (a device that failed): the case counts as failed.
pub const DEVICE_ERROR: &str = "device error: ";

/// "Not applicable" with the reason `why`.
pub fn na<T>(why: &str) -> Op<T> {
    Err(NotApplicable(why.to_string()))
}

/// One implementation under test. Every operation defaults to "not
/// applicable"; an implementation overrides the ones it exposes.
pub trait Subject {
    /// Name in the table.
    fn label(&self) -> String;
    /// ML-KEM.KeyGen_internal from d ‖ z (64 bytes): (ek, dk).
    fn kem_keygen(&mut self, _alg: Algorithm, _seed: &[u8]) -> Op<(Vec<u8>, Vec<u8>)> {
        na("no key generation from a given seed")
    }
    /// ML-KEM.Encaps_internal(ek, m): (c, K).
    fn kem_encaps(&mut self, _alg: Algorithm, _ek: &[u8], _m: &[u8]) -> Op<(Vec<u8>, Vec<u8>)> {
        na("no encapsulation with a given m")
    }
    /// ML-KEM.Decaps(dk, c): K.
    fn kem_decaps(&mut self, _alg: Algorithm, _dk: &[u8], _c: &[u8]) -> Op<Vec<u8>> {
        na("no decapsulation with a given key")
    }
    /// ML-DSA.KeyGen_internal from xi (32 bytes): (pk, sk).
    fn dsa_keygen(&mut self, _alg: Algorithm, _seed: &[u8]) -> Op<(Vec<u8>, Vec<u8>)> {
        na("no key generation from a given seed")
    }
    /// Signs in `form` with `rnd` (32 bytes; zeros: deterministic).
    fn dsa_sign(&mut self, _alg: Algorithm, form: DsaForm, _in: &SignInput) -> Op<Vec<u8>> {
        na(&format!("no {} signing with a given rnd", form_name(form)))
    }
    /// Verifies in `form`.
    fn dsa_verify(&mut self, _alg: Algorithm, form: DsaForm, _in: &VerifyInput) -> Op<bool> {
        na(&format!("no {} verification", form_name(form)))
    }
    /// One round trip between the subject and the reference with keys and
    /// randomness drawn afresh (for an implementation that draws its own
    /// randomness, whose outputs no vector can give): the first thing that
    /// did not come back as it should.
    fn round_trip(&mut self, _alg: Algorithm) -> Op<()> {
        na("no round trip")
    }
}

/// The outcome of a round trip ([`Subject::round_trip`]).
pub fn judge_round_trip(got: Op<()>) -> Outcome {
    match got {
        Err(NotApplicable(why)) if why.starts_with(DEVICE_ERROR) => Outcome::Fail(why),
        Err(NotApplicable(why)) => Outcome::NotApplicable(why),
        Ok(Ok(())) => Outcome::Pass,
        Ok(Err(why)) => Outcome::Fail(why),
    }
}

/// A signing case's inputs.
#[derive(Debug, Clone)]
pub struct SignInput {
    /// Expanded secret key.
    pub sk: Vec<u8>,
    /// M, M′ or μ by form.
    pub msg: Vec<u8>,
    /// Context (pure form only).
    pub ctx: Vec<u8>,
    /// Randomness, 32 bytes (zeros: deterministic).
    pub rnd: Vec<u8>,
}

/// A verification case's inputs.
#[derive(Debug, Clone)]
pub struct VerifyInput {
    /// Public key.
    pub pk: Vec<u8>,
    /// M, M′ or μ by form.
    pub msg: Vec<u8>,
    /// Context (pure form only).
    pub ctx: Vec<u8>,
    /// Signature.
    pub sig: Vec<u8>,
}

/// The name of a signing form in the table.
pub fn form_name(form: DsaForm) -> &'static str {
    match form {
        DsaForm::Pure => "pure ML-DSA",
        DsaForm::Internal => "internal (M')",
        DsaForm::ExternalMu => "external-mu",
    }
}

/// What one case came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// As the vector says.
    Pass,
    /// Not as the vector says: what differed.
    Fail(String),
    /// Not asked: why.
    NotApplicable(String),
}

/// How a case runs on a subject.
pub type RunCase = Box<dyn Fn(&mut dyn Subject) -> Outcome + Send + Sync>;

/// One case, ready to run on any subject.
pub struct Case {
    /// The vector's own id (tcId).
    pub id: u64,
    /// Whether the vector expects a refusal or a rejection.
    pub invalid: bool,
    /// Runs the case.
    pub run: RunCase,
}

/// A test group: its source, name, algorithm and cases.
pub struct Group {
    /// "ACVP" or "Wycheproof".
    pub source: &'static str,
    /// The group's name in the table.
    pub name: String,
    /// Its parameter set.
    pub alg: Algorithm,
    /// Its cases, in the vector file's order.
    pub cases: Vec<Case>,
}

/// Per-group result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct GroupTally {
    /// "ACVP" or "Wycheproof".
    pub source: String,
    /// Group name.
    pub group: String,
    /// Cases in the group.
    pub cases: usize,
    /// Cases asked of the subject (all, or the sample).
    pub ran: usize,
    /// Passed.
    pub passed: usize,
    /// Failed.
    pub failed: usize,
    /// Not applicable, by reason.
    pub not_applicable: BTreeMap<String, usize>,
    /// The first failures: tcId and what differed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<String>,
}

impl GroupTally {
    /// Cases not applicable, all reasons together.
    pub fn na(&self) -> usize {
        self.not_applicable.values().sum()
    }
}

/// Which cases of each group to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// Every case.
    Full,
    /// The first `n` of each group, the invalid cases first.
    Sample(usize),
}

impl Plan {
    /// How reports name it: "every case" or the sample.
    pub fn describe(self) -> String {
        match self {
            Plan::Full => "every case".to_string(),
            Plan::Sample(n) => format!("sample: the first {n} of each group, invalid cases first"),
        }
    }

    /// How many of a group's `cases` it asks.
    pub fn asks(self, cases: usize) -> usize {
        match self {
            Plan::Full => cases,
            Plan::Sample(n) => cases.min(n.max(1)),
        }
    }
}

/// Whether every byte of `b` is zero: how a batched kernel (ours, or a
/// plugin's) says it refused one item's input without failing the batch.
pub fn all_zero(b: &[u8]) -> bool {
    b.iter().all(|&x| x == 0)
}

/// Every group's tally for one subject.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    /// The subject's label.
    pub subject: String,
    /// "full" or "sample of N per group, invalid first".
    pub plan: String,
    /// Per group.
    pub groups: Vec<GroupTally>,
}

impl Report {
    /// (cases asked, passed, failed, not applicable) over every group.
    pub fn totals(&self) -> (usize, usize, usize, usize) {
        self.groups.iter().fold((0, 0, 0, 0), |t, g| {
            (t.0 + g.ran, t.1 + g.passed, t.2 + g.failed, t.3 + g.na())
        })
    }
}

/// The outcome of an operation whose value must equal `want` (a valid
/// case) or which must be refused (`want` = None, an invalid case).
pub fn judge<T: PartialEq + std::fmt::Debug>(got: Op<T>, want: Option<&T>) -> Outcome {
    match (got, want) {
        (Err(NotApplicable(why)), _) if why.starts_with(DEVICE_ERROR) => Outcome::Fail(why),
        (Err(NotApplicable(why)), _) => Outcome::NotApplicable(why),
        (Ok(Ok(v)), Some(w)) if &v == w => Outcome::Pass,
        (Ok(Ok(_)), Some(_)) => Outcome::Fail("output differs from the vector's".into()),
        (Ok(Err(why)), Some(_)) => Outcome::Fail(format!("refused a valid case: {why}")),
        (Ok(Ok(_)), None) => Outcome::Fail("accepted an invalid case".into()),
        (Ok(Err(_)), None) => Outcome::Pass,
    }
}

/// The outcome of a verification expected to say `want`; a refusal counts
/// as "invalid".
pub fn judge_verify(got: Op<bool>, want: bool) -> Outcome {
    match got {
        Err(NotApplicable(why)) if why.starts_with(DEVICE_ERROR) => Outcome::Fail(why),
        Err(NotApplicable(why)) => Outcome::NotApplicable(why),
        Ok(Ok(v)) if v == want => Outcome::Pass,
        Ok(Err(_)) if !want => Outcome::Pass,
        Ok(Ok(v)) => Outcome::Fail(format!("verified as {v}, the vector says {want}")),
        Ok(Err(why)) => Outcome::Fail(format!("refused a valid signature: {why}")),
    }
}

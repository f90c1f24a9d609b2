//! Measuring: the [`builder`] that turns a measuring command's settings
//! into a plan (the backends opened and prepared on their devices), the
//! [`runner`] (warm-up, gate, timed runs) for one (backend, algorithm,
//! operation), the [`session`] that runs a whole plan and writes the run
//! file, every GPU of a node at once ([`multi_device`]), fresh processes
//! per measurement ([`fresh_process`]), signals and progress.

pub mod budget;
pub mod builder;
pub mod fresh_process;
pub mod hold;
pub mod multi_device;
pub mod plan;
pub mod progress;
pub mod runner;
pub mod session;
pub mod signals;
pub mod views;

//! What measured records say beyond themselves: totals over devices and
//! ranks ([`aggregate`]), the floor of the measurement ([`floor`]), the saturation and break-even batches of a
//! throughput curve ([`saturation`]), and what a hybrid costs over its PQC
//! part ([`hybrid`]). Pure functions over the schema.

pub mod aggregate;
pub mod estimate;
pub mod floor;
pub mod hybrid;
pub mod saturation;

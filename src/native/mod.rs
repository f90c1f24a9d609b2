//! Our own FIPS 203 / FIPS 204 implementation (`cuda/native/`), written once
//! for the host and the GPU.

pub mod host;

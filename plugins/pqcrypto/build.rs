//! Hands the plugin the exact versions of pqcrypto-mlkem and pqcrypto-mldsa
//! (and of pqcrypto-internals, whose randombytes PQClean's code calls) that
//! Cargo.lock pins, so the version string records carry names them, and
//! whether the crates compiled PQClean's AVX2 code in (cfgs
//! `pqclean_kem_avx2`, `pqclean_dsa_avx2`).

fn main() {
    println!("cargo:rustc-check-cfg=cfg(pqclean_kem_avx2)");
    println!("cargo:rustc-check-cfg=cfg(pqclean_dsa_avx2)");
    // The crates' build scripts' rule, with their default `avx2` feature:
    // x86-64, not Windows (ML-KEM: nor macOS).
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if arch == "x86_64" && os != "windows" {
        println!("cargo:rustc-cfg=pqclean_dsa_avx2");
        if os != "macos" {
            println!("cargo:rustc-cfg=pqclean_kem_avx2");
        }
    }
    let lock_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.lock");
    println!("cargo:rerun-if-changed={lock_path}");
    let lock = std::fs::read_to_string(lock_path).expect("plugins/Cargo.lock");
    for (name, var) in [
        ("pqcrypto-mlkem", "PQCRYPTO_MLKEM_VERSION"),
        ("pqcrypto-mldsa", "PQCRYPTO_MLDSA_VERSION"),
        ("pqcrypto-internals", "PQCRYPTO_INTERNALS_VERSION"),
    ] {
        let v = pqcprof_plugin_abi::locked_version(&lock, name)
            .unwrap_or_else(|| panic!("{name} is not in plugins/Cargo.lock"));
        println!("cargo:rustc-env={var}={v}");
    }
}

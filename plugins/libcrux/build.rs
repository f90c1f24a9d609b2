//! Hands the plugin the exact versions of libcrux-ml-kem and libcrux-ml-dsa
//! that Cargo.lock pins, so the version string records carry names them,
//! and whether libcrux's AVX2 code is compiled in (cfg `libcrux_simd256`).

/// libcrux's own build scripts' rule (libcrux-ml-kem, -ml-dsa, -sha3 and
/// -intrinsics alike): the AVX2 code is compiled in on x86-64, or where
/// LIBCRUX_ENABLE_SIMD256 asks for it, unless LIBCRUX_DISABLE_SIMD256 says no.
fn libcrux_compiles_avx2() -> bool {
    let set = |key: &str| {
        println!("cargo:rerun-if-env-changed={key}");
        matches!(std::env::var(key).as_deref(), Ok("1" | "y" | "Y"))
    };
    let x86_64 = std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64");
    let enable = set("LIBCRUX_ENABLE_SIMD256");
    let disable = set("LIBCRUX_DISABLE_SIMD256");
    (x86_64 || enable) && !disable
}

fn main() {
    println!("cargo:rustc-check-cfg=cfg(libcrux_simd256)");
    if libcrux_compiles_avx2() {
        println!("cargo:rustc-cfg=libcrux_simd256");
    }
    let lock_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.lock");
    println!("cargo:rerun-if-changed={lock_path}");
    let lock = std::fs::read_to_string(lock_path).expect("plugins/Cargo.lock");
    for (name, var) in [
        ("libcrux-ml-kem", "LIBCRUX_ML_KEM_VERSION"),
        ("libcrux-ml-dsa", "LIBCRUX_ML_DSA_VERSION"),
    ] {
        let v = pqcprof_plugin_abi::locked_version(&lock, name)
            .unwrap_or_else(|| panic!("{name} is not in plugins/Cargo.lock"));
        println!("cargo:rustc-env={var}={v}");
    }
}

//! Hands the plugin the exact versions of aws-lc-rs and aws-lc-sys that
//! Cargo.lock pins, so the version string records carry names them, and
//! whether AWS-LC's x86-64 backends are compiled in (cfg `awslc_x86_64_native`).

fn main() {
    // aws-lc-sys compiles AWS-LC's x86-64 assembly (mlkem-native's and
    // mldsa-native's AVX2 backends among it) on Linux and macOS unless
    // AWS_LC_SYS_NO_ASM is set (debug builds only); AWS-LC then picks them
    // at run time from its CPU capability test.
    println!("cargo:rustc-check-cfg=cfg(awslc_x86_64_native)");
    println!("cargo:rerun-if-env-changed=AWS_LC_SYS_NO_ASM");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let no_asm = std::env::var("AWS_LC_SYS_NO_ASM").is_ok_and(|v| v == "1");
    if arch == "x86_64" && (os == "linux" || os == "macos") && !no_asm {
        println!("cargo:rustc-cfg=awslc_x86_64_native");
    }
    let lock_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.lock");
    println!("cargo:rerun-if-changed={lock_path}");
    let lock = std::fs::read_to_string(lock_path).expect("plugins/Cargo.lock");
    for (name, var) in [
        ("aws-lc-rs", "AWS_LC_RS_VERSION"),
        ("aws-lc-sys", "AWS_LC_SYS_VERSION"),
    ] {
        let v = pqcprof_plugin_abi::locked_version(&lock, name)
            .unwrap_or_else(|| panic!("{name} is not in plugins/Cargo.lock"));
        println!("cargo:rustc-env={var}={v}");
    }
}

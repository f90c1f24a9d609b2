//! Hands the plugin the exact versions of fips203 and fips204
//! that Cargo.lock pins, so the version string records carry names them.

fn main() {
    let lock_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.lock");
    println!("cargo:rerun-if-changed={lock_path}");
    let lock = std::fs::read_to_string(lock_path).expect("plugins/Cargo.lock");
    for (name, var) in [
        ("fips203", "FIPS203_VERSION"),
        ("fips204", "FIPS204_VERSION"),
    ] {
        let v = pqcprof_plugin_abi::locked_version(&lock, name)
            .unwrap_or_else(|| panic!("{name} is not in plugins/Cargo.lock"));
        println!("cargo:rustc-env={var}={v}");
    }
}

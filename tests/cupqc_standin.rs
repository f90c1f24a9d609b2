//! The cuPQC path. Built normally (no SDK), it checks that the build has no
//! cupqc backend and that `check` and `bench` say how to enable it. Built
//! with `CUPQC_HOME=tests/fixtures/cupqc-standin` and nvcc reachable (as
//! `.ci/run` does), it checks the whole path through build.rs: the shim was
//! compiled and device-linked by nvcc, the bindgen functions answer with the
//! descriptors' sizes (equal to the catalogue's FIPS sizes for all six
//! parameter sets), `check` reports the stand-in, and the backend refuses to
//! benchmark it. With a GPU present, the stand-in kernels are also launched.
//!
//! `PQCPROF_EXPECT_CUPQC=standin|none` makes the build mode itself a test,
//! so CI cannot pass by silently building without the backend.

mod common;

use assert_cmd::Command;
use predicates::prelude::*;

fn pqcprof() -> Command {
    Command::cargo_bin("pqcprof").unwrap()
}

#[test]
fn the_build_mode_is_the_one_expected() {
    let b = pqcprof::backend::cupqc::build_info();
    match std::env::var("PQCPROF_EXPECT_CUPQC").as_deref() {
        Ok("standin") => assert!(
            b.built && b.standin,
            "PQCPROF_EXPECT_CUPQC=standin but this build has no cuPQC stand-in: {b:?}"
        ),
        Ok("none") => assert!(!b.built, "PQCPROF_EXPECT_CUPQC=none but: {b:?}"),
        Ok(other) => panic!("PQCPROF_EXPECT_CUPQC={other}: use standin or none"),
        Err(_) => {}
    }
    assert_eq!(b.built, cfg!(pqcprof_cupqc));
    assert_eq!(b.standin, cfg!(pqcprof_cupqc_standin));
    assert!(b
        .note
        .starts_with(if b.built { "built" } else { "not built" }));
}

#[test]
fn bench_with_cupqc_is_skipped_with_the_reason() {
    let d = tempfile::tempdir().unwrap();
    let reason = if cfg!(pqcprof_cupqc_standin) {
        "stand-in"
    } else if cfg!(pqcprof_cupqc) {
        // A real SDK build: whatever this machine lacks is said instead.
        ""
    } else {
        "scripts/fetch-cupqc"
    };
    let out = pqcprof()
        .args(common::words(
            "bench --backend cupqc --alg ML-KEM-512 --runs 2 --out",
        ))
        .arg(d.path())
        .output()
        .unwrap();
    if cfg!(pqcprof_cupqc) && !cfg!(pqcprof_cupqc_standin) {
        common::skipped(
            "bench_with_cupqc_is_skipped_with_the_reason",
            "built against a real cuPQC SDK: what this machine lacks decides the outcome",
        );
        return;
    }
    // 4: nothing could be measured (3 is for a failed gate).
    assert_eq!(out.status.code(), Some(4));
    let run_file = std::fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("run-"))
        .expect("a run file");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_file).unwrap()).unwrap();
    let recs = run["records"].as_array().unwrap();
    assert_eq!(recs.len(), 3);
    for r in recs {
        assert_eq!(r["backend"], "cupqc");
        assert_eq!(r["status"], "skipped");
        assert!(r["reason"].as_str().unwrap().contains(reason), "{r}");
    }
    // Nothing reaches the cuPQC-shaped files.
    assert!(!d.path().join("cupqc").join("mlkem_results.json").exists());
}

/// `offload --backend cupqc` with `request`, which must end with exit 1
/// before anything runs (no run file): what it printed on stderr.
#[cfg(any(not(pqcprof_cupqc), pqcprof_cupqc_standin))]
fn offload_refused(request: &str) -> String {
    let d = tempfile::tempdir().unwrap();
    let out = pqcprof()
        .args(common::words(&format!(
            "offload --backend cupqc {request} --rate 100 --window 0.2 --out"
        )))
        .arg(d.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(common::files(d.path(), "run-", ".json").is_empty());
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[cfg(not(pqcprof_cupqc))]
mod without_the_sdk {
    use super::*;

    /// The vectors on cuPQC need a build with its SDK: the message says so
    /// and how to get one, exit 1.
    #[test]
    fn vectors_on_cupqc_say_how_to_enable_it() {
        pqcprof()
            .args(["check", "--vectors", "--backend", "cupqc"])
            .assert()
            .code(1)
            .stderr(predicate::str::contains(
                "--backend cupqc: this build has no cupqc backend",
            ))
            .stderr(predicate::str::contains("scripts/fetch-cupqc"));
    }

    #[test]
    fn offload_with_cupqc_says_how_to_enable_it_and_writes_nothing() {
        let stderr = offload_refused("--alg ML-DSA-65 --op sign");
        common::assert_has(&stderr, &["not part of this build", "scripts/fetch-cupqc"]);
    }

    #[test]
    fn check_says_the_backend_is_not_built_and_how_to_enable_it() {
        let out = pqcprof()
            .arg("check")
            .assert()
            .success()
            .stdout(predicate::str::contains("cuPQC build   not built"))
            .stdout(
                predicate::str::is_match(r"cupqc\s+not ready\s+not part of this build").unwrap(),
            )
            .stdout(predicate::str::contains("scripts/fetch-cupqc"))
            .stdout(predicate::str::contains("nvcc"))
            .get_output()
            .stdout
            .clone();
        // The advice is given once, on the backend's line (the build's own
        // note carries a shorter copy of it, for its cargo warning).
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches("to enable it").count(), 1, "{text}");
        assert_eq!(text.matches("scripts/fetch-cupqc").count(), 1, "{text}");
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with("cupqc "))
            .expect("a cupqc backend line");
        assert!(line.contains("to enable it"), "{line}");
        let out = pqcprof().args(["check", "--json"]).output().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["cupqc_build"]["built"], false);
        let cupqc = v["backends"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["backend"] == "cupqc")
            .unwrap();
        assert_eq!(cupqc["ready"], false);
    }
}

#[cfg(pqcprof_cupqc)]
mod with_the_shim {
    use super::*;
    use pqcprof::backend::cupqc::device::{self, Cupqc};
    use pqcprof::backend::cupqc::{self as shim, Batch, Role};
    use pqcprof::core::catalog::{Algorithm, Kind};

    #[test]
    fn sizes_come_from_the_descriptors_and_equal_fips() {
        for alg in Algorithm::ALL {
            let s = alg.sizes();
            for op in alg.operations() {
                let i = shim::op_info(alg, op).unwrap();
                assert_eq!(i.public_key_size as usize, s.public_key_bytes, "{alg} {op}");
                assert_eq!(i.secret_key_size as usize, s.secret_key_bytes, "{alg} {op}");
                match alg.kind() {
                    Kind::Kem => {
                        assert_eq!(Some(i.ciphertext_size as usize), s.ciphertext_bytes);
                        assert_eq!(Some(i.shared_secret_size as usize), s.shared_secret_bytes);
                        assert_eq!(i.signature_size, 0, "a KEM has no signature_size");
                    }
                    Kind::Signature => {
                        assert_eq!(Some(i.signature_size as usize), s.signature_bytes);
                        assert_eq!(i.ciphertext_size, 0);
                    }
                }
                assert!(i.block_threads > 0, "{alg} {op}: BlockDim");
                if op == pqcprof::core::catalog::Operation::KeyGen {
                    assert!(i.entropy_size > 0, "{alg} keygen takes entropy");
                }
            }
        }
        device::check_sizes().unwrap();
        assert!(shim::runtime_version() >= 12000);
        assert!(shim::status_string(-3).contains("no such buffer"));
    }

    /// Known answers: workspace, shared memory and entropy bytes per
    /// operation as NVIDIA's cuPQC 0.4.1 headers give them
    /// (include/cupqc/database/ml_kem.cuh and ml_dsa.cuh; the same in 0.2.0
    /// and 0.3.0), and the default block of 128 threads
    /// (detail/pqc_execution.hpp). The stand-in must match them, or memory
    /// sizing is not exercised as with the real SDK.
    #[cfg(pqcprof_cupqc_standin)]
    #[test]
    fn standin_memory_sizes_are_nvidias() {
        use pqcprof::core::catalog::Operation::*;
        #[rustfmt::skip]
        let nvidia = [
            (Algorithm::MlKem512, KeyGen, 2048, 2880, 64), (Algorithm::MlKem768, KeyGen, 4608, 3904, 64),
            (Algorithm::MlKem1024, KeyGen, 8192, 5184, 64), (Algorithm::MlKem512, Encaps, 3584, 3616, 32),
            (Algorithm::MlKem768, Encaps, 6656, 5152, 32), (Algorithm::MlKem1024, Encaps, 10752, 6688, 32),
            (Algorithm::MlKem512, Decaps, 4544, 3680, 0), (Algorithm::MlKem768, Decaps, 7936, 5216, 0),
            (Algorithm::MlKem1024, Decaps, 12512, 6752, 0), (Algorithm::MlDsa44, KeyGen, 16384, 8320, 32),
            (Algorithm::MlDsa65, KeyGen, 30720, 12416, 32), (Algorithm::MlDsa87, KeyGen, 57344, 16512, 32),
            (Algorithm::MlDsa44, Sign, 40960, 21632, 32), (Algorithm::MlDsa65, Sign, 65536, 29824, 32),
            (Algorithm::MlDsa87, Sign, 104448, 40064, 32), (Algorithm::MlDsa44, Verify, 16384, 13408, 0),
            (Algorithm::MlDsa65, Verify, 30720, 18544, 0), (Algorithm::MlDsa87, Verify, 57344, 24704, 0),
        ];
        for (alg, op, workspace, smem, entropy) in nvidia {
            let i = shim::op_info(alg, op).unwrap();
            assert_eq!(
                (
                    i.workspace_size,
                    i.shared_memory_size,
                    i.entropy_size,
                    i.block_threads
                ),
                (workspace, smem, entropy, 128),
                "{alg} {op}"
            );
        }
    }

    /// `offload --backend cupqc` on a stand-in build refuses before
    /// anything runs, as `bench` does, and writes no run file.
    #[cfg(pqcprof_cupqc_standin)]
    #[test]
    fn offload_on_the_standin_is_refused_before_anything_runs() {
        let stderr = offload_refused("--alg ML-KEM-768 --op encaps");
        common::assert_has(&stderr, &["STAND-IN", "refuses"]);
    }

    /// The stand-in computes no FIPS outputs: the vector runner refuses it
    /// as the backend does, exit 1, nothing run.
    #[cfg(pqcprof_cupqc_standin)]
    #[test]
    fn vectors_on_the_standin_are_refused() {
        pqcprof()
            .args(["check", "--vectors", "--backend", "cupqc"])
            .assert()
            .code(1)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains("--backend cupqc:"))
            .stderr(predicate::str::contains("STAND-IN"));
    }

    #[cfg(pqcprof_cupqc_standin)]
    #[test]
    fn the_standin_is_marked_and_refused() {
        assert!(shim::is_standin(), "the shim must report the stand-in");
        let e = device::refuse_standin().unwrap_err().to_string();
        assert!(e.contains("STAND-IN") && e.contains("refuses"), "{e}");
        let e = Cupqc::new(0).err().expect("refused").to_string();
        assert!(e.contains("STAND-IN"), "{e}");
        pqcprof()
            .arg("check")
            .assert()
            .success()
            .stdout(predicate::str::contains("STAND-IN"))
            .stdout(
                predicate::str::is_match(r"cupqc\s+not ready\s+this build has the cuPQC stand-in")
                    .unwrap(),
            );
        let out = pqcprof().args(["check", "--json"]).output().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["cupqc_build"]["built"], true);
        assert_eq!(v["cupqc_build"]["standin"], true);
        assert!(v["cupqc_build"]["nvcc"].as_str().unwrap().contains("nvcc"));
    }

    /// The architectures of the images in the first fatbinary of an object
    /// file: `(is_ptx, arch)` per entry (fatbin element headers: kind 1 PTX,
    /// 2 ELF; the architecture 28 bytes into each header).
    fn fatbin_images(obj: &[u8]) -> Vec<(bool, u32)> {
        let magic = 0xBA55_ED50u32.to_le_bytes();
        let at = obj
            .windows(4)
            .position(|w| w == magic)
            .expect("a fatbinary in the device-link object");
        let u16_at = |i: usize| u16::from_le_bytes(obj[i..i + 2].try_into().unwrap());
        let u32_at = |i: usize| u32::from_le_bytes(obj[i..i + 4].try_into().unwrap());
        let u64_at = |i: usize| u64::from_le_bytes(obj[i..i + 8].try_into().unwrap());
        let end = at + 16 + u64_at(at + 8) as usize;
        let mut off = at + 16;
        let mut images = Vec::new();
        while off < end {
            images.push((u16_at(off) == 1, u32_at(off + 28)));
            off += u32_at(off + 4) as usize + u64_at(off + 8) as usize;
        }
        images
    }

    /// The shim carries machine code for every architecture the build names
    /// and PTX of the highest, as `check` and the records say.
    #[test]
    fn the_shim_has_sass_for_each_architecture_and_ptx_of_the_highest() {
        let b = pqcprof::backend::cupqc::build_info();
        let obj = std::fs::read(concat!(env!("OUT_DIR"), "/cupqc_shim_dlink.o")).unwrap();
        let images = fatbin_images(&obj);
        let sass: Vec<String> = images
            .iter()
            .filter(|(ptx, _)| !ptx)
            .map(|(_, a)| a.to_string())
            .collect();
        assert_eq!(sass, b.archs, "{images:?}");
        let ptx: Vec<u32> = images.iter().filter(|(p, _)| *p).map(|(_, a)| *a).collect();
        assert_eq!(ptx, b.ptx.into_iter().collect::<Vec<_>>(), "{images:?}");
        let highest = b.archs.iter().filter_map(|a| a.parse().ok()).max();
        assert_eq!(b.ptx, highest, "PTX of the highest architecture");
        assert!(b.version.starts_with("stand-in") || !b.standin, "{b:?}");
        assert!(!b.libraries.is_empty(), "{b:?}");
    }

    fn gpu_present() -> bool {
        std::path::Path::new("/dev/nvidia0").exists()
    }

    /// Without a GPU, preparing a batch fails with the CUDA runtime's
    /// reason, never a crash.
    #[test]
    fn preparing_without_a_gpu_is_a_clean_error() {
        if gpu_present() {
            crate::common::hardware_skip(
                "preparing_without_a_gpu_is_a_clean_error",
                "a GPU is present: see the launch test instead",
            );
            return;
        }
        let e = Batch::prepare(
            0,
            Algorithm::MlKem768,
            pqcprof::core::catalog::Operation::KeyGen,
            4,
            0,
        )
        .err()
        .expect("no GPU here")
        .to_string();
        assert!(e.contains("preparing 4 × ML-KEM-768"), "{e}");
    }

    /// With a GPU: the stand-in's kernels run through the shim (buffers,
    /// workspace, upload, timed launch, download) and sign/verify agree.
    #[cfg(pqcprof_cupqc_standin)]
    #[test]
    fn standin_kernels_run_through_the_shim_on_a_gpu() {
        use pqcprof::core::catalog::Operation;
        if !gpu_present() {
            crate::common::hardware_skip(
                "standin_kernels_run_through_the_shim_on_a_gpu",
                "no GPU: the launch path is not exercised here",
            );
            return;
        }
        let n = 5;
        let mut kg = Batch::prepare(0, Algorithm::MlKem768, Operation::KeyGen, n, 0).unwrap();
        let (len, stride) = kg.layout(Role::Entropy).unwrap();
        assert_eq!(len, stride * n);
        kg.upload(Role::Entropy, &vec![7u8; len]).unwrap();
        let t = kg.launch_timed().unwrap();
        assert!(t.as_secs_f64() > 0.0);
        let pk = kg.download(Role::PublicKey).unwrap();
        assert_eq!(pk.len(), 1184 * n);
        assert!(pk.iter().any(|&b| b != 0));
        assert!(
            kg.upload(Role::Ciphertext, &[0]).is_err(),
            "keygen has no CT"
        );
        // Serving: refused before the pinned copies exist; then the same
        // entropy in gives the same keys out, copied back by the shim.
        assert!(kg.serve().is_err(), "serve before stage");
        kg.upload(Role::PublicKey, &vec![0u8; pk.len()]).unwrap();
        kg.stage().unwrap();
        kg.serve().unwrap();
        assert_eq!(kg.download(Role::PublicKey).unwrap(), pk);

        let alg = Algorithm::MlDsa44;
        let mut sign = Batch::prepare(0, alg, Operation::Sign, n, 1024).unwrap();
        let (mlen, mstride) = sign.layout(Role::Message).unwrap();
        assert_eq!(mstride, 1024);
        sign.upload(Role::Message, &vec![0xAB; mlen]).unwrap();
        sign.launch().unwrap();
        let mut sigs = sign.download(Role::Signature).unwrap();
        let (_, sstride) = sign.layout(Role::Signature).unwrap();
        assert_eq!(Some(sstride), alg.signature_stride());
        sigs[sstride * 2] ^= 1;
        let mut ver = Batch::prepare(0, alg, Operation::Verify, n, 1024).unwrap();
        ver.upload(Role::Message, &vec![0xAB; mlen]).unwrap();
        ver.upload(Role::Signature, &sigs).unwrap();
        ver.launch_timed().unwrap();
        let ok: Vec<u8> = ver
            .download(Role::Ok)
            .unwrap()
            .chunks(4)
            .map(|c| c[0])
            .collect();
        assert_eq!(ok, vec![1, 1, 0, 1, 1]);
    }
}

//! `scripts/sim-kernels` and `scripts/gpgpu-sim/build` without a simulator:
//! a machine without GPGPU-Sim is told how to build it and nothing is
//! simulated (exit 4), bad values are refused by name (exit 2), the table is
//! made from a recorded run's logs (`--table`), a run whose items differ from
//! the host build fails it (exit 3), a timing run's profile gives each PTX
//! function its share of the instructions and latency, and the translation
//! units the script hands NVRTC are the ones pqcprof compiles. Running the simulator itself
//! takes GPGPU-Sim, built from a source CI cannot reach: docs/kernel-costs.md.

mod common;

use pqcprof::backend::native_gpu::kernels;
use pqcprof::core::catalog::Family;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn python() -> Option<&'static str> {
    Command::new("python3")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| "python3")
}

/// The command `scripts/sim-kernels ARGS` with the simulator looked for in
/// `gsim`.
fn sim_kernels_command(args: &[&str], gsim: &Path) -> Command {
    let mut c = Command::new(repo().join("scripts/sim-kernels"));
    c.args(args).env("PQCPROF_GSIM_DIR", gsim);
    c
}

/// `scripts/sim-kernels ARGS` run with the simulator looked for in `gsim`.
fn sim_kernels(args: &[&str], gsim: &Path) -> Output {
    sim_kernels_command(args, gsim).output().unwrap()
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The recorded run (tests/fixtures/sim-kernels) copied where `--table` may
/// write its table.
fn recorded_copy() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    copy_dir(&repo().join("tests/fixtures/sim-kernels"), d.path());
    d
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// The table row of `kernel` in a Markdown table.
fn row<'a>(table: &'a str, kernel: &str) -> &'a str {
    table
        .lines()
        .find(|l| l.starts_with(&format!("| {kernel} |")))
        .unwrap_or_else(|| panic!("no row for {kernel} in\n{table}"))
}

#[test]
fn without_the_simulator_it_says_how_to_build_it_and_simulates_nothing() {
    if python().is_none() {
        common::skipped("sim_kernels", "no python3");
        return;
    }
    let gsim = tempfile::tempdir().unwrap();
    let out = gsim.path().join("out");
    // A run that must simulate nothing: exit 4, no table, no output folder;
    // its stderr.
    let refused = || {
        let o = sim_kernels(
            &[
                "--kernels",
                "mlkem768_keygen",
                "--out",
                out.to_str().unwrap(),
            ],
            gsim.path(),
        );
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(4), "{stdout}\n{stderr}");
        assert!(stdout.is_empty(), "{stdout}");
        assert!(!out.exists(), "a run that simulated nothing made {out:?}");
        stderr
    };
    let stderr = refused();
    assert!(stderr.contains("GPGPU-Sim is not built in"), "{stderr}");
    assert!(
        stderr.contains("scripts/gpgpu-sim/build SOURCE"),
        "{stderr}"
    );
    assert!(stderr.contains("nothing simulated"), "{stderr}");

    // Built, but with another fixes.patch (one fix fewer, say): refused the
    // same way, both stamps named.
    std::fs::create_dir_all(gsim.path().join("sim")).unwrap();
    std::fs::write(
        gsim.path().join("sim/.pqcprof-built"),
        "667834cfe5214523edd7769aeab77f91b7137686 fixes:0123456789abcdef\n",
    )
    .unwrap();
    let stderr = refused();
    assert!(
        stderr.contains("was built with another scripts/gpgpu-sim/fixes.patch")
            && stderr.contains("fixes:0123456789abcdef")
            && stderr.contains("Build it (again) with scripts/gpgpu-sim/build SOURCE"),
        "{stderr}"
    );

    // Built, but a tool the runs need is missing (only python3 on PATH
    // here): the tools are named, and no rebuild is asked for.
    let bin = gsim.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    // The interpreter itself, not a shim (pyenv's is a bash script).
    let python3 = String::from_utf8(
        Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    std::os::unix::fs::symlink(python3.trim(), bin.join("python3")).unwrap();
    let o = sim_kernels_command(
        &[
            "--kernels",
            "mlkem768_keygen",
            "--out",
            out.to_str().unwrap(),
        ],
        gsim.path(),
    )
    .env("PATH", &bin)
    .output()
    .unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(4), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("g++, patchelf, nice not installed")
            && stderr.contains("nothing simulated")
            && !stderr.contains("Build it"),
        "{stderr}"
    );
    assert!(!out.exists(), "a run that simulated nothing made {out:?}");
}

#[test]
fn bad_values_are_refused_by_name_before_anything_else() {
    if python().is_none() {
        common::skipped("sim_kernels", "no python3");
        return;
    }
    let gsim = tempfile::tempdir().unwrap();
    for (args, named) in [
        (
            vec!["--kernels", "mlkem999_keygen"],
            "'mlkem999_keygen' names no kernel",
        ),
        (
            vec!["--kernels", "mlkem768_*", "--timing", "mldsa44_sign"],
            "'mldsa44_sign' names no kernel",
        ),
        (vec!["--jobs", "0"], "--jobs 0"),
        (
            vec!["--timing-blocks", "0"],
            "--timing-blocks 0: give 1 to 64",
        ),
        (vec!["--config", "../x"], "--config ../x"),
        (vec!["--channels", "12"], "--channels 12: give 8, 16 or 32"),
        (vec!["--seed", "x"], "--seed"),
        (
            vec!["--table", "/nonexistent/run"],
            "--table /nonexistent/run",
        ),
    ] {
        let o = sim_kernels(&args, gsim.path());
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(named), "{args:?}: {stderr}");
    }
}

#[test]
fn the_table_of_a_recorded_run_gives_each_kernel_its_simulated_cost() {
    if python().is_none() {
        common::skipped("sim_kernels", "no python3");
        return;
    }
    let d = recorded_copy();
    let o = sim_kernels(&["--table", d.path().to_str().unwrap()], d.path());
    let (table, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{table}\n{stderr}");
    assert!(stderr.contains("every one byte-exact"), "{stderr}");
    assert!(table.contains("simulated cycles per item"), "{table}");
    // The timed kernel: cycles and instructions per item are the simulator's
    // totals over the items of its one wave, warp IPC its warp instructions
    // over its cycles (tests/fixtures/sim-kernels/runs/*/run.log).
    let kg = row(&table, "mlkem768_keygen");
    for want in FIXTURE_ROW {
        assert!(kg.contains(want), "{want} not in\n{kg}");
    }
    // A kernel that only ran functionally has no cost columns.
    let warp = row(&table, "mlkem768_keygen_warp");
    assert!(warp.contains("| warp | 4/4 | 579,618 | - | - |"), "{warp}");
    let written = std::fs::read_to_string(d.path().join("table.md")).unwrap();
    assert_eq!(written, table);
}

/// What the recorded mlkem768_keygen timing run's row must say.
const FIXTURE_ROW: [&str; 6] = [
    "| thread | 130/130 | 570,894 | 512/512 |",
    // 7,198,636 cycles over 512 items; at 1,132 MHz, 512 items in that many
    // cycles are 80,513 items a second.
    "| 14,060 |",
    "| 80,513 |",
    "512 items, 4 blocks of 128 (4 fit: regs)",
    "| 124 | 3,040 | 0 |",
    "| 1 SM |",
];

#[test]
fn an_item_that_differs_from_the_host_build_fails_the_run() {
    if python().is_none() {
        common::skipped("sim_kernels", "no python3");
        return;
    }
    let d = recorded_copy();
    let log = d
        .path()
        .join("runs/mlkem768_keygen_warp-functional/run.log");
    let t = std::fs::read_to_string(&log).unwrap();
    std::fs::write(&log, t.replace("items=4 match=4", "items=4 match=3")).unwrap();
    let o = sim_kernels(&["--table", d.path().to_str().unwrap()], d.path());
    let (table, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(
            "items differ from the host build in 1 run(s): mlkem768_keygen_warp-functional"
        ),
        "{stderr}"
    );
    assert!(
        row(&table, "mlkem768_keygen_warp").contains("| 3/4 |"),
        "{table}"
    );

    // A run that stopped before its verdict is an error, not a pass.
    std::fs::write(&log, t.lines().take(2).collect::<Vec<_>>().join("\n")).unwrap();
    let o = sim_kernels(&["--table", d.path().to_str().unwrap()], d.path());
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no result from 1 run(s)"), "{stderr}");
}

#[test]
fn the_script_compiles_the_units_pqcprof_compiles() {
    let Some(py) = python() else {
        common::skipped("sim_kernels", "no python3");
        return;
    };
    for (unit, family) in [("mlkem", Family::MlKem), ("mldsa", Family::MlDsa)] {
        let o = Command::new(py)
            .args(["-c", UNIT_SOURCE, unit])
            .current_dir(repo())
            .output()
            .unwrap();
        let (src, stderr) = text(&o);
        assert!(o.status.success(), "{stderr}");
        assert!(
            src == kernels::source(family),
            "scripts/sim-kernels's {unit} unit is not kernels::source's"
        );
    }
}

/// Prints the script's unit named by argv[1], and checks that the device
/// wait GPGPU-Sim cannot parse is cut from a PTX entry list, alone.
const UNIT_SOURCE: &str = r#"
import importlib.machinery, sys
m = importlib.machinery.SourceFileLoader("sim_kernels", "scripts/sim-kernels").load_module()
ptx = ".visible .entry a(\n)\n{\n\tret;\n}\n\t// .globl\tpqcprof_hold\n.visible .entry pqcprof_hold(\n)\n{\n\tret;\n}\n\t// .globl\tb\n.visible .entry b(\n)\n{\n}\n"
cut = m.strip_entry(ptx, "pqcprof_hold")
assert "pqcprof_hold" not in cut and ".entry a(" in cut and ".entry b(" in cut, cut
sys.stdout.write(m.unit_source(sys.argv[1]))
"#;

#[test]
fn the_build_script_wants_a_source() {
    let o = Command::new(repo().join("scripts/gpgpu-sim/build"))
        .output()
        .unwrap();
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("scripts/gpgpu-sim/build SOURCE [REF]"),
        "{stderr}"
    );
    let o = Command::new(repo().join("scripts/gpgpu-sim/build"))
        .args(["a", "b", "c"])
        .output()
        .unwrap();
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("at most two arguments"), "{stderr}");
}

#[test]
fn a_timing_runs_profile_gives_each_function_its_share() {
    if python().is_none() {
        common::skipped("sim_kernels", "no python3");
        return;
    }
    // An entry calling one function; the simulator's per-line counts
    // (line: executions, latency) as a timing run leaves them.
    let d = tempfile::tempdir().unwrap();
    let ptx = d.path().join("unit.ptx");
    std::fs::write(
        &ptx,
        ".visible .entry k(\n)\n{\n\tld.local.u32 %r1, [%rd1];\n\tcall f;\n}\n\
         .func f()\n{\n\tadd.s32 %r2, %r2, 1;\n\tst.local.u32 [%rd1], %r2;\n}\n",
    )
    .unwrap();
    let script = format!(
        "import gzip, importlib.machinery, importlib.util, sys\n\
         l = importlib.machinery.SourceFileLoader('sk', {path:?})\n\
         m = importlib.util.module_from_spec(importlib.util.spec_from_loader('sk', l))\n\
         l.exec_module(m)\n\
         with gzip.open(sys.argv[1] + '/gpgpu_inst_stats.txt.gz', 'wt') as f:\n\
         \x20   f.write('kernel line : count latency\\n')\n\
         \x20   for n, c, lat in [(4, 10, 100), (5, 10, 100), (9, 60, 200), (10, 20, 600)]:\n\
         \x20       f.write(f'unit.ptx {{n}} : {{c}} {{lat}} 0 0 0 0 0 0 0\\n')\n\
         m.write_profile(sys.argv[1], sys.argv[2])\n",
        path = repo().join("scripts/sim-kernels").display().to_string()
    );
    // -B: importing the script must not leave scripts/__pycache__ behind.
    let o = Command::new("python3")
        .args(["-B", "-c", &script])
        .arg(d.path())
        .arg(&ptx)
        .output()
        .unwrap();
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let profile = std::fs::read_to_string(d.path().join("profile.txt")).unwrap();
    let rows: Vec<Vec<&str>> = profile
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("instructions"))
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    // Largest latency first: f has 80 of the 100 executions, 800 of the
    // 1,000 cycles, and 20 of its 80 are local; k the rest, 10 of 20 local.
    assert_eq!(
        rows,
        vec![
            vec!["80.0%", "80.0%", "25.0%", "f"],
            vec!["20.0%", "20.0%", "50.0%", "k"]
        ],
        "{profile}"
    );
    assert!(profile.starts_with("Simulated, not measured"), "{profile}");
}

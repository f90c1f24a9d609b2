//! `--fresh-process`: cuPQC_benchmark's method, for users who want it
//! exactly. Its benchmark programs are started anew for each of the 20
//! runs and time their first operation batch, with no warm-up in the
//! process. Here the correctness gate (warm-up included) first runs in this
//! process; then each timed run is one new `pqcprof` process
//! (`bench --fresh-child`) that prepares, times one cold batch, checks its
//! outputs and writes a run file; the runs are collected and summarised as
//! in-process runs are. The default stays in-process with a warm-up; each
//! record's `process` field says which method made it.

use crate::backend::Backend;
use crate::core::catalog::{Algorithm, Operation};
use crate::core::exit::Interrupted;
use crate::measure::runner::{fill_statistics, gate_only, MeasureConfig, Progress};
use crate::schema::record::{Record, Status, FRESH_PROCESS};
use anyhow::{bail, Context, Result};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};

/// What a child process needs besides the record's own settings.
#[derive(Debug, Clone)]
pub struct FreshChild {
    /// The pqcprof binary to start (this one).
    pub exe: PathBuf,
    /// CUDA device ordinal.
    pub device: usize,
    /// ML-DSA context, hex.
    pub context_hex: String,
    /// Latency mode.
    pub latency: bool,
    /// Sampler period, if given.
    pub sample_period_ms: Option<f64>,
    /// The native GPU kernel variant asked for (`--kernel`), if any.
    pub kernel: Option<&'static str>,
}

impl FreshChild {
    /// The child's command line for one cold run.
    fn command(
        &self,
        backend: &str,
        alg: Algorithm,
        op: Operation,
        cfg: &MeasureConfig,
        out: &std::path::Path,
    ) -> Command {
        let mut c = Command::new(&self.exe);
        c.args(["bench", "--fresh-child", "--backend", backend])
            .args(["--alg", alg.name(), "--op", op.cli_name()])
            .args(["--threads", &cfg.batch.threads.to_string()])
            .args(["--runs", "1", "--warmup", "0"])
            .args(["--message-size", &cfg.batch.message_size.to_string()])
            .args(["--context", &self.context_hex])
            .arg("--out")
            .arg(out);
        // Only GPU backends take a device: `--device` with the CPU backend
        // alone is refused as a value that would be ignored.
        if backend != crate::backend::liboqs::NAME {
            c.args(["--device", &self.device.to_string()]);
        }
        // --latency is batch 1 and refuses a --batch beside it.
        if self.latency {
            c.arg("--latency");
        } else {
            c.args(["--batch", &cfg.batch.batch.to_string()]);
        }
        if let Some(p) = self.sample_period_ms {
            c.args(["--sample-period-ms", &p.to_string()]);
        }
        if let Some(k) = self.kernel {
            c.args(["--kernel", k]);
        }
        c
    }
}

/// A private folder for one child's outputs, removed when dropped: made
/// by `mkdtemp` (a new name no one else can have made, mode 0700), so
/// nothing planted in the temporary folder and no link there is ever used.
struct ChildDir(PathBuf);

impl ChildDir {
    fn new() -> Result<Self> {
        Self::new_in(&std::env::temp_dir())
    }

    fn new_in(base: &std::path::Path) -> Result<Self> {
        use std::os::unix::ffi::OsStrExt;
        let template = base.join("pqcprof-fresh-XXXXXX");
        let mut buf = template.as_os_str().as_bytes().to_vec();
        buf.push(0);
        // SAFETY: `buf` is a NUL-terminated, writable template ending in
        // XXXXXX, as mkdtemp requires; it rewrites those six bytes in place.
        let made = unsafe { libc::mkdtemp(buf.as_mut_ptr().cast()) };
        if made.is_null() {
            return Err(std::io::Error::last_os_error())
                .with_context(|| format!("cannot create a private folder in {}", base.display()));
        }
        buf.pop();
        let dir = PathBuf::from(std::ffi::OsStr::from_bytes(&buf));
        Ok(ChildDir(dir))
    }
}

impl Drop for ChildDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Makes the child end when this thread's process ends (Linux: the kernel
/// sends it SIGKILL when the thread that started it exits), so a parent
/// killed with SIGKILL leaves no child running; a parent already gone
/// when the child starts ends the child at once.
fn die_with_parent(c: &mut Command) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: getpid before the fork; in the child, between fork and
        // exec, only the async-signal-safe prctl, getppid and _exit run.
        let parent = unsafe { libc::getpid() };
        unsafe {
            c.pre_exec(move || {
                if libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
    }
}

/// The one record of the run file the child wrote into its private folder
/// `dir`, checked to be that child's own: the only entry, a regular file
/// (no link), owned by this user, written by a command line that is
/// exactly the child's (`args`), with one ok run of the asked-for backend,
/// algorithm, operation, batch and threads. `None` with the reason for
/// anything else.
fn own_record(
    dir: &std::path::Path,
    args: &[String],
    backend: &str,
    alg: Algorithm,
    op: Operation,
    cfg: &MeasureConfig,
) -> std::result::Result<Record, String> {
    use std::os::unix::fs::MetadataExt;
    let entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read its folder: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    let runs: Vec<&PathBuf> = entries
        .iter()
        .filter(|p| {
            let n = p.file_name().unwrap_or_default().to_string_lossy();
            n.starts_with("run-") && n.ends_with(".json")
        })
        .collect();
    let [path] = runs[..] else {
        return Err(format!("{} run files in its folder, not one", runs.len()));
    };
    let meta = std::fs::symlink_metadata(path).map_err(|e| e.to_string())?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if !meta.file_type().is_file() || meta.uid() != me {
        return Err(format!(
            "{} is not a regular file of this user",
            path.display()
        ));
    }
    let run: crate::schema::run_file::RunFile =
        serde_json::from_slice(&std::fs::read(path).map_err(|e| e.to_string())?)
            .map_err(|e| format!("its run file does not parse: {e}"))?;
    if run.config.command_line.get(1..) != Some(args) {
        return Err("its run file was written by another command".into());
    }
    let [r] = &run.records[..] else {
        return Err(format!(
            "{} records in its run file, not one",
            run.records.len()
        ));
    };
    if let Some(reason) = r.reason.as_deref().filter(|_| r.status != Status::Ok) {
        return Err(reason.to_string());
    }
    let same = r.backend == backend
        && r.algorithm == alg.name()
        && r.operation == op
        && r.batch == cfg.batch.batch
        && r.threads == cfg.batch.threads.max(1)
        && r.mode == cfg.mode;
    if r.status != Status::Ok || r.run_seconds.len() != 1 || !same {
        return Err("its record is not the one cold run asked for".into());
    }
    Ok(r.clone())
}

/// One cold run in a new process: its seconds and sampler figures.
fn child_run(
    child: &FreshChild,
    backend: &str,
    alg: Algorithm,
    op: Operation,
    cfg: &MeasureConfig,
) -> Result<Record> {
    let dir = ChildDir::new()?;
    let mut cmd = child.command(backend, alg, op, cfg, &dir.0);
    let args: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    die_with_parent(&mut cmd);
    let out = cmd.output().context("starting a fresh pqcprof process")?;
    match own_record(&dir.0, &args, backend, alg, op, cfg) {
        Ok(r) => Ok(r),
        Err(why) => {
            let err = String::from_utf8_lossy(&out.stderr);
            let tail: Vec<&str> = err.lines().rev().take(3).collect();
            bail!(
                "the fresh process ended with {} and no measured record of its own ({why}): {}",
                out.status,
                tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
            )
        }
    }
}

/// Measures one record the fresh-process way: gate here, then `cfg.runs`
/// cold runs, each in its own process. Only Ctrl-C returns an error.
pub fn measure_in_fresh_process(
    backend: &mut dyn Backend,
    alg: Algorithm,
    op: Operation,
    cfg: &MeasureConfig,
    child: &FreshChild,
    cancel: &AtomicBool,
    progress: Progress<'_>,
) -> std::result::Result<Record, Interrupted> {
    let mut rec = gate_only(backend, alg, op, cfg, cancel)?;
    rec.process = format!(
        "{FRESH_PROCESS}: correctness gate (after {} warm-up run(s)) in the parent, then each of the {} timed runs in a new process with no warm-up",
        cfg.warmup_runs.max(1),
        cfg.runs
    );
    if rec.status == Status::Failed || rec.gate.is_none() {
        return Ok(rec);
    }
    let mut samplers = vec![];
    let mut holds = vec![];
    for i in 0..cfg.runs {
        if cancel.load(Ordering::SeqCst) {
            return Err(Interrupted);
        }
        match child_run(child, backend.name(), alg, op, cfg) {
            Ok(r) => {
                rec.run_seconds.push(r.run_seconds[0]);
                holds.push(crate::measure::hold::of_one_run(&r));
                rec.usage.extend(r.usage.into_iter().take(1));
                samplers.push(r.sampler);
            }
            Err(_) if cancel.load(Ordering::SeqCst) => return Err(Interrupted),
            Err(e) => {
                rec.status = Status::Failed;
                rec.reason = Some(format!("fresh-process run {} failed: {e:#}", i + 1));
                return Ok(rec);
            }
        }
        progress(i + 1, cfg.runs);
    }
    samplers.dedup();
    rec.sampler = samplers.join("; ");
    let checked = crate::measure::hold::check(&mut rec, cfg.mode, &holds);
    if let Err(reason) = checked.and_then(|()| fill_statistics(&mut rec, cfg)) {
        rec.status = Status::Failed;
        rec.reason = Some(reason);
    }
    Ok(rec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::BatchConfig;
    use crate::schema::record::Mode;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn each_child_gets_a_new_private_folder_whatever_was_planted() {
        let base = tempfile::tempdir().unwrap();
        // Folders at the names a predictable scheme would pick, one a link
        // to another folder, each with a run file claiming 1e-9 s.
        let victim = tempfile::tempdir().unwrap();
        for n in 0..20 {
            let p = base
                .path()
                .join(format!("pqcprof-fresh-{}-{n}", std::process::id()));
            if n == 0 {
                std::os::unix::fs::symlink(victim.path(), &p).unwrap();
            } else {
                std::fs::create_dir(&p).unwrap();
                std::fs::write(p.join("run-planted.json"), "{}").unwrap();
            }
        }
        let planted: Vec<PathBuf> = std::fs::read_dir(base.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        let a = ChildDir::new_in(base.path()).unwrap();
        let b = ChildDir::new_in(base.path()).unwrap();
        for d in [&a.0, &b.0] {
            assert!(!planted.contains(d), "{} was planted", d.display());
            let m = std::fs::symlink_metadata(d).unwrap();
            assert!(m.file_type().is_dir(), "a real folder, not a link");
            assert_eq!(m.permissions().mode() & 0o777, 0o700);
            assert_eq!(std::fs::read_dir(d).unwrap().count(), 0, "empty");
        }
        assert_ne!(a.0, b.0);
    }

    fn cfg() -> MeasureConfig {
        MeasureConfig {
            batch: BatchConfig {
                batch: 4,
                threads: 1,
                message_size: 0,
                context: vec![],
                gate: Default::default(),
            },
            runs: 1,
            warmup_runs: 0,
            mode: Mode::Throughput,
            timing: crate::measure::runner::Timing::default(),
        }
    }

    /// A run file in `dir` whose one record says `seconds` and whose
    /// command line was `args`.
    fn write_run(dir: &std::path::Path, args: &[String], seconds: f64) {
        let mut config = crate::schema::record::RunConfig::for_tests();
        config.command_line = std::iter::once("pqcprof".to_string())
            .chain(args.iter().cloned())
            .collect();
        let mut run =
            crate::schema::run_file::RunFile::new(crate::probe::system::collect(None), config);
        let c = cfg();
        let mut r = crate::measure::runner::skipped(
            &crate::backend::mock::Mock::default(),
            Algorithm::MlKem512,
            Operation::KeyGen,
            &c,
            "",
        );
        r.reason = None;
        r.backend = "liboqs-cpu".into();
        r.status = Status::Ok;
        r.run_seconds = vec![seconds];
        run.records.push(r);
        std::fs::write(dir.join("run-1.json"), serde_json::to_vec(&run).unwrap()).unwrap();
    }

    #[test]
    fn only_the_childs_own_run_file_is_taken() {
        let args: Vec<String> = ["bench", "--fresh-child", "--out", "x"]
            .map(String::from)
            .to_vec();
        let (alg, op) = (Algorithm::MlKem512, Operation::KeyGen);
        let check = |d: &std::path::Path| own_record(d, &args, "liboqs-cpu", alg, op, &cfg());
        // The child's own file is taken.
        let d = tempfile::tempdir().unwrap();
        write_run(d.path(), &args, 0.01);
        assert_eq!(check(d.path()).unwrap().run_seconds, [0.01]);
        // Written by another command line: refused.
        let d = tempfile::tempdir().unwrap();
        write_run(d.path(), &["bench".to_string()], 1e-9);
        assert!(check(d.path()).unwrap_err().contains("another command"));
        // A link in place of the file: refused.
        let d = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        write_run(elsewhere.path(), &args, 1e-9);
        std::os::unix::fs::symlink(
            elsewhere.path().join("run-1.json"),
            d.path().join("run-1.json"),
        )
        .unwrap();
        assert!(check(d.path()).unwrap_err().contains("not a regular file"));
        // Two run files: refused.
        let d = tempfile::tempdir().unwrap();
        write_run(d.path(), &args, 0.01);
        std::fs::copy(d.path().join("run-1.json"), d.path().join("run-2.json")).unwrap();
        assert!(check(d.path()).unwrap_err().contains("2 run files"));
    }

    #[test]
    fn a_child_ends_when_the_thread_that_started_it_ends() {
        // The thread stands for the parent: when it is gone, the kernel
        // kills the child (a parent killed with SIGKILL alike).
        let mut child = std::thread::spawn(|| {
            let mut c = Command::new("sleep");
            c.arg("30");
            die_with_parent(&mut c);
            c.spawn().unwrap()
        })
        .join()
        .unwrap();
        let t = std::time::Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break Some(s);
            }
            if t.elapsed() > std::time::Duration::from_secs(10) {
                break None;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        if status.is_none() {
            let _ = child.kill();
            let _ = child.wait();
        }
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            status.and_then(|s| s.signal()),
            Some(libc::SIGKILL),
            "the child outlived its parent"
        );
    }
}

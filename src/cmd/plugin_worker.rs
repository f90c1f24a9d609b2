//! `pqcprof plugin-worker [--device N] PATH` (hidden): the process a plugin
//! is measured in. The parent pqcprof starts it, writes one JSON request a
//! line on its standard input and reads one JSON answer a line; the
//! plugin's own writes to standard output are sent to standard error, so
//! they can never be mistaken for an answer.

use clap::Args;
use std::os::fd::FromRawFd;
use std::path::PathBuf;

/// Arguments of the worker.
#[derive(Debug, Args, Clone)]
pub struct PluginWorkerArgs {
    /// The CUDA ordinal a device plugin runs on (GPU 0 when not given)
    ///
    /// A host plugin ignores it.
    #[arg(long, value_name = "N")]
    pub device: Option<usize>,
    /// The plugin library.
    #[arg(value_name = "PATH")]
    pub path: PathBuf,
}

/// Serves the parent until its requests end.
pub fn plugin_worker(args: &PluginWorkerArgs) -> anyhow::Result<i32> {
    // SAFETY: dup and dup2 on this process's own descriptors 1 and 2; the
    // duplicate is owned by the File made from it and by nothing else.
    let answers = unsafe {
        let fd = libc::dup(1);
        if fd < 0 || libc::dup2(2, 1) < 0 {
            return Err(std::io::Error::last_os_error().into());
        }
        std::fs::File::from_raw_fd(fd)
    };
    let input = std::io::stdin().lock();
    crate::backend::plugin::isolated::serve(
        &args.path,
        args.device.unwrap_or(0),
        input,
        answers,
        &crate::vectors::plugin::run_in_worker,
    )?;
    Ok(crate::core::exit::OK)
}

//! `pqcprof plugin-worker [--channel FD] [--device N] PATH` (hidden): the
//! process a plugin is measured in. The parent pqcprof starts it in a
//! session of its own with a socket inherited as descriptor FD (never 0 to
//! 2, which a plugin may close or write to), sends one JSON request a line
//! on it and reads one JSON answer a line. The worker's standard input is
//! /dev/null and its standard output goes to standard error, so nothing the
//! plugin prints can be mistaken for an answer. Without `--channel` (by
//! hand) it reads standard input and answers on standard output.

use crate::backend::plugin::isolated::{self, ChannelLost, LOST_CHANNEL_EXIT};
use clap::Args;
use std::io::{BufRead, Write};
use std::os::fd::FromRawFd;
use std::path::PathBuf;

/// Arguments of the worker.
#[derive(Debug, Args, Clone)]
pub struct PluginWorkerArgs {
    /// The descriptor of the socket to the parent pqcprof (above 2)
    ///
    /// Requests come and answers go on it; without it, standard input and
    /// standard output.
    #[arg(long, value_name = "FD")]
    pub channel: Option<i32>,
    /// The CUDA ordinal a device plugin runs on (GPU 0 when not given)
    ///
    /// A host plugin ignores it.
    #[arg(long, value_name = "N")]
    pub device: Option<usize>,
    /// The plugin library.
    #[arg(value_name = "PATH")]
    pub path: PathBuf,
}

/// The requests and answers: the inherited socket `fd`, made close-on-exec
/// (a program the plugin runs does not get it).
fn channel(fd: i32) -> anyhow::Result<(Box<dyn BufRead>, Box<dyn Write>)> {
    anyhow::ensure!(
        fd > 2,
        "--channel {fd}: expected a descriptor above 2 (0 to 2 are the standard streams)"
    );
    // SAFETY: fcntl on a descriptor number; it fails (EBADF) when none is open.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
        anyhow::bail!("--channel {fd}: {}", std::io::Error::last_os_error());
    }
    // SAFETY: the parent handed this descriptor to this process alone; the
    // stream made from it is its only owner.
    let socket = unsafe { std::os::unix::net::UnixStream::from_raw_fd(fd) };
    let reader = socket.try_clone()?;
    Ok((Box::new(std::io::BufReader::new(reader)), Box::new(socket)))
}

/// Standard input, and a duplicate of standard output for the answers
/// (standard output itself then goes to standard error).
fn stdio() -> anyhow::Result<(Box<dyn BufRead>, Box<dyn Write>)> {
    // SAFETY: dup and dup2 on this process's own descriptors 1 and 2; the
    // duplicate is owned by the File made from it and by nothing else.
    let answers = unsafe {
        let fd = libc::dup(1);
        if fd < 0 || libc::dup2(2, 1) < 0 {
            return Err(std::io::Error::last_os_error().into());
        }
        std::fs::File::from_raw_fd(fd)
    };
    Ok((Box::new(std::io::stdin().lock()), Box::new(answers)))
}

/// Serves the parent until its requests end; exits with
/// [`LOST_CHANNEL_EXIT`] when the channel is gone (the plugin closed it).
pub fn plugin_worker(args: &PluginWorkerArgs) -> anyhow::Result<i32> {
    let (input, answers) = match args.channel {
        Some(fd) => channel(fd)?,
        None => stdio()?,
    };
    let served = isolated::serve(
        &args.path,
        args.device.unwrap_or(0),
        input,
        answers,
        &crate::vectors::plugin::run_in_worker,
    );
    match served {
        Err(e) if e.downcast_ref::<ChannelLost>().is_some() => {
            log::error!("{e:#}");
            Ok(LOST_CHANNEL_EXIT)
        }
        Err(e) => Err(e),
        Ok(()) => Ok(crate::core::exit::OK),
    }
}

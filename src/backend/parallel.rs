//! Spreading a CPU batch over threads.
//!
//! A batch is cut into one chunk per thread; each chunk owns its key
//! material, inputs and outputs, so threads share nothing while timed. The
//! timed window runs from the moment all threads are released (a barrier,
//! after they are spawned) to the moment the last one finishes; with one
//! thread the chunk runs on the calling thread, exactly as liboqs's own
//! speed tools call it.

use crate::probe::system::available_cores;
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// The part of a batch one thread executes.
pub trait Chunk: Send {
    /// Executes every operation of the chunk once.
    fn run(&mut self) -> anyhow::Result<()>;
}

/// Sizes of `threads` chunks covering `batch` operations, as even as
/// possible; never a zero-sized chunk.
pub fn chunk_sizes(batch: usize, threads: usize) -> Vec<usize> {
    let threads = threads.clamp(1, batch.max(1));
    let base = batch / threads;
    let extra = batch % threads;
    (0..threads)
        .map(|i| base + usize::from(i < extra))
        .collect()
}

/// Runs every chunk once, one thread each, and returns the timed window.
pub fn run_chunks<C: Chunk>(chunks: &mut [C]) -> anyhow::Result<Duration> {
    if chunks.len() == 1 {
        let t0 = Instant::now();
        chunks[0].run()?;
        return Ok(t0.elapsed());
    }
    let barrier = Barrier::new(chunks.len());
    // With no more threads than cores, each worker gets a core of its own,
    // so two workers never queue on one core while another idles.
    let pin = chunks.len() <= available_cores();
    let results: Vec<anyhow::Result<(Instant, Instant)>> = std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .iter_mut()
            .enumerate()
            .map(|(i, chunk)| {
                let barrier = &barrier;
                s.spawn(move || {
                    if pin {
                        pin_to_core(i);
                    }
                    barrier.wait();
                    let t0 = Instant::now();
                    chunk.run()?;
                    Ok((t0, Instant::now()))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a worker thread panicked")))
            })
            .collect()
    });
    let mut start: Option<Instant> = None;
    let mut end: Option<Instant> = None;
    for r in results {
        let (t0, t1) = r?;
        start = Some(start.map_or(t0, |s| s.min(t0)));
        end = Some(end.map_or(t1, |e| e.max(t1)));
    }
    match (start, end) {
        (Some(s), Some(e)) => Ok(e - s),
        _ => anyhow::bail!("no chunk ran"),
    }
}

/// Pins the calling thread to one core (Linux); elsewhere, or if the
/// kernel refuses, the thread stays where the scheduler puts it.
fn pin_to_core(core: usize) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: cpu_set_t is plain data; CPU_SET writes within it, and
        // sched_setaffinity(0, ...) applies to the calling thread only.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(core, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = core;
}

/// Parses `1,all,4` into thread counts.
pub fn parse_threads(s: &str, cores: usize) -> anyhow::Result<Vec<usize>> {
    let mut out = vec![];
    for part in s.split(',').map(str::trim) {
        let n = if part.eq_ignore_ascii_case("all") {
            cores
        } else {
            match part.parse::<usize>() {
                Ok(n) if (1..=4096).contains(&n) => n,
                _ => anyhow::bail!("invalid --threads value '{part}': use a number from 1 to 4096 or `all` (this machine has {cores} cores)"),
            }
        };
        if !out.contains(&n) {
            out.push(n);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn chunks_cover_the_batch() {
        assert_eq!(chunk_sizes(10, 3), vec![4, 3, 3]);
        assert_eq!(chunk_sizes(2, 8), vec![1, 1]);
        assert_eq!(chunk_sizes(7, 1), vec![7]);
        for b in 1..50 {
            for t in 1..9 {
                let c = chunk_sizes(b, t);
                assert_eq!(c.iter().sum::<usize>(), b);
                assert!(c.iter().all(|&x| x > 0));
            }
        }
    }

    struct Counting<'a>(&'a AtomicUsize, usize);
    impl Chunk for Counting<'_> {
        fn run(&mut self) -> anyhow::Result<()> {
            self.0.fetch_add(self.1, Ordering::SeqCst);
            Ok(())
        }
    }

    #[test]
    fn every_chunk_runs_once() {
        let n = AtomicUsize::new(0);
        let mut chunks: Vec<_> = chunk_sizes(100, 4)
            .into_iter()
            .map(|s| Counting(&n, s))
            .collect();
        run_chunks(&mut chunks).unwrap();
        assert_eq!(n.load(Ordering::SeqCst), 100);
    }

    struct Sleeping(Duration);
    impl Chunk for Sleeping {
        fn run(&mut self) -> anyhow::Result<()> {
            std::thread::sleep(self.0);
            Ok(())
        }
    }

    #[test]
    fn the_window_covers_the_slowest_thread() {
        // Whichever thread is the slow one, the batch is not done before it.
        let (fast, slow) = (Duration::from_millis(10), Duration::from_millis(50));
        for order in [[fast, slow], [slow, fast]] {
            let mut chunks = order.map(Sleeping);
            let window = run_chunks(&mut chunks).unwrap();
            assert!(window >= slow, "{order:?}: window {window:?}");
        }
    }

    struct Failing;
    impl Chunk for Failing {
        fn run(&mut self) -> anyhow::Result<()> {
            anyhow::bail!("boom")
        }
    }

    #[test]
    fn a_failing_chunk_fails_the_batch() {
        let err = run_chunks(&mut [Failing, Failing]).unwrap_err();
        assert!(err.to_string().contains("boom"));
    }
}

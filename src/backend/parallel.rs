//! Spreading a CPU batch over threads.
//!
//! A batch is cut into one chunk per thread; each chunk owns its key
//! material, inputs and outputs, so threads share nothing while timed. The
//! timed window runs from the moment all threads are released (a barrier,
//! after they are spawned) to the moment the last one finishes; with one
//! thread the chunk runs on the calling thread, exactly as liboqs's own
//! speed tools call it.

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

/// One batch run over its chunks: the timed window and where the worker
/// threads ran.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkRun {
    /// From releasing all threads to the last one's end.
    pub window: Duration,
    /// The pinning, said for the record (`Record::pinning`); `None` with
    /// one thread (it runs on the calling thread, unpinned).
    pub pinning: Option<String>,
}

/// The CPUs this process may run on, in increasing order
/// (`sched_getaffinity` of the calling thread: a Slurm cpuset or `taskset`
/// limits it); `None` where it cannot be read.
pub fn allowed_cpus() -> Option<Vec<usize>> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: cpu_set_t is plain data; sched_getaffinity(0, ...) writes
        // within it the calling thread's mask, and CPU_ISSET reads within it.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
                return None;
            }
            let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect();
            (!cpus.is_empty()).then_some(cpus)
        }
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// The CPU each of `threads` workers is pinned to: the first `threads`
/// CPUs of the allowed set, one each, so two workers never queue on one
/// core while another idles; `None` when there are more workers than
/// allowed CPUs (the scheduler then spreads them).
pub fn pin_plan(threads: usize, allowed: &[usize]) -> Option<Vec<usize>> {
    (threads <= allowed.len()).then(|| allowed[..threads].to_vec())
}

/// Runs every chunk once, one thread each, and returns the timed window
/// and how the threads were pinned.
pub fn run_chunks<C: Chunk>(chunks: &mut [C]) -> anyhow::Result<ChunkRun> {
    if chunks.len() == 1 {
        let t0 = Instant::now();
        chunks[0].run()?;
        return Ok(ChunkRun {
            window: t0.elapsed(),
            pinning: None,
        });
    }
    let barrier = Barrier::new(chunks.len());
    let allowed = allowed_cpus();
    let plan = allowed.as_deref().and_then(|a| pin_plan(chunks.len(), a));
    type Outcome = anyhow::Result<(Instant, Instant, Option<String>)>;
    let results: Vec<Outcome> = std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .iter_mut()
            .enumerate()
            .map(|(i, chunk)| {
                let barrier = &barrier;
                let cpu = plan.as_ref().map(|p| p[i]);
                s.spawn(move || {
                    let refused = cpu.and_then(|c| pin_to_cpu(c).err());
                    barrier.wait();
                    let t0 = Instant::now();
                    chunk.run()?;
                    Ok((t0, Instant::now(), refused))
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
    let mut refusals = vec![];
    for (i, r) in results.into_iter().enumerate() {
        let (t0, t1, refused) = r?;
        start = Some(start.map_or(t0, |s| s.min(t0)));
        end = Some(end.map_or(t1, |e| e.max(t1)));
        if let Some(why) = refused {
            refusals.push(format!("thread {i}: {why}"));
        }
    }
    let list = |v: &[usize]| {
        v.iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let pinning = match (&allowed, &plan) {
        (None, _) => "not pinned: the process's allowed CPU set could not be read".to_string(),
        (Some(a), None) => format!(
            "not pinned: {} threads, {} CPU(s) allowed to this process ({})",
            chunks.len(),
            a.len(),
            list(a)
        ),
        (Some(a), Some(p)) if refusals.is_empty() => format!(
            "one thread per CPU on CPUs {} of the {} allowed to this process ({})",
            list(p),
            a.len(),
            list(a)
        ),
        (Some(a), Some(p)) => format!(
            "pinning to CPUs {} of those allowed ({}) was refused, those threads ran unpinned: {}",
            list(p),
            list(a),
            refusals.join("; ")
        ),
    };
    match (start, end) {
        (Some(s), Some(e)) => Ok(ChunkRun {
            window: e - s,
            pinning: Some(pinning),
        }),
        _ => anyhow::bail!("no chunk ran"),
    }
}

/// A chunk with no operations: what the floor of a window times.
struct Idle;

impl Chunk for Idle {
    fn run(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
}

/// The window [`run_chunks`] measures around `threads` chunks that do
/// nothing: the clock reads, and with several threads the spawning, pinning
/// and barrier release that every timed batch of that many threads pays.
/// What a batch's window must exceed many times over to be its operations'
/// time rather than the timer's.
pub fn empty_window(threads: usize) -> anyhow::Result<Duration> {
    let mut idle: Vec<Idle> = (0..threads.max(1)).map(|_| Idle).collect();
    Ok(run_chunks(&mut idle)?.window)
}

/// Pins the calling thread to one CPU (Linux) and checks that it took:
/// the kernel's answer, and the thread's mask read back. Elsewhere the
/// thread stays where the scheduler puts it.
fn pin_to_cpu(cpu: usize) -> Result<(), String> {
    #[cfg(target_os = "linux")]
    {
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(format!("CPU {cpu} is beyond the affinity mask"));
        }
        // SAFETY: cpu_set_t is plain data; CPU_SET writes within it (cpu
        // is below CPU_SETSIZE), and sched_setaffinity(0, ...) applies to
        // the calling thread only.
        let rc = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
        };
        if rc != 0 {
            return Err(format!(
                "sched_setaffinity to CPU {cpu}: {}",
                std::io::Error::last_os_error()
            ));
        }
        match allowed_cpus() {
            Some(now) if now == [cpu] => Ok(()),
            now => Err(format!("asked for CPU {cpu}, the thread's mask is {now:?}")),
        }
    }
    #[cfg(not(target_os = "linux"))]
    Err(format!("CPU {cpu}: pinning is implemented on Linux only"))
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
            let window = run_chunks(&mut chunks).unwrap().window;
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
    fn workers_are_pinned_within_the_allowed_set() {
        // Under a cpuset or taskset of CPUs 2 and 5, two workers go to 2
        // and 5, never to 0 and 1; three workers are not pinned.
        assert_eq!(pin_plan(2, &[2, 5]), Some(vec![2, 5]));
        assert_eq!(pin_plan(1, &[7]), Some(vec![7]));
        assert_eq!(pin_plan(3, &[2, 5]), None);
    }

    /// Records the calling thread's CPU mask when it runs.
    struct Where(std::sync::Arc<std::sync::Mutex<Vec<Vec<usize>>>>);
    impl Chunk for Where {
        fn run(&mut self) -> anyhow::Result<()> {
            self.0
                .lock()
                .unwrap()
                .push(allowed_cpus().unwrap_or_default());
            Ok(())
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn live_workers_stay_inside_the_callers_cpu_set_and_say_where_they_ran() {
        let all = allowed_cpus().expect("readable on Linux");
        // This thread limited to its last allowed CPU, as a cpuset would.
        let last = *all.last().unwrap();
        std::thread::spawn(move || {
            pin_to_cpu(last).unwrap();
            let seen = std::sync::Arc::new(std::sync::Mutex::new(vec![]));
            let mut one = [Where(seen.clone())];
            assert_eq!(run_chunks(&mut one).unwrap().pinning, None);
            let mut two = [Where(seen.clone()), Where(seen.clone())];
            let r = run_chunks(&mut two).unwrap();
            let said = r.pinning.unwrap();
            assert!(
                said.starts_with("not pinned: 2 threads, 1 CPU(s) allowed"),
                "{said}"
            );
            for mask in seen.lock().unwrap().iter() {
                assert_eq!(mask, &[last], "a worker left the allowed set");
            }
        })
        .join()
        .unwrap();
        if all.len() >= 3 {
            // Limited to two CPUs that are not the first ones: the workers
            // go to those two, not to CPUs 0 and 1.
            let set = [all[1], all[2]];
            std::thread::spawn(move || {
                // SAFETY: as in pin_to_cpu, both CPUs below CPU_SETSIZE.
                unsafe {
                    let mut m: libc::cpu_set_t = std::mem::zeroed();
                    libc::CPU_SET(set[0], &mut m);
                    libc::CPU_SET(set[1], &mut m);
                    assert_eq!(
                        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &m),
                        0
                    );
                }
                let seen = std::sync::Arc::new(std::sync::Mutex::new(vec![]));
                let mut two = [Where(seen.clone()), Where(seen.clone())];
                run_chunks(&mut two).unwrap();
                let mut masks = seen.lock().unwrap().clone();
                masks.sort();
                assert_eq!(masks, vec![vec![set[0]], vec![set[1]]]);
            })
            .join()
            .unwrap();
        }
        if all.len() >= 2 {
            let seen = std::sync::Arc::new(std::sync::Mutex::new(vec![]));
            let mut two = [Where(seen.clone()), Where(seen.clone())];
            let said = run_chunks(&mut two).unwrap().pinning.unwrap();
            assert!(said.starts_with("one thread per CPU on CPUs"), "{said}");
            let mut masks = seen.lock().unwrap().clone();
            masks.sort();
            assert_eq!(masks, vec![vec![all[0]], vec![all[1]]]);
        }
    }

    #[test]
    fn a_failing_chunk_fails_the_batch() {
        let err = run_chunks(&mut [Failing, Failing]).unwrap_err();
        assert!(err.to_string().contains("boom"));
    }
}

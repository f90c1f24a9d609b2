//! The dynamic batcher: a batch leaves when `max_batch` requests wait or
//! the oldest has waited `max_wait`, as soon as a worker (a CPU thread, a
//! GPU stream) is free; and [`simulate`], the same rule run in virtual time
//! against a batch-time function, which is what the planner predicts with.

/// When a batch is dispatched.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Policy {
    /// Requests in one batch at most (at least 1).
    pub max_batch: usize,
    /// Seconds the oldest waiting request may wait before a smaller batch
    /// leaves (0: as soon as a worker is free).
    pub max_wait: f64,
}

/// What happened to one request, seconds from the start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Served {
    /// When it was meant to arrive (latency counts from here).
    pub arrival: f64,
    /// When its batch was handed to a worker.
    pub dispatch: f64,
    /// When its batch's results were back.
    pub done: f64,
    /// Requests in its batch.
    pub batch: usize,
}

impl Served {
    /// Intended arrival to result.
    pub fn latency(&self) -> f64 {
        self.done - self.arrival
    }
    /// Arrival to dispatch.
    pub fn queue(&self) -> f64 {
        self.dispatch - self.arrival
    }
    /// Dispatch to result.
    pub fn service(&self) -> f64 {
        self.done - self.dispatch
    }
}

/// When the next batch leaves, given the time its worker is free
/// (`free_at`) and the waiting requests' arrival times from the oldest on
/// (`waiting`, in order, the not yet arrived included): the earliest time
/// at or after both the worker is free and either `max_batch` requests have
/// arrived or the oldest has waited `max_wait`. With its size: those
/// arrived by then, at most `max_batch`.
pub fn next_dispatch(policy: Policy, free_at: f64, waiting: &[f64]) -> Option<(f64, usize)> {
    let oldest = *waiting.first()?;
    let b = policy.max_batch.max(1);
    let full = waiting.get(b - 1).copied().unwrap_or(f64::INFINITY);
    let at = full.min(oldest + policy.max_wait).max(free_at);
    let arrived = waiting.partition_point(|&t| t <= at);
    Some((at, arrived.clamp(1, b)))
}

/// The requests waiting for a batch, in arrival order, under a queue
/// limit: `kept` holds the index of every request admitted so far, those
/// from `next` on still waiting; `arrived` is the first request not yet
/// admitted or dropped. The live dispatcher and [`simulate_limited`] keep
/// the same queue.
pub struct Queue<'a> {
    times: &'a [f64],
    limit: usize,
    /// Every request admitted, by index into the arrival times, in order.
    pub kept: Vec<usize>,
    /// The first of `kept` still waiting.
    pub next: usize,
    arrived: usize,
    /// Requests dropped: they arrived to find `limit` waiting.
    pub dropped: usize,
}

impl<'a> Queue<'a> {
    /// An empty queue before the arrivals at `times` (seconds, in order),
    /// holding at most `limit` (none: no limit; never below `max_batch`,
    /// else a full batch could never form).
    pub fn new(times: &'a [f64], limit: Option<usize>, max_batch: usize) -> Self {
        Queue {
            times,
            limit: limit.unwrap_or(usize::MAX).max(max_batch),
            kept: Vec::with_capacity(times.len()),
            next: 0,
            arrived: 0,
            dropped: 0,
        }
    }

    /// Admits every request that arrived by `now` (seconds), in order: one
    /// that finds `limit` waiting is dropped.
    pub fn admit(&mut self, now: f64) {
        while self.arrived < self.times.len() && self.times[self.arrived] <= now {
            if self.kept.len() - self.next < self.limit {
                self.kept.push(self.arrived);
            } else {
                self.dropped += 1;
            }
            self.arrived += 1;
        }
    }

    /// Whether any request is waiting or still to arrive.
    pub fn pending(&self) -> bool {
        self.next < self.kept.len() || self.arrived < self.times.len()
    }

    /// Requests admitted and waiting.
    pub fn waiting(&self) -> usize {
        self.kept.len() - self.next
    }

    /// Requests not served: waiting, or still to arrive.
    pub fn left(&self) -> usize {
        self.waiting() + (self.times.len() - self.arrived)
    }

    /// The arrival times of the waiting requests from the oldest on, then
    /// of those still to arrive: the first `max_batch` of them, which is
    /// all the dispatch rule looks at. The limit is at least `max_batch`,
    /// so each of them will be admitted.
    pub fn ahead(&self, max_batch: usize) -> Vec<f64> {
        self.kept[self.next..]
            .iter()
            .map(|&i| self.times[i])
            .chain(self.times[self.arrived..].iter().copied())
            .take(max_batch.max(1))
            .collect()
    }
}

/// Runs the batcher in virtual time: `arrivals` (seconds, in order) served
/// by `workers` identical workers, a batch of `n` taking `batch_seconds(n)`.
/// Every request is served (no queue limit): an overloaded batcher shows
/// as a growing wait, which [`saturated`] detects.
pub fn simulate(
    arrivals: &[f64],
    policy: Policy,
    workers: usize,
    batch_seconds: &mut dyn FnMut(usize) -> f64,
) -> Vec<Served> {
    simulate_limited(arrivals, policy, workers, None, 0.0, &mut |n, _| {
        batch_seconds(n)
    })
    .0
}

/// [`simulate`] with at most `queue_limit` requests waiting (an arrival
/// that finds it full is dropped) and a dispatcher that, when it had to
/// wait for a batch's moment (a worker idle before it), dispatches `wake`
/// seconds after it: the time a sleeping thread takes to run again. A
/// batch of `n` that starts while `k` workers are serving (itself
/// included) takes `batch_seconds(n, k)`: workers that share a host run
/// slower together than alone. The requests served, a batch's next to
/// each other, and how many were dropped.
pub fn simulate_limited(
    arrivals: &[f64],
    policy: Policy,
    workers: usize,
    queue_limit: Option<usize>,
    wake: f64,
    batch_seconds: &mut dyn FnMut(usize, usize) -> f64,
) -> (Vec<Served>, usize) {
    let mut free = vec![0.0f64; workers.max(1)];
    let mut out = Vec::with_capacity(arrivals.len());
    let mut q = Queue::new(arrivals, queue_limit, policy.max_batch);
    while q.pending() {
        // The worker free first takes the next batch: with identical
        // workers and batches in arrival order, that is the one free
        // soonest.
        let (w, &free_at) = free
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1))
            .expect("at least one worker");
        let (at, _) =
            next_dispatch(policy, free_at, &q.ahead(policy.max_batch)).expect("a request waits");
        let at = if at > free_at { at + wake } else { at };
        q.admit(at);
        let size = q.waiting().clamp(1, policy.max_batch.max(1));
        // Busy at `at`: this worker and every other still serving.
        let busy = 1 + free
            .iter()
            .enumerate()
            .filter(|&(o, &f)| o != w && f > at)
            .count();
        let done = at + batch_seconds(size, busy);
        out.extend(q.kept[q.next..q.next + size].iter().map(|&i| Served {
            arrival: arrivals[i],
            dispatch: at,
            done,
            batch: size,
        }));
        free[w] = done;
        q.next += size;
    }
    (out, q.dropped)
}

/// Whether the batcher fell behind its arrivals: more than 5% of the
/// requests still unfinished when the arrivals ended, give or take what a
/// batcher that keeps up has in hand then (the wait for a batch and two
/// median batches). A batcher that keeps up ends the window with about
/// `rate x (max_wait + batch time)` requests in hand, whatever its length;
/// one that falls behind, with a share growing with the overload. Counting
/// requests, not the last one's time, keeps a single slow batch at the
/// end from reading as saturation; and the late requests must be more
/// than one batch's worth, so a handful of requests served one batch
/// apart by an idle worker (a trace of three) never reads as a backlog.
pub fn saturated(served: &[Served], max_wait: f64) -> bool {
    let last = served
        .iter()
        .map(|s| s.arrival)
        .fold(f64::NEG_INFINITY, f64::max);
    let mut service: Vec<f64> = served.iter().map(Served::service).collect();
    if service.is_empty() {
        return false;
    }
    service.sort_by(f64::total_cmp);
    let grace = max_wait + 2.0 * service[service.len() / 2];
    let late = served.iter().filter(|s| s.done > last + grace).count();
    let largest_batch = served.iter().map(|s| s.batch).max().unwrap_or(1);
    late as f64 > 0.05 * served.len() as f64 && late > largest_batch
}

/// Requests per second offered: requests over the arrivals' span.
pub fn offered_rate(served: &[Served]) -> f64 {
    let (first, last) = span(served, |s| s.arrival);
    if last > first {
        (served.len() - 1) as f64 / (last - first)
    } else {
        f64::INFINITY
    }
}

/// Requests per second served in the window the requests were offered in:
/// those served over the time from the window's start (time 0, where
/// arrival times count from) to its end, `window` seconds (the requests
/// offered over the offered rate), or to the last result when that is
/// later. The window's own rate is the requests offered over `window`, so
/// the rate served never exceeds the rate offered for the same window.
pub fn achieved_rate(served: &[Served], window: f64) -> f64 {
    let (_, last) = span(served, |s| s.done);
    let end = window.max(last);
    if served.is_empty() {
        0.0
    } else if end > 0.0 && end.is_finite() {
        served.len() as f64 / end
    } else {
        f64::INFINITY
    }
}

fn span(served: &[Served], f: impl Fn(&Served) -> f64) -> (f64, f64) {
    served
        .iter()
        .map(f)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), t| {
            (lo.min(t), hi.max(t))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1 ms per batch plus 0.1 ms per request.
    fn linear(n: usize) -> f64 {
        1e-3 + 1e-4 * n as f64
    }

    #[test]
    fn dispatch_by_size_and_by_wait_as_computed_by_hand() {
        // Four requests in 0.3 ms, then one alone, then a quiet stretch.
        let arrivals = [0.0, 1e-4, 2e-4, 3e-4, 5e-3];
        let p = Policy {
            max_batch: 3,
            max_wait: 2e-3,
        };
        let s = simulate(&arrivals, p, 1, &mut linear);
        // The third arrival fills a batch at 0.2 ms: done 1.3 ms later.
        for r in &s[..3] {
            assert_eq!((r.dispatch, r.batch), (2e-4, 3));
            assert!((r.done - 1.5e-3).abs() < 1e-12, "{r:?}");
        }
        // The fourth waits 2 ms alone (the worker is free at 1.5 ms).
        assert_eq!((s[3].dispatch, s[3].batch), (2.3e-3, 1));
        assert!((s[3].done - 3.4e-3).abs() < 1e-12);
        // The fifth arrives to a free worker and waits its 2 ms too.
        assert_eq!((s[4].dispatch, s[4].batch), (7e-3, 1));
        assert!((s[4].latency() - 3.1e-3).abs() < 1e-12);
        assert!((s[0].queue() - 2e-4).abs() < 1e-12);
        assert!((s[0].service() - 1.3e-3).abs() < 1e-12);
    }

    #[test]
    fn a_busy_worker_delays_the_batch_and_it_grows_to_the_limit() {
        // Zero wait: a batch leaves when the worker is free, with whatever
        // has arrived by then, up to max_batch.
        let arrivals: Vec<f64> = (0..10).map(|i| i as f64 * 1e-4).collect();
        let p = Policy {
            max_batch: 4,
            max_wait: 0.0,
        };
        let s = simulate(&arrivals, p, 1, &mut linear);
        let sizes: Vec<usize> = s.iter().map(|r| r.batch).collect();
        // 1 alone at 0; the worker is back at 1.1 ms, when all 9 others
        // wait: 4, 4, then 1.
        assert_eq!(sizes, [1, 4, 4, 4, 4, 4, 4, 4, 4, 1]);
        assert!((s[1].dispatch - 1.1e-3).abs() < 1e-12);
        assert!((s[5].dispatch - 2.5e-3).abs() < 1e-12);
    }

    #[test]
    fn two_workers_overlap_their_batches() {
        let arrivals = [0.0, 1e-4];
        let p = Policy {
            max_batch: 1,
            max_wait: 0.0,
        };
        let one = simulate(&arrivals, p, 1, &mut linear);
        let two = simulate(&arrivals, p, 2, &mut linear);
        assert!((one[1].dispatch - 1.1e-3).abs() < 1e-12);
        assert_eq!(two[1].dispatch, 1e-4);
        assert!(two[1].done < one[1].done);
    }

    #[test]
    fn a_batch_that_starts_beside_a_busy_worker_takes_the_contended_time() {
        // Batches of one, 1 s alone and 2 s beside another busy worker.
        // The first starts alone at 0 (done at 1); the second at 0.5,
        // the first still busy (done at 2.5); the third at 3, both idle
        // (done at 4); the fourth at 3.2 beside the third (done at 5.2).
        let arrivals = [0.0, 0.5, 3.0, 3.2];
        let p = Policy {
            max_batch: 1,
            max_wait: 0.0,
        };
        let mut time = |_: usize, busy: usize| busy as f64;
        let (s, _) = simulate_limited(&arrivals, p, 2, None, 0.0, &mut time);
        let done: Vec<f64> = s.iter().map(|r| r.done).collect();
        assert_eq!(done, [1.0, 2.5, 4.0, 5.2]);
        // One worker never has another beside it.
        let (s, _) = simulate_limited(&arrivals, p, 1, None, 0.0, &mut time);
        let done: Vec<f64> = s.iter().map(|r| r.done).collect();
        assert_eq!(done, [1.0, 2.0, 4.0, 5.0]);
    }

    #[test]
    fn a_queue_limit_drops_arrivals_that_find_it_full_as_computed_by_hand() {
        // Five requests within 0.2 ms, a worker that takes 1.2 ms for two:
        // with batches of 2 and at most 2 waiting, the first two leave at
        // 0, the next two wait for the worker, and the fifth finds them
        // waiting and is dropped.
        let arrivals = [0.0, 0.0, 1e-4, 1e-4, 2e-4];
        let p = Policy {
            max_batch: 2,
            max_wait: 0.0,
        };
        let (s, dropped) = simulate_limited(&arrivals, p, 1, Some(2), 0.0, &mut |n, _| linear(n));
        assert_eq!(dropped, 1);
        let sizes: Vec<usize> = s.iter().map(|r| r.batch).collect();
        assert_eq!(sizes, [2, 2, 2, 2]);
        assert!((s[2].dispatch - 1.2e-3).abs() < 1e-12, "{s:?}");
        assert_eq!(s[3].arrival, 1e-4);
        // Without the limit every request is served.
        let (s, dropped) = simulate_limited(&arrivals, p, 1, None, 0.0, &mut |n, _| linear(n));
        assert_eq!((dropped, s.len()), (0, 5));
    }

    #[test]
    fn overload_is_saturation_and_a_light_load_is_not() {
        // Capacity with batches of 8: 8 / 1.8 ms, about 4,400 per second.
        let p = Policy {
            max_batch: 8,
            max_wait: 1e-3,
        };
        let at = |rate: f64| -> Vec<f64> { (0..20_000).map(|i| i as f64 / rate).collect() };
        let light = simulate(&at(2000.0), p, 1, &mut linear);
        assert!(!saturated(&light, p.max_wait));
        assert!((offered_rate(&light) - 2000.0).abs() < 1e-6);
        let heavy = simulate(&at(8000.0), p, 1, &mut linear);
        assert!(saturated(&heavy, p.max_wait));
        let got = achieved_rate(&heavy, 20_000.0 / 8000.0);
        assert!((got - 8.0 / 1.8e-3).abs() / got < 0.01, "{got}");
        // A light load is served at the rate offered, never above it.
        let got = achieved_rate(&light, 20_000.0 / 2000.0);
        assert!(got <= 2000.0 && got > 1990.0, "{got}");
    }

    #[test]
    fn the_rate_served_never_exceeds_the_rate_offered_for_the_same_window() {
        // 13 requests offered at 100/s (a window of 0.13 s) whose Poisson
        // arrivals happened to come early, all within 50 ms, each served
        // in 0.1 ms: counted from the first arrival to the last result they
        // would be 240 a second; over their window, 100.
        let arrivals: Vec<f64> = (0..13).map(|i| 0.002 + i as f64 * 0.004).collect();
        let p = Policy {
            max_batch: 1,
            max_wait: 0.0,
        };
        let served = simulate(&arrivals, p, 1, &mut |_| 1e-4);
        let window = 13.0 / 100.0;
        let rate = achieved_rate(&served, window);
        assert!((rate - 100.0).abs() < 1e-9, "{rate}");
        // Results that come after the window's end stretch it.
        let slow = simulate(&arrivals, p, 1, &mut |_| 0.02);
        assert!(achieved_rate(&slow, window) < 100.0);
    }

    #[test]
    fn an_idle_worker_with_one_slow_batch_is_not_saturated() {
        // Three requests 10 ms apart, batches of up to 4 after at most
        // 1 ms: each served alone, the worker idle about 90% of the time;
        // the last batch slow (a scheduler hiccup) ends past the grace.
        let p = Policy {
            max_batch: 4,
            max_wait: 1e-3,
        };
        let mut times = [0.05e-3, 0.05e-3, 4e-3].into_iter();
        let served = simulate(&[0.0, 0.01, 0.02], p, 1, &mut |_| times.next().unwrap());
        assert_eq!(
            served.iter().map(|s| s.batch).collect::<Vec<_>>(),
            [1, 1, 1]
        );
        assert!(!saturated(&served, p.max_wait), "{served:?}");
    }
}

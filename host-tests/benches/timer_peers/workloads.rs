//! The four workloads (W1 schedule-expire, W2 idle-touch, W3 cancel-mostly, W4 late poll):
//! their parameters, their input generated once from a fixed seed per workload ([`Input`], the
//! churn trace [`Churn`]) and replayed on every queue, what a run fired ([`Tally`], which must
//! agree across queues), and how a run is timed ([`timed`], [`Outcome`]).

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::clock::{PerOp, Spent, Stamp};
use crate::contender::Contender;

/// W1: deadlines in [1, W1_HORIZON]; then one expiry per tick up to it.
const W1_HORIZON: u64 = 60_000;
/// W2: every timer sits this far out and is pushed back to it on each touch.
const W2_TIMEOUT: u64 = 30_000;
/// W3: I/O timeouts, in ticks.
const W3_TIMEOUT: std::ops::RangeInclusive<u64> = 100..=5_000;
/// W3: the share of timers cancelled before they expire.
const W3_CANCEL_SHARE: f64 = 0.95;
/// W3: replacements measured, at most.
const W3_MAX_REPLACEMENTS: u64 = 4_000_000;
/// W4: deadlines in [1, W4_HORIZON]; then a single expiry at it (an hour of 1 ms ticks).
const W4_HORIZON: u64 = 3_600_000;

/// What fired: a count and an order-independent checksum of (value, time fired).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Tally {
    pub fired: u64,
    checksum: u64,
}

impl Tally {
    #[inline]
    fn fire(&mut self, now: u64, value: u32) {
        self.fired += 1;
        let mix = (u64::from(value) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.checksum = self.checksum.wrapping_add(mix ^ now);
    }
}

/// One measured run.
#[derive(Clone, Copy)]
pub struct Outcome {
    /// Time in the queue: measured time minus [`Contender::excluded`].
    pub net: Spent,
    /// Time excluded (driving tokio's clock).
    pub excluded: Spent,
    ops: u64,
    pub tally: Tally,
    /// Where a workload has an insert phase and an expire phase (W1): each one's net time.
    pub phases: Option<(Spent, Spent)>,
}

impl Outcome {
    pub fn per_op(&self, spent: Spent) -> PerOp {
        PerOp {
            cpu: spent.cpu.as_nanos() as f64 / self.ops as f64,
            wall: spent.wall.as_nanos() as f64 / self.ops as f64,
        }
    }
}

/// Times `body`, minus whatever the queue reports as excluded meanwhile.
fn timed<C: Contender>(q: &mut C, ops: u64, body: impl FnOnce(&mut C) -> Tally) -> Outcome {
    let excluded_before = q.excluded();
    let start = Stamp::now();
    let tally = body(q);
    let measured = start.elapsed();
    let excluded_wall = q.excluded() - excluded_before;
    let cpu_share = measured.cpu.as_secs_f64() / measured.wall.as_secs_f64().max(1e-12);
    let excluded = Spent {
        wall: excluded_wall,
        cpu: excluded_wall.mul_f64(cpu_share.min(1.0)),
    };
    Outcome {
        net: measured - excluded,
        excluded,
        ops,
        tally,
        phases: None,
    }
}

/// W3's input: a replayable trace of I/O timeouts, n live at every tick boundary.
enum Step {
    /// Advance to this tick and expire what is due.
    Tick(u64),
    /// Insert a timer for this slot (its previous one ended by cancel or expiry).
    Insert { slot: u32, deadline: u64 },
    /// Cancel the slot's live timer.
    Cancel(u32),
}

pub struct Churn {
    /// Deadlines of the n timers inserted at tick 0 (untimed).
    fill: Vec<u64>,
    steps: Vec<Step>,
    replacements: u64,
    /// How many of the replaced timers expired rather than being cancelled.
    expiries: u64,
}

impl Churn {
    /// Every timer gets a timeout in `W3_TIMEOUT` and a fate: cancelled at a uniformly random
    /// tick strictly before its deadline (95%), or left to expire (5%). Each tick: expire, then
    /// replace every timer that ended (expired, or is cancelled now) with a fresh one.
    fn generate(n: usize, rng: &mut SmallRng) -> Self {
        const RING: usize = 8192;
        let target = (10 * n as u64).min(W3_MAX_REPLACEMENTS);
        let mut ends: Vec<Vec<(u32, bool)>> = vec![Vec::new(); RING];
        let mut schedule = |ends: &mut Vec<Vec<(u32, bool)>>, slot: u32, now: u64| {
            let deadline = now + rng.random_range(W3_TIMEOUT);
            if rng.random_bool(W3_CANCEL_SHARE) {
                let at = rng.random_range(now + 1..deadline);
                ends[at as usize % RING].push((slot, true));
            } else {
                ends[deadline as usize % RING].push((slot, false));
            }
            deadline
        };
        let fill: Vec<u64> = (0..n as u32)
            .map(|slot| schedule(&mut ends, slot, 0))
            .collect();
        let mut steps = Vec::with_capacity(2 * target as usize + 16_384);
        let mut replacements = 0;
        let mut expiries = 0;
        let mut now = 0;
        while replacements < target {
            now += 1;
            steps.push(Step::Tick(now));
            let mut ending = std::mem::take(&mut ends[now as usize % RING]);
            for &(slot, cancel) in &ending {
                if cancel {
                    steps.push(Step::Cancel(slot));
                } else {
                    expiries += 1;
                }
                let deadline = schedule(&mut ends, slot, now);
                steps.push(Step::Insert { slot, deadline });
                replacements += 1;
            }
            // New ends are all later than `now` and within RING ticks: this bucket is empty.
            ending.clear();
            ends[now as usize % RING] = ending;
        }
        Self {
            fill,
            steps,
            replacements,
            expiries,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Workload {
    ScheduleExpire,
    IdleTouch,
    CancelMostly,
    LatePoll,
}

impl Workload {
    pub const ALL: [Workload; 4] = [
        Workload::ScheduleExpire,
        Workload::IdleTouch,
        Workload::CancelMostly,
        Workload::LatePoll,
    ];

    pub fn key(self) -> &'static str {
        match self {
            Workload::ScheduleExpire => "w1",
            Workload::IdleTouch => "w2",
            Workload::CancelMostly => "w3",
            Workload::LatePoll => "w4",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Workload::ScheduleExpire => "W1 schedule-expire (ns/timer)",
            Workload::IdleTouch => "W2 idle-touch (ns/touch)",
            Workload::CancelMostly => "W3 cancel-mostly (ns/replacement)",
            Workload::LatePoll => "W4 late poll (ns/timer)",
        }
    }
}

/// A workload's generated input, shared by every queue and repetition.
pub enum Input {
    ScheduleExpire { deadlines: Vec<u64> },
    IdleTouch { n: usize, picks: Vec<u32> },
    CancelMostly(Churn),
    LatePoll { deadlines: Vec<u64> },
}

impl Input {
    pub fn generate(workload: Workload, n: usize) -> Self {
        let seed = 0x7135_7000 + workload as u64;
        let mut rng = SmallRng::seed_from_u64(seed);
        match workload {
            Workload::ScheduleExpire => Input::ScheduleExpire {
                deadlines: (0..n).map(|_| rng.random_range(1..=W1_HORIZON)).collect(),
            },
            Workload::IdleTouch => Input::IdleTouch {
                n,
                picks: (0..10 * n).map(|_| rng.random_range(0..n as u32)).collect(),
            },
            Workload::CancelMostly => Input::CancelMostly(Churn::generate(n, &mut rng)),
            Workload::LatePoll => Input::LatePoll {
                deadlines: (0..n).map(|_| rng.random_range(1..=W4_HORIZON)).collect(),
            },
        }
    }

    /// How many timers a correct queue fires in this workload.
    pub fn expected_fired(&self) -> u64 {
        match self {
            Input::ScheduleExpire { deadlines } | Input::LatePoll { deadlines } => {
                deadlines.len() as u64
            }
            Input::IdleTouch { .. } => 0,
            Input::CancelMostly(churn) => churn.expiries,
        }
    }

    pub fn run<C: Contender>(&self, q: &mut C) -> Outcome {
        match self {
            Input::ScheduleExpire { deadlines } => schedule_expire(q, deadlines),
            Input::IdleTouch { n, picks } => {
                let mut handles = Vec::with_capacity(*n);
                idle_touch(q, *n, picks, &mut handles)
            }
            Input::CancelMostly(churn) => {
                let mut handles = Vec::with_capacity(churn.fill.len());
                cancel_mostly(q, churn, &mut handles)
            }
            Input::LatePoll { deadlines } => late_poll(q, deadlines),
        }
    }
}

/// W1: insert n timers, then expire one tick at a time to the horizon. All timed, each phase
/// on its own as well.
fn schedule_expire<C: Contender>(q: &mut C, deadlines: &[u64]) -> Outcome {
    let ops = deadlines.len() as u64;
    let insert = timed(q, ops, |q| {
        for (value, &deadline) in (0u32..).zip(deadlines) {
            let _ = q.insert(deadline, value);
        }
        Tally::default()
    });
    let expire = timed(q, ops, |q| {
        let mut tally = Tally::default();
        for now in 1..=W1_HORIZON {
            q.expire(now, &mut |v| tally.fire(now, v));
        }
        tally
    });
    Outcome {
        net: insert.net + expire.net,
        excluded: insert.excluded + expire.excluded,
        ops,
        tally: expire.tally,
        phases: Some((insert.net, expire.net)),
    }
}

/// W2: n timers at `W2_TIMEOUT` (untimed); then 10n touches of random timers to
/// now + `W2_TIMEOUT`, one tick (and one expiry) every n/1000 touches. Timed: the touches and
/// expiries.
pub fn idle_touch<C: Contender>(
    q: &mut C,
    n: usize,
    picks: &[u32],
    handles: &mut Vec<C::Handle>,
) -> Outcome {
    handles.clear();
    handles.extend((0..n as u32).map(|value| q.insert(W2_TIMEOUT, value)));
    let per_tick = (n / 1000).max(1);
    timed(q, picks.len() as u64, |q| {
        let mut tally = Tally::default();
        let mut now = 0;
        for chunk in picks.chunks(per_tick) {
            for &pick in chunk {
                let handle = &mut handles[pick as usize];
                *handle = q.reschedule(*handle, now + W2_TIMEOUT);
            }
            now += 1;
            q.expire(now, &mut |v| tally.fire(now, v));
        }
        tally
    })
}

/// W3: fill to n (untimed), then replay the churn trace. Timed: the whole trace.
fn cancel_mostly<C: Contender>(q: &mut C, churn: &Churn, handles: &mut Vec<C::Handle>) -> Outcome {
    handles.clear();
    handles.extend(
        (0u32..)
            .zip(&churn.fill)
            .map(|(slot, &deadline)| q.insert(deadline, slot)),
    );
    timed(q, churn.replacements, |q| {
        let mut tally = Tally::default();
        for step in &churn.steps {
            match *step {
                Step::Tick(now) => q.expire(now, &mut |v| tally.fire(now, v)),
                Step::Insert { slot, deadline } => {
                    handles[slot as usize] = q.insert(deadline, slot)
                }
                Step::Cancel(slot) => q.cancel(handles[slot as usize]),
            }
        }
        tally
    })
}

/// W4: insert n timers over the hour (untimed), then one expiry at its end. Timed: the expiry.
fn late_poll<C: Contender>(q: &mut C, deadlines: &[u64]) -> Outcome {
    for (value, &deadline) in (0u32..).zip(deadlines) {
        let _ = q.insert(deadline, value);
    }
    timed(q, deadlines.len() as u64, |q| {
        let mut tally = Tally::default();
        q.expire(W4_HORIZON, &mut |v| tally.fire(W4_HORIZON, v));
        tally
    })
}

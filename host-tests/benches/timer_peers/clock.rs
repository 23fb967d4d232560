//! Time by two clocks, wall time and this thread's CPU time: a reading of both ([`Stamp`]), a
//! time spent by both ([`Spent`]), a figure per operation by both ([`PerOp`]), and which one a
//! table shows ([`Clock`]). The tables use CPU time because this machine is shared; wall time
//! rides along so that no conclusion hinges on that choice.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use host_tests::cpu_time::thread_cpu_time;

use crate::stats::median;

/// Time by two clocks: wall time, and this thread's CPU time. Tables use CPU time, which leaves
/// out the time the scheduler gives other processes (this machine is shared); wall time is kept
/// to show the conclusions do not hinge on that choice.
#[derive(Clone, Copy, Default, Debug)]
pub struct Spent {
    pub wall: Duration,
    pub cpu: Duration,
}

impl std::ops::Add for Spent {
    type Output = Spent;
    fn add(self, other: Spent) -> Spent {
        Spent {
            wall: self.wall + other.wall,
            cpu: self.cpu + other.cpu,
        }
    }
}

impl std::ops::AddAssign for Spent {
    fn add_assign(&mut self, other: Spent) {
        *self = *self + other;
    }
}

impl std::ops::Sub for Spent {
    type Output = Spent;
    fn sub(self, other: Spent) -> Spent {
        Spent {
            wall: self.wall.saturating_sub(other.wall),
            cpu: self.cpu.saturating_sub(other.cpu),
        }
    }
}

/// A reading of both clocks.
#[derive(Clone, Copy)]
pub struct Stamp {
    wall: Instant,
    cpu: Duration,
}

impl Stamp {
    pub fn now() -> Self {
        Stamp {
            wall: Instant::now(),
            cpu: thread_cpu_time(),
        }
    }

    pub fn elapsed(&self) -> Spent {
        let now = Stamp::now();
        Spent {
            wall: now.wall - self.wall,
            cpu: now.cpu.saturating_sub(self.cpu),
        }
    }
}

/// What one `Instant::now()` costs; measured once. (Reading the thread CPU clock is a system
/// call, about 0.5 µs in this VM: too coarse to time DelayQueue's clock driving with.)
pub fn instant_cost() -> Duration {
    static COST: OnceLock<Duration> = OnceLock::new();
    *COST.get_or_init(|| {
        const READS: u32 = 1_000_000;
        let mut samples: Vec<f64> = (0..5)
            .map(|_| {
                let start = Instant::now();
                for _ in 0..READS {
                    std::hint::black_box(Instant::now());
                }
                start.elapsed().as_secs_f64() / f64::from(READS)
            })
            .collect();
        Duration::from_secs_f64(median(&mut samples))
    })
}

/// ns per operation, by CPU time and by wall time.
#[derive(Clone, Copy)]
pub struct PerOp {
    pub cpu: f64,
    pub wall: f64,
}

/// Which clock a figure comes from.
#[derive(Clone, Copy)]
pub enum Clock {
    Cpu,
    Wall,
}

impl PerOp {
    pub fn by(self, clock: Clock) -> f64 {
        match clock {
            Clock::Cpu => self.cpu,
            Clock::Wall => self.wall,
        }
    }
}

//! The one property-test runner: proptest, over a stream of random words that a test's
//! generator reads as its randomness ([`Draw`], a `rand::RngCore`).
//!
//! Each property test keeps its own generator (the weights and shapes that make it reach the
//! states it is there for: a full store, a budget cut, a tie), written against `rand::Rng`;
//! proptest supplies the words ([`Words`]). A failing case is then shrunk word by word, as
//! Hypothesis shrinks its choice sequences: the tail cut off, blocks of words set to zero,
//! single words made smaller. A word of zero is the smallest choice of any draw (`random_range`
//! gives its lower bound, `random_bool` its first answer), and past the end of the stream every
//! word reads zero, so the input shrinks towards short sequences of the simplest ops. The
//! failure message prints the smallest failing input as the generator built it.
//!
//! Runs are deterministic: each test's seed is derived from its name, and `PROPERTY_SEED=n`
//! (decimal or `0x` hexadecimal) moves every test to new cases; a failure message says how to
//! replay it. `PROPERTY_SCALE=x` multiplies every test's number of cases (say `10`, or `0.1`).

use std::cell::RefCell;
use std::fmt::Debug;

use proptest::prelude::Rng as _;
use proptest::strategy::{NewTree, Strategy, ValueTree};
use proptest::test_runner::{Config, RngSeed, TestError, TestRunner};
use rand::rngs::SmallRng;
use rand::{RngCore, SeedableRng};

/// A generator's randomness: the words proptest drew, then zeros.
#[derive(Debug)]
pub struct Draw<'a> {
    words: &'a [u32],
    at: usize,
}

impl<'a> Draw<'a> {
    /// A stream over `words`.
    pub fn new(words: &'a [u32]) -> Self {
        Self { words, at: 0 }
    }

    /// Words read so far (past the end too).
    pub fn used(&self) -> usize {
        self.at
    }
}

impl RngCore for Draw<'_> {
    fn next_u32(&mut self) -> u32 {
        let word = self.words.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        word
    }

    fn next_u64(&mut self) -> u64 {
        u64::from(self.next_u32()) | u64::from(self.next_u32()) << 32
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for chunk in dest.chunks_mut(4) {
            let word = self.next_u32().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
    }
}

/// `n` random words, shrunk word by word (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct Words(pub usize);

impl Strategy for Words {
    type Tree = WordsTree;
    type Value = Vec<u32>;

    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        // One draw from proptest's generator seeds a fast one for the words.
        let mut words = SmallRng::seed_from_u64(runner.rng().next_u64());
        Ok(WordsTree::new(
            (0..self.0).map(|_| words.next_u32()).collect(),
        ))
    }
}

/// One shrink step, applied to the words that last failed.
#[derive(Clone, Copy, Debug)]
enum Shrink {
    /// Keep this many words; the rest read zero.
    Keep(usize),
    /// Set `len` words from `start` to zero.
    Zero { start: usize, len: usize },
    /// Take `word >> shift` off the word at `at`: half of it, a quarter, … down to 1.
    Lower { at: usize, shift: u32 },
}

/// [`Words`] being shrunk: the last failing words and the next smaller candidate.
#[derive(Debug)]
pub struct WordsTree {
    /// The smallest words known to fail.
    failing: Vec<u32>,
    /// The words under test, if smaller than `failing`.
    candidate: Option<Vec<u32>>,
    /// This round's steps, and where it is.
    plan: Vec<Shrink>,
    next: usize,
    /// A candidate failed in this round: try another round when it ends.
    progressed: bool,
}

impl WordsTree {
    fn new(words: Vec<u32>) -> Self {
        Self {
            failing: words,
            candidate: None,
            plan: Vec::new(),
            next: 0,
            // The first round is planned when shrinking starts (most cases pass).
            progressed: true,
        }
    }

    /// The steps of a round over the words now failing: cut the tail, zero blocks from large to
    /// single words, then make each word smaller by a half, a quarter, … (a binary search
    /// towards the smallest value that still fails, over the rounds).
    fn plan_round(&mut self) {
        let len = self
            .failing
            .iter()
            .rposition(|&w| w != 0)
            .map_or(0, |i| i + 1);
        self.plan.clear();
        self.next = 0;
        self.progressed = false;
        for keep in [
            0,
            len / 8,
            len / 4,
            len / 2,
            len * 3 / 4,
            len.saturating_sub(1),
        ] {
            if keep < len {
                self.plan.push(Shrink::Keep(keep));
            }
        }
        let mut block = len / 2;
        while block >= 1 {
            self.plan.extend(
                (0..len)
                    .step_by(block)
                    .map(|start| Shrink::Zero { start, len: block }),
            );
            block /= 2;
        }
        for at in 0..len {
            self.plan
                .extend((1..32).map(|shift| Shrink::Lower { at, shift }));
        }
    }

    /// Moves to the next step that changes the failing words; `false` when none is left.
    fn next_candidate(&mut self) -> bool {
        loop {
            while let Some(&step) = self.plan.get(self.next) {
                self.next += 1;
                let mut words = self.failing.clone();
                match step {
                    Shrink::Keep(keep) => words.truncate(keep),
                    Shrink::Zero { start, len } => {
                        let end = (start + len).min(words.len());
                        if let Some(block) = words.get_mut(start.min(end)..end) {
                            block.fill(0);
                        }
                    }
                    Shrink::Lower { at, shift } => {
                        if let Some(word) = words.get_mut(at) {
                            *word -= *word >> shift;
                        }
                    }
                }
                if words != self.failing {
                    self.candidate = Some(words);
                    return true;
                }
            }
            if !self.progressed {
                return false;
            }
            self.plan_round();
        }
    }
}

impl ValueTree for WordsTree {
    type Value = Vec<u32>;

    fn current(&self) -> Vec<u32> {
        self.candidate
            .clone()
            .unwrap_or_else(|| self.failing.clone())
    }

    /// The current words failed: keep them, and try smaller ones.
    fn simplify(&mut self) -> bool {
        if let Some(words) = self.candidate.take() {
            self.failing = words;
            self.progressed = true;
        }
        self.next_candidate()
    }

    /// The current words passed: back to the last failing ones, and try another step.
    fn complicate(&mut self) -> bool {
        self.candidate = None;
        self.next_candidate()
    }
}

/// How many cases and how much randomness each.
#[derive(Clone, Copy, Debug)]
pub struct Cases {
    /// Cases to run (before `PROPERTY_SCALE`).
    pub count: usize,
    /// Random words per case: at least what the generator reads in a typical case, so that
    /// random cases are random throughout (a generator reads zeros past them).
    pub words: usize,
}

/// `count` scaled by `PROPERTY_SCALE` (at least one).
pub fn scaled(count: usize) -> usize {
    let scale = std::env::var("PROPERTY_SCALE")
        .ok()
        .map(|text| {
            text.trim()
                .parse::<f64>()
                .unwrap_or_else(|_| panic!("PROPERTY_SCALE={text:?} is not a number"))
        })
        .unwrap_or(1.0);
    ((count as f64 * scale).round() as usize).max(1)
}

/// Runs `check` on the inputs `generate` builds from `cases.count` random word streams (scaled
/// by `PROPERTY_SCALE`), seeded from `test` and `PROPERTY_SEED`; returns what each passing case
/// returned, in order.
///
/// # Panics
///
/// When a case fails (`check` panics): with the reason, the smallest failing input proptest
/// found (as `generate` built it), and how to replay the run.
pub fn check<I: Debug, T>(
    test: &str,
    cases: Cases,
    generate: impl Fn(&mut Draw<'_>) -> I,
    check: impl Fn(&I) -> T,
) -> Vec<T> {
    drive(
        test,
        cases,
        |draw| {
            let input = generate(draw);
            (draw.used(), check(&input))
        },
        |words| format!("{:#?}", generate(&mut Draw::new(words))),
    )
}

/// Runs `case` on `cases.count` random word streams, as [`check`] does, for a test whose draws
/// and checks interleave (what it draws next depends on the state so far): `case` draws from
/// the stream as it goes and panics on a failure, with the ops so far in its message, which
/// is then that of the smallest failing case.
pub fn run<T>(test: &str, cases: Cases, case: impl Fn(&mut Draw<'_>) -> T) -> Vec<T> {
    drive(
        test,
        cases,
        |draw| {
            let result = case(draw);
            (draw.used(), result)
        },
        |_| "(its ops are in the message above)".to_string(),
    )
}

/// The runner behind [`check`] and [`run`]: `case` returns the words it read and its result;
/// `describe` shows the smallest failing words.
fn drive<T>(
    test: &str,
    cases: Cases,
    case: impl Fn(&mut Draw<'_>) -> (usize, T),
    describe: impl Fn(&[u32]) -> String,
) -> Vec<T> {
    let base = env_number("PROPERTY_SEED").unwrap_or(0);
    let name = test.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    let seed = mix(base ^ mix(name));
    let config = Config {
        cases: u32::try_from(scaled(cases.count)).unwrap_or(u32::MAX),
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        max_shrink_iters: 2_048,
        ..Config::default()
    };
    let passed = RefCell::new(Vec::new());
    let read = RefCell::new((0, 0)); // words read: total, most
    let mut runner = TestRunner::new(config);
    let result = runner.run(&Words(cases.words), |words| {
        let (used, result) = case(&mut Draw::new(&words));
        let mut read = read.borrow_mut();
        *read = (read.0 + used, read.1.max(used));
        drop(read);
        passed.borrow_mut().push(result);
        Ok(())
    });
    match result {
        Ok(()) => {
            let passed = passed.into_inner();
            let (total, most) = read.into_inner();
            // Shown with --nocapture: whether `cases.words` covers what the generator reads.
            eprintln!(
                "{test}: {} cases; random words read: mean {}, most {}, of {} drawn",
                passed.len(),
                total / passed.len().max(1),
                most,
                cases.words
            );
            passed
        }
        Err(TestError::Fail(reason, words)) => {
            let used = words
                .iter()
                .rposition(|&w| w != 0)
                .map_or(0, |last| last + 1);
            panic!(
                "{test}: {reason}\nsmallest failing input ({used} random words): {}\nreplay: \
                 PROPERTY_SEED={base:#x} cargo test -p host-tests {test}",
                describe(&words)
            )
        }
        Err(error) => panic!("{test}: {error}"),
    }
}

/// The number in environment variable `name`, decimal or `0x` hexadecimal, `_` allowed.
///
/// # Panics
///
/// When the variable is set to something that is not a number.
fn env_number(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    let text = text.trim().replace('_', "");
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    Some(parsed.unwrap_or_else(|_| panic!("{name}={text:?} is not a number")))
}

/// SplitMix64's finaliser: a well-spread seed from any `u64` (say, base seed plus case number).
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use rand::Rng;

    use super::*;

    #[test]
    fn draw_reads_words_then_zeros() {
        let words = [7, u32::MAX];
        let mut draw = Draw::new(&words);
        assert_eq!(draw.next_u32(), 7);
        assert_eq!(draw.next_u32(), u32::MAX);
        assert_eq!(draw.next_u64(), 0);
        assert_eq!(draw.random_range(10..20), 10);
        assert_eq!(draw.used(), 5);
    }

    #[test]
    fn a_failing_case_is_shrunk_to_the_smallest() {
        let outcome = std::panic::catch_unwind(|| {
            check(
                "a_failing_case_is_shrunk_to_the_smallest",
                Cases {
                    count: 200,
                    words: 8,
                },
                |draw| {
                    (0..4)
                        .map(|_| draw.random_range(0..1_000))
                        .collect::<Vec<u32>>()
                },
                |numbers| assert!(numbers.iter().all(|&n| n < 500), "{numbers:?}"),
            )
        });
        let message = outcome
            .expect_err("some case has a number of 500 or more")
            .downcast::<String>()
            .expect("a formatted message");
        // The smallest failing input: one number at 500, the rest at 0.
        assert!(message.contains("500"), "{message}");
        assert!(!message.contains("501"), "{message}");
    }
}

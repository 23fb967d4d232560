//! The committed fuzz corpus (`fuzz/corpus/<target>/`), replayed through the shared checkers
//! without libFuzzer: a change to a checker, the queues, the parser or the server that breaks an
//! input the fuzzers once found fails `cargo test`. CI also replays the corpus through the real
//! fuzz targets (`scripts/check.sh`, step "fuzz targets").
//!
//! Typed inputs are decoded as `libfuzzer-sys`'s `fuzz_target!` decodes them, so a file here
//! means the same ops as under `cargo fuzz run`.

use std::fs;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use arbitrary::{Arbitrary, Unstructured};
use host_tests::{conn_check, hash_check, list_check, queue_check, resp_check, store_check};

/// Every file of `fuzz/corpus/<target>/`, sorted by name.
fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let entries =
        fs::read_dir(&dir).unwrap_or_else(|e| panic!("reading the corpus {}: {e}", dir.display()));
    let mut files: Vec<(PathBuf, Vec<u8>)> = entries
        .map(|entry| {
            let path = entry.expect("a corpus entry").path();
            let bytes = fs::read(&path).expect("a corpus file");
            (path, bytes)
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "the corpus {} is empty", dir.display());
    files
}

/// `bytes` as `fuzz_target!(|input: T| ..)` sees them: skipped when shorter than the type's
/// least size or when `arbitrary` cannot build a `T`.
fn decode<T: for<'a> Arbitrary<'a>>(bytes: &[u8]) -> Option<T> {
    if bytes.len() < T::size_hint(0).0 {
        return None;
    }
    T::arbitrary_take_rest(Unstructured::new(bytes)).ok()
}

/// Runs `check` on every file of `target`'s corpus, naming the file that fails. Returns how
/// many files decoded to an input.
fn replay(target: &str, check: impl Fn(&[u8]) -> bool) -> usize {
    let files = corpus(target);
    let mut checked = 0;
    for (path, bytes) in &files {
        match catch_unwind(AssertUnwindSafe(|| check(bytes))) {
            Ok(decoded) => checked += usize::from(decoded),
            Err(panic) => {
                eprintln!(
                    "{target}: {} fails; replay it with `cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz \
                     run {target} {}`",
                    path.display(),
                    path.strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz"))
                        .unwrap_or(path)
                        .display()
                );
                resume_unwind(panic);
            }
        }
    }
    eprintln!("{target}: {checked} of {} inputs checked", files.len());
    assert!(
        checked * 2 >= files.len(),
        "{target}: only {checked} of {} corpus files decode to an input: has the input type \
         changed? Regenerate the corpus (fuzz/README.md)",
        files.len()
    );
    checked
}

#[test]
fn resp_parse_corpus_keeps_every_parser_property() {
    replay("resp_parse", |bytes| {
        let _ = resp_check::check_input(bytes);
        bytes.len() >= resp_check::HEADER
    });
}

#[test]
fn timer_queues_corpus_matches_the_model_on_every_queue() {
    replay("timer_queues", |bytes| {
        decode::<queue_check::QueueInput>(bytes)
            .map(|input| queue_check::check_all_queues(&input))
            .is_some()
    });
}

#[test]
fn connection_corpus_keeps_every_server_property() {
    replay("connection", |bytes| {
        decode::<conn_check::ConnInput>(bytes)
            .map(|input| conn_check::check_input(&input))
            .is_some()
    });
}

#[test]
fn store_ops_corpus_matches_the_model() {
    replay("store_ops", |bytes| {
        decode::<store_check::StoreInput>(bytes)
            .map(|input| store_check::check_store_ops(&input))
            .is_some()
    });
}

#[test]
fn store_shrink_corpus_matches_the_model() {
    replay("store_shrink", |bytes| {
        decode::<store_check::StoreInput>(bytes)
            .map(|input| store_check::check_grown_store_ops(&input))
            .is_some()
    });
}

#[test]
fn list_ops_corpus_matches_the_model() {
    replay("list_ops", |bytes| {
        decode::<list_check::ListInput>(bytes)
            .map(|input| list_check::check_list_ops(&input))
            .is_some()
    });
}

#[test]
fn hash_ops_corpus_matches_the_model() {
    replay("hash_ops", |bytes| {
        decode::<hash_check::HashInput>(bytes)
            .map(|input| hash_check::check_hash_ops(&input))
            .is_some()
    });
}

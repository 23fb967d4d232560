//! The key store (16 keys, a 512-byte pool, its table growing and shrinking in chunks of 4
//! keys as keys come, go and expire), against a `HashMap` model under an arbitrary sequence
//! of operations: a shim over the checker the property test shares,
//! [`host_tests::store_check`] (what it asserts is documented there).

#![no_main]

use host_tests::store_check::{check_store_ops, StoreInput};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: StoreInput| {
    check_store_ops(&input);
});

//! The key store grown past its first timer segment (2,048 keys, a 64 KiB pool, 1,100 keys with
//! deadlines set first), then any sequence of operations that shrink it as keys go and expire,
//! against the `HashMap` model: a shim over the checker the property test shares,
//! [`host_tests::store_check`] (what it asserts is documented there).

#![no_main]

use host_tests::store_check::{check_grown_store_ops, StoreInput};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: StoreInput| {
    check_grown_store_ops(&input);
});

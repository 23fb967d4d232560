//! Lists through the server's list commands (pushes into the room at either end, pops, moves,
//! changes in the middle, lists written anew larger and smaller), against a `VecDeque` model
//! under an arbitrary sequence of ops: a shim over the checker the property test shares,
//! [`host_tests::list_check`] (what it asserts is documented there).

#![no_main]

use host_tests::list_check::{check_list_ops, ListInput};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: ListInput| {
    check_list_ops(&input);
});

//! The router fed a script of steps from every side over in-memory links, its id tables
//! checked as frames arrive: `acp_drivers::driver::fuzzing` (input format in its `script`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| acp_drivers::driver::fuzzing::router(data));

//! The router fed a script of steps from every side over in-memory links, its id tables
//! checked as frames arrive: `acp_conductor::driver::fuzzing` (input format in its `script`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| acp_conductor::driver::fuzzing::router(data));

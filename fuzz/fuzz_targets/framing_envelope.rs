//! Bytes through the line decoder in arbitrary chunkings, each frame through envelope
//! classification and the acp-wire rewrites the router applies: `acp_wire::fuzzing`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| acp_wire::fuzzing::framing_envelope(data));

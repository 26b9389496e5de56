#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| chesspack::fuzzing::run("decode_brisk", data));

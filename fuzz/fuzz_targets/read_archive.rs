#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| chesspack::fuzzing::read_archive(data));

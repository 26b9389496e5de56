#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| chesspack::fuzzing::run("read_search_index", data));

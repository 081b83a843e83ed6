//! `patina-mcp`'s stdin framing on arbitrary bytes, read in chunks of every size, with a small
//! message limit: lines come out whole, without newlines, never over the limit.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let chunk = 1 + (pick & 0x0f) as usize;
    let max = 1 + (pick >> 4) as usize * 8;
    patina_mcp::fuzz::framing(rest, chunk, max);
});

//! Stored graph facts read back from arbitrary bytes (a corrupt record): an error, never a panic;
//! whatever decodes survives a round trip through the binary form.
#![no_main]

use libfuzzer_sys::fuzz_target;
use patina_core::FileFacts;

fuzz_target!(|data: &[u8]| {
    if let Ok(facts) = FileFacts::decode(data) {
        assert_eq!(FileFacts::decode(&facts.encode()), Ok(facts));
    }
});

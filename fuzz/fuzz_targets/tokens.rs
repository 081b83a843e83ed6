//! The code-aware tokenizer on arbitrary text: tokens are non-empty and their offsets are
//! char boundaries inside the text, in order.
#![no_main]

use libfuzzer_sys::fuzz_target;
use patina_core::tokens::{for_each_token, query_terms};

fuzz_target!(|text: &str| {
    let mut last_start = 0;
    for_each_token(text, |from, to, token| {
        assert!(!token.is_empty());
        assert!(from <= to && to <= text.len(), "{from}..{to} of {}", text.len());
        assert!(text.is_char_boundary(from) && text.is_char_boundary(to));
        assert!(from >= last_start || from < to, "offsets go forward");
        last_start = last_start.max(from);
    });
    let terms = query_terms(text, 32);
    assert!(terms.len() <= 32);
});

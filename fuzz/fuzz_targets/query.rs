//! Query understanding on arbitrary text (intent, identifiers, paths, stack-trace frames) and
//! path globs built from it (a glob bomb must be refused, not explode).
#![no_main]

use libfuzzer_sys::fuzz_target;
use patina_core::PathFilter;
use patina_retrieve::QueryPlan;
use patina_retrieve::query::frames;

fuzz_target!(|text: &str| {
    let plan = QueryPlan::analyze(text);
    assert!(plan.text.len() <= text.len());
    let _ = frames(text);
    let globs: Vec<String> = text.lines().take(8).map(str::to_string).collect();
    if let Ok(filter) = PathFilter::new(&globs) {
        let _ = filter.matches("src/lib.rs");
    }
});

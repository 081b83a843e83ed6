//! Declarations that stand for a definition elsewhere: a header's or an `.mli`'s declaration hands
//! its place to the definition in the implementation of its stem (the daemon finds the pairs).

use std::collections::HashMap;

use super::{Candidate, RankOptions};
use crate::fusion::Contribution;
use crate::query::{Intent, QueryPlan};

/// The definitions that declarations stand for: for a candidate chunk of a header or an `.mli`
/// that declares a name its implementation half defines, the candidate of that definition (its
/// own fused score and oracle places, if the oracles found it).
pub type Definitions<K> = HashMap<K, Candidate<K>>;

/// A question about how something is done is answered where it is done: what a module's interface
/// half declares hands its place (fused score and oracle places) to the chunk of the
/// implementation half that defines it (the `@implementation` of an `@interface`, the `let` of an
/// `.mli`'s `val`), which joins the candidates if it was not among them; the declaration itself
/// ranks as one ([`RankOptions::declaration`]). A name asked for is looked up where it is defined,
/// as "go to definition" does: for an identifier the definition takes the declaration's place
/// the same way (the definition factor of the name is both's). Either way the declaration then
/// repeats the module its definition stands for, and decays as a file's next chunk does
/// ([`RankOptions::repeat_decay`]). Only for these two intents, and not with the declaration
/// rule off (`declaration = 1`).
pub fn hand_over<K: Clone + Eq + std::hash::Hash>(
    candidates: &mut Vec<Candidate<K>>,
    definitions: &Definitions<K>,
    plan: &QueryPlan,
    opts: &RankOptions,
) {
    if definitions.is_empty()
        || !matches!(plan.intent, Intent::Implementation | Intent::Identifier)
        || !opts.enabled
        || opts.declaration >= 1.0
    {
        return;
    }
    let handed: Vec<(f64, Vec<Contribution>, &Candidate<K>)> = candidates
        .iter()
        .filter_map(|c| {
            let definition = definitions.get(&c.key)?;
            Some((c.fused, c.provenance.clone(), definition))
        })
        .collect();
    for (fused, provenance, definition) in handed {
        match candidates.iter_mut().find(|c| c.key == definition.key) {
            Some(known) if known.fused >= fused => {}
            Some(known) => {
                known.fused = fused;
                known.provenance = provenance;
            }
            None => candidates.push(Candidate {
                fused,
                provenance,
                ..definition.clone()
            }),
        }
    }
    // The declaration now repeats the module its definition stands for: it decays as a file's
    // next chunk does.
    for c in candidates.iter_mut() {
        if definitions.contains_key(&c.key) {
            c.fused *= opts.repeat_decay;
        }
    }
}

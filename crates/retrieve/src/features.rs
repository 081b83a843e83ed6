//! What the ranking knows of each file result, as named numbers: the learning-to-rank features.
//!
//! [`vectors`] turns the file results of one question (today's ranking, best first: each file's
//! score, its oracles' file ranks and evidence, its best chunk's ranking factors and role) into
//! one [`Vector`] per result. It is a pure function of those results and the question's plan, so
//! `patina bench retrieval --features` logs exactly what the learned stage
//! ([`crate::learned`]) reads when it orders them: the model is fitted offline on the logged
//! vectors (`bench/learn_rank.py`) and evaluated here by the same function.
//!
//! Every feature is 0 for "no evidence" and bounded, so a weight of 0 leaves a result where the
//! others put it; [`Feature::Score`] alone (weight 1) is today's order.

use patina_core::{FileRole, OracleId};

use crate::fusion::Contribution;
use crate::query::{Intent, QueryPlan};
use crate::rank::Factors;

/// One feature of a file result. The order is the wire's (`patina.v1.RankFeature`, numbered from
/// 1) and the model file's names ([`Feature::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Feature {
    /// ln(score / the first result's score) of today's ranking: 0 for the first, below for the
    /// rest (floored at -10).
    Score,
    /// 1 / place in today's ranking (1 for the first).
    Place,
    /// 1 / the file's rank in the lexical oracle's file ranking; 0 when it did not find it.
    Lexical,
    Semantic,
    Symbol,
    Graph,
    History,
    Cochange,
    /// The evidence (0..=1) the lexical oracle's score alone gives, against its other scores.
    LexicalEvidence,
    SemanticEvidence,
    /// How many of the first-stage oracles that see content (lexical, symbol, semantic) found it,
    /// over 3.
    Agreement,
    /// Lexical and semantic both rank it first.
    UnanimousFirst,
    /// ln of the best chunk's ranking factors (`rank::Factors`): role × intent, definition of a
    /// named symbol, path words, mentions, `--near`.
    RoleFactor,
    DefinitionFactor,
    PathFactor,
    MentionFactor,
    NearFactor,
    /// The file's role.
    Test,
    Docs,
    Example,
    /// Neither source, test, docs nor example: config, generated, vendored, benchmarks, other.
    OtherRole,
    /// A test, for a question about tests.
    TestForTests,
    /// Documentation, for a question about usage.
    DocsForUsage,
    /// The best chunk re-exports a name the question mentions.
    Reexport,
    /// The file stands for a folder the question names.
    ModuleRoot,
    /// The best chunk declares and runs nothing.
    Declaration,
    /// [`Feature::Semantic`] for a question in prose (not an identifier).
    SemanticProse,
    /// [`Feature::Symbol`] for a question that names identifiers.
    SymbolNamed,
    /// [`Feature::Lexical`] for a long text (a report, a commit message).
    LexicalLong,
}

/// The features of one result, indexed by `Feature as usize`.
pub type Vector = [f64; Feature::COUNT];

impl Feature {
    pub const COUNT: usize = 29;

    pub const ALL: [Feature; Feature::COUNT] = [
        Feature::Score,
        Feature::Place,
        Feature::Lexical,
        Feature::Semantic,
        Feature::Symbol,
        Feature::Graph,
        Feature::History,
        Feature::Cochange,
        Feature::LexicalEvidence,
        Feature::SemanticEvidence,
        Feature::Agreement,
        Feature::UnanimousFirst,
        Feature::RoleFactor,
        Feature::DefinitionFactor,
        Feature::PathFactor,
        Feature::MentionFactor,
        Feature::NearFactor,
        Feature::Test,
        Feature::Docs,
        Feature::Example,
        Feature::OtherRole,
        Feature::TestForTests,
        Feature::DocsForUsage,
        Feature::Reexport,
        Feature::ModuleRoot,
        Feature::Declaration,
        Feature::SemanticProse,
        Feature::SymbolNamed,
        Feature::LexicalLong,
    ];

    /// The feature's name in the model file and the logs (snake case).
    pub fn name(self) -> &'static str {
        match self {
            Feature::Score => "score",
            Feature::Place => "place",
            Feature::Lexical => "lexical",
            Feature::Semantic => "semantic",
            Feature::Symbol => "symbol",
            Feature::Graph => "graph",
            Feature::History => "history",
            Feature::Cochange => "cochange",
            Feature::LexicalEvidence => "lexical_evidence",
            Feature::SemanticEvidence => "semantic_evidence",
            Feature::Agreement => "agreement",
            Feature::UnanimousFirst => "unanimous_first",
            Feature::RoleFactor => "role_factor",
            Feature::DefinitionFactor => "definition_factor",
            Feature::PathFactor => "path_factor",
            Feature::MentionFactor => "mention_factor",
            Feature::NearFactor => "near_factor",
            Feature::Test => "test",
            Feature::Docs => "docs",
            Feature::Example => "example",
            Feature::OtherRole => "other_role",
            Feature::TestForTests => "test_for_tests",
            Feature::DocsForUsage => "docs_for_usage",
            Feature::Reexport => "reexport",
            Feature::ModuleRoot => "module_root",
            Feature::Declaration => "declaration",
            Feature::SemanticProse => "semantic_prose",
            Feature::SymbolNamed => "symbol_named",
            Feature::LexicalLong => "lexical_long",
        }
    }

    pub fn from_name(name: &str) -> Option<Feature> {
        Feature::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// What the ranking knows of one file result.
#[derive(Clone, Debug)]
pub struct Evidence<'a> {
    /// Today's score of the file.
    pub score: f64,
    /// Each oracle's rank of the file (its file ranking) and evidence.
    pub provenance: &'a [Contribution],
    /// The ranking factors of the file's best chunk.
    pub factors: Factors,
    pub role: FileRole,
    pub reexport: bool,
    pub module_root: bool,
    pub declaration: bool,
}

/// The features of each of one question's file results (`results`: today's ranking, best first).
pub fn vectors(plan: &QueryPlan, results: &[Evidence]) -> Vec<Vector> {
    let best = results.first().map_or(0.0, |r| r.score);
    let prose = plan.identifiers.is_empty() && plan.intent != Intent::Identifier;
    results
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut v = [0.0; Feature::COUNT];
            let mut set = |f: Feature, x: f64| v[f as usize] = x;
            set(
                Feature::Score,
                if best > 0.0 && r.score > 0.0 {
                    (r.score / best).ln().clamp(-10.0, 0.0)
                } else {
                    -10.0
                },
            );
            set(Feature::Place, 1.0 / (i + 1) as f64);
            let of = |o: OracleId| r.provenance.iter().find(|c| c.oracle == o);
            let rr = |o: OracleId| of(o).map_or(0.0, |c| 1.0 / c.rank.max(1) as f64);
            for (f, o) in [
                (Feature::Lexical, OracleId::Lexical),
                (Feature::Semantic, OracleId::Semantic),
                (Feature::Symbol, OracleId::Symbol),
                (Feature::Graph, OracleId::Graph),
                (Feature::History, OracleId::History),
                (Feature::Cochange, OracleId::Cochange),
            ] {
                set(f, rr(o));
            }
            let ev = |o: OracleId| of(o).map_or(0.0, |c| c.score_evidence.clamp(0.0, 1.0));
            set(Feature::LexicalEvidence, ev(OracleId::Lexical));
            set(Feature::SemanticEvidence, ev(OracleId::Semantic));
            let found = [OracleId::Lexical, OracleId::Symbol, OracleId::Semantic]
                .into_iter()
                .filter(|&o| of(o).is_some())
                .count();
            set(Feature::Agreement, found as f64 / 3.0);
            let first = |o: OracleId| of(o).is_some_and(|c| c.rank == 1);
            set(
                Feature::UnanimousFirst,
                flag(first(OracleId::Lexical) && first(OracleId::Semantic)),
            );
            let ln = |x: f64| {
                if x > 0.0 {
                    x.ln().clamp(-5.0, 5.0)
                } else {
                    -5.0
                }
            };
            set(Feature::RoleFactor, ln(r.factors.role));
            set(Feature::DefinitionFactor, ln(r.factors.definition));
            set(Feature::PathFactor, ln(r.factors.path));
            set(Feature::MentionFactor, ln(r.factors.mention));
            set(Feature::NearFactor, ln(r.factors.near));
            set(Feature::Test, flag(r.role == FileRole::Test));
            set(Feature::Docs, flag(r.role == FileRole::Docs));
            set(Feature::Example, flag(r.role == FileRole::Example));
            set(
                Feature::OtherRole,
                flag(!matches!(
                    r.role,
                    FileRole::Source | FileRole::Test | FileRole::Docs | FileRole::Example
                )),
            );
            set(
                Feature::TestForTests,
                flag(r.role == FileRole::Test && plan.intent == Intent::Tests),
            );
            set(
                Feature::DocsForUsage,
                flag(r.role == FileRole::Docs && plan.intent == Intent::Usage),
            );
            set(Feature::Reexport, flag(r.reexport));
            set(Feature::ModuleRoot, flag(r.module_root));
            set(Feature::Declaration, flag(r.declaration));
            set(
                Feature::SemanticProse,
                if prose { rr(OracleId::Semantic) } else { 0.0 },
            );
            set(
                Feature::SymbolNamed,
                if plan.identifiers.is_empty() {
                    0.0
                } else {
                    rr(OracleId::Symbol)
                },
            );
            set(
                Feature::LexicalLong,
                if plan.long {
                    rr(OracleId::Lexical)
                } else {
                    0.0
                },
            );
            v
        })
        .collect()
}

fn flag(b: bool) -> f64 {
    if b { 1.0 } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(oracle: OracleId, rank: u32) -> Contribution {
        Contribution {
            oracle,
            rank,
            score: 1.0,
            score_evidence: 0.5,
        }
    }

    fn ev(score: f64, provenance: &[Contribution], role: FileRole) -> Evidence<'_> {
        Evidence {
            score,
            provenance,
            factors: Factors::default(),
            role,
            reexport: false,
            module_root: false,
            declaration: false,
        }
    }

    #[test]
    fn names_are_unique_and_read_back() {
        for (i, f) in Feature::ALL.into_iter().enumerate() {
            assert_eq!(f as usize, i, "ALL is in declaration order");
            assert_eq!(Feature::from_name(f.name()), Some(f));
        }
    }

    #[test]
    fn each_result_says_what_found_it_and_where_it_stands() {
        let plan = QueryPlan::analyze("how are requests retried");
        let both = [c(OracleId::Lexical, 1), c(OracleId::Semantic, 1)];
        let one = [c(OracleId::Lexical, 4)];
        let v = vectors(
            &plan,
            &[
                ev(2.0, &both, FileRole::Source),
                ev(1.0, &one, FileRole::Test),
            ],
        );
        let at = |i: usize, f: Feature| v[i][f as usize];
        assert_eq!(at(0, Feature::Score), 0.0);
        assert!((at(1, Feature::Score) - 0.5f64.ln()).abs() < 1e-12);
        assert_eq!((at(0, Feature::Place), at(1, Feature::Place)), (1.0, 0.5));
        assert_eq!(at(0, Feature::UnanimousFirst), 1.0);
        assert_eq!(at(1, Feature::UnanimousFirst), 0.0);
        assert_eq!(at(1, Feature::Lexical), 0.25);
        assert_eq!(at(1, Feature::Semantic), 0.0);
        assert!((at(0, Feature::Agreement) - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!((at(0, Feature::Test), at(1, Feature::Test)), (0.0, 1.0));
        assert_eq!(at(0, Feature::SemanticProse), 1.0, "a question in prose");
        assert_eq!(at(0, Feature::RoleFactor), 0.0, "factor 1: no evidence");
    }
}

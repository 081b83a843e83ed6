//! The learned ranking stage: a linear model over the named features of [`crate::features`],
//! fitted offline (`bench/learn_rank.py`) and evaluated here by a pure function.
//!
//! A model is a small versioned JSON file: a weight per feature name (a missing name weighs 0),
//! and the data and command that made it (`made_by`, `data`), kept for the record. The model with
//! only `score = 1` orders results as today's ranking does ([`Model::today`]): every other weight
//! is what the fit learned to change about it.

use std::collections::BTreeMap;

use crate::features::{Feature, Vector};

/// The model the daemon ships (`crates/retrieve/data/rank-model.json`).
const SHIPPED: &str = include_str!("../data/rank-model.json");

/// The model file's format version this code reads.
pub const VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub weights: [f64; Feature::COUNT],
    /// How many of today's first results the model reorders; the rest keep their places.
    pub pool: usize,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    version: u32,
    pool: usize,
    weights: BTreeMap<String, f64>,
    #[allow(dead_code)]
    #[serde(default)]
    made_by: String,
    #[allow(dead_code)]
    #[serde(default)]
    data: serde_json::Value,
}

impl Model {
    /// Today's order: `score` alone.
    pub fn today(pool: usize) -> Model {
        let mut weights = [0.0; Feature::COUNT];
        weights[Feature::Score as usize] = 1.0;
        Model { weights, pool }
    }

    /// The shipped model, parsed once (it is immutable data compiled in).
    pub fn shipped() -> &'static Model {
        static MODEL: std::sync::OnceLock<Model> = std::sync::OnceLock::new();
        MODEL.get_or_init(|| {
            Model::parse(SHIPPED).expect("the shipped rank model parses (a unit test checks it)")
        })
    }

    /// A model file's text; an unknown version or feature name, or a weight that is not finite,
    /// is an error that says which.
    pub fn parse(text: &str) -> Result<Model, String> {
        let f: File = serde_json::from_str(text).map_err(|e| format!("rank model: {e}"))?;
        if f.version != VERSION {
            return Err(format!(
                "rank model: version {} (this build reads version {VERSION})",
                f.version
            ));
        }
        if f.pool == 0 {
            return Err("rank model: pool must be at least 1".into());
        }
        let mut weights = [0.0; Feature::COUNT];
        for (name, w) in f.weights {
            let Some(feature) = Feature::from_name(&name) else {
                return Err(format!("rank model: unknown feature `{name}`"));
            };
            if !w.is_finite() {
                return Err(format!("rank model: the weight of `{name}` is not finite"));
            }
            weights[feature as usize] = w;
        }
        Ok(Model {
            weights,
            pool: f.pool,
        })
    }

    /// The model's score of one result.
    pub fn score(&self, v: &Vector) -> f64 {
        self.weights.iter().zip(v).map(|(w, x)| w * x).sum()
    }

    /// The new order of results whose features are `vectors` (today's order): the first
    /// [`Model::pool`] by the model's score, best first (ties keep today's order), then the rest
    /// as they were. Indices into `vectors`.
    pub fn order(&self, vectors: &[Vector]) -> Vec<usize> {
        let pool = self.pool.min(vectors.len());
        let scores: Vec<f64> = vectors[..pool].iter().map(|v| self.score(v)).collect();
        let mut order: Vec<usize> = (0..pool).collect();
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
        order.extend(pool..vectors.len());
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(score: f64, lexical: f64) -> Vector {
        let mut v = [0.0; Feature::COUNT];
        v[Feature::Score as usize] = score;
        v[Feature::Lexical as usize] = lexical;
        v
    }

    #[test]
    fn the_shipped_model_parses() {
        let m = Model::shipped();
        assert!(m.pool >= 10, "it may reorder the first page at least");
    }

    #[test]
    fn today_keeps_the_order_and_a_weight_changes_it() {
        let vs = [v(0.0, 0.1), v(-0.2, 1.0), v(-0.5, 0.5)];
        assert_eq!(Model::today(30).order(&vs), [0, 1, 2]);
        let mut m = Model::today(30);
        m.weights[Feature::Lexical as usize] = 1.0;
        assert_eq!(m.order(&vs), [1, 0, 2]);
        m.pool = 1;
        assert_eq!(m.order(&vs), [0, 1, 2], "beyond the pool, today's order");
    }

    #[test]
    fn bad_model_files_say_what_is_wrong() {
        let bad = |t: &str| Model::parse(t).unwrap_err();
        assert!(bad(r#"{"version":9,"pool":30,"weights":{}}"#).contains("version 9"));
        assert!(bad(r#"{"version":1,"pool":30,"weights":{"nope":1}}"#).contains("`nope`"));
        assert!(bad(r#"{"version":1,"pool":0,"weights":{}}"#).contains("pool"));
        let m = Model::parse(r#"{"version":1,"pool":20,"weights":{"score":1}}"#).unwrap();
        assert_eq!(m, Model::today(20));
    }
}

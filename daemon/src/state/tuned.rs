//! The tuned settings as data: what a query is answered with ([`Tuning`]: the configuration, or a
//! tuned repository's overrides, [`effective`]), the tunable settings ([`Knob`]), and a
//! repository's stored result (`tuned.json`, [`TuneSlot`]). The run that produces them is the
//! tuner worker's (`crate::workers::tuner`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use anyhow::{Context, Result};
use patina_core::{OracleId, UserError};
use patina_retrieve::rank::RankOptions;
use patina_retrieve::tune::Shape;
use serde::{Deserialize, Serialize};

use crate::state::config::{Config, RetrievalConfig};

/// The settings a query is answered with: the configuration, or a tuned repository's own.
#[derive(Clone, Debug)]
pub(crate) struct Tuning {
    pub retrieval: RetrievalConfig,
    pub ranking: RankOptions,
    /// Whether a query that names no oracles runs the history oracle.
    pub history_by_default: bool,
    /// `[history] vote_prior` and `scope_prior`.
    pub vote_prior: f64,
    pub scope_prior: f64,
}

impl Tuning {
    pub fn from_config(cfg: &Config) -> Tuning {
        Tuning {
            retrieval: cfg.retrieval.clone(),
            ranking: cfg.ranking.clone(),
            history_by_default: cfg.history.by_default,
            vote_prior: cfg.history.vote_prior,
            scope_prior: cfg.history.scope_prior,
        }
    }
}

/// The settings for a query over `repos`: a single tuned repository's overrides on top of the
/// configuration, else the configuration.
pub(crate) fn effective(cfg: &Config, repos: &[&TuneSlot]) -> Tuning {
    let plain = Tuning::from_config(cfg);
    let [slot] = repos else { return plain };
    let Some(tuned) = slot.tuned() else {
        return plain;
    };
    if !tuned.result.applied || tuned.result.overrides.is_empty() {
        return plain;
    }
    let mut t = Tuning::from_config(cfg);
    // The history switch last: setting its weight turns it on (see `Knob::set`).
    let mut names: Vec<(&String, &f64)> = tuned.result.overrides.iter().collect();
    names.sort_by_key(|(n, _)| Knob::parse(n) == Some(Knob::HistoryOn));
    for (name, v) in names {
        if let Some(k) = Knob::parse(name) {
            k.set(&mut t, *v);
        }
    }
    t
}

/// One tunable setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Knob {
    /// `[retrieval.weights] <oracle>`; a history weight above 0 also runs it by default.
    Weight(OracleId),
    /// `[history] by_default` (1 = on, 0 = off).
    HistoryOn,
    /// `[history] vote_prior`, `scope_prior`.
    VotePrior,
    ScopePrior,
    /// `[retrieval.prose_weights] lexical`.
    ProseLexical,
    /// `[retrieval] evidence`.
    Evidence,
    /// `[ranking] definition_boost`, `parent_boost`, `mention_boost` (factors ≥ 1).
    Definition,
    Parent,
    Mention,
    /// `[ranking] path_word_boost` (an excess over 1 per word).
    PathWord,
    /// `[ranking] coherence[0]`: the share of a file's second best chunk.
    Coherence,
}

impl Knob {
    pub fn name(self) -> String {
        match self {
            Knob::Weight(o) => format!("weight.{}", o.name()),
            Knob::HistoryOn => "history.by_default".into(),
            Knob::VotePrior => "history.vote_prior".into(),
            Knob::ScopePrior => "history.scope_prior".into(),
            Knob::ProseLexical => "prose_weight.lexical".into(),
            Knob::Evidence => "fusion.evidence".into(),
            Knob::Definition => "ranking.definition_boost".into(),
            Knob::Parent => "ranking.parent_boost".into(),
            Knob::Mention => "ranking.mention_boost".into(),
            Knob::PathWord => "ranking.path_word_boost".into(),
            Knob::Coherence => "ranking.coherence".into(),
        }
    }

    pub fn parse(name: &str) -> Option<Knob> {
        Some(match name {
            "prose_weight.lexical" => Knob::ProseLexical,
            "fusion.evidence" => Knob::Evidence,
            "history.by_default" => Knob::HistoryOn,
            "history.vote_prior" => Knob::VotePrior,
            "history.scope_prior" => Knob::ScopePrior,
            "ranking.definition_boost" => Knob::Definition,
            "ranking.parent_boost" => Knob::Parent,
            "ranking.mention_boost" => Knob::Mention,
            "ranking.path_word_boost" => Knob::PathWord,
            "ranking.coherence" => Knob::Coherence,
            _ => Knob::Weight(OracleId::parse(name.strip_prefix("weight.")?)?),
        })
    }

    pub fn get(self, t: &Tuning) -> f64 {
        match self {
            Knob::Weight(o) => t.retrieval.weight(o),
            Knob::HistoryOn => t.history_by_default as u8 as f64,
            Knob::VotePrior => t.vote_prior,
            Knob::ScopePrior => t.scope_prior,
            Knob::ProseLexical => t.retrieval.prose_weight(OracleId::Lexical),
            Knob::Evidence => t.retrieval.evidence,
            Knob::Definition => t.ranking.definition_boost,
            Knob::Parent => t.ranking.parent_boost,
            Knob::Mention => t.ranking.mention_boost,
            Knob::PathWord => t.ranking.path_word_boost,
            Knob::Coherence => t.ranking.coherence.first().copied().unwrap_or(0.0),
        }
    }

    pub fn set(self, t: &mut Tuning, v: f64) {
        match self {
            Knob::Weight(o) => {
                t.retrieval.weights.insert(o, v);
                if o == OracleId::History && v > 0.0 {
                    t.history_by_default = true;
                }
            }
            Knob::HistoryOn => t.history_by_default = v > 0.5,
            Knob::VotePrior => t.vote_prior = v,
            Knob::ScopePrior => t.scope_prior = v,
            Knob::ProseLexical => {
                t.retrieval.prose_weights.insert(OracleId::Lexical, v);
            }
            Knob::Evidence => t.retrieval.evidence = v,
            Knob::Definition => t.ranking.definition_boost = v,
            Knob::Parent => t.ranking.parent_boost = v,
            Knob::Mention => t.ranking.mention_boost = v,
            Knob::PathWord => t.ranking.path_word_boost = v,
            Knob::Coherence => match t.ranking.coherence.first_mut() {
                Some(c) => *c = v,
                None => t.ranking.coherence.push(v),
            },
        }
    }

    /// How its values are tried ([`patina_retrieve::tune::Shape`]).
    pub fn shape(self) -> Shape {
        match self {
            Knob::Weight(_) => Shape::Weight,
            Knob::ProseLexical => Shape::WideWeight,
            Knob::Evidence => Shape::Share,
            Knob::Definition | Knob::Parent | Knob::Mention => Shape::Factor,
            Knob::HistoryOn => Shape::Switch,
            Knob::PathWord | Knob::Coherence | Knob::VotePrior | Knob::ScopePrior => {
                Shape::Strength
            }
        }
    }
}

impl patina_retrieve::tune::Knob<Tuning> for Knob {
    fn get(self, t: &Tuning) -> f64 {
        Knob::get(self, t)
    }

    fn set(self, t: &mut Tuning, v: f64) {
        Knob::set(self, t, v)
    }

    fn candidates(self, v: f64) -> Vec<f64> {
        self.shape().candidates(v)
    }
}

/// What a run found, as stored in `tuned.json`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct TuneResult {
    /// The overrides are in use: they beat the defaults on the held-out slice.
    pub applied: bool,
    /// Setting ([`Knob::name`]) → tuned value, for the settings that differ from the defaults.
    pub overrides: BTreeMap<String, f64>,
    /// Setting → the configured value it replaces.
    pub defaults: BTreeMap<String, f64>,
    pub train_queries: usize,
    pub heldout_queries: usize,
    pub feedback_queries: usize,
    pub train_before: f64,
    pub train_after: f64,
    pub heldout_before: f64,
    pub heldout_after: f64,
    pub heldout_r5_before: f64,
    pub heldout_r5_after: f64,
    pub took_ms: u64,
    pub head: String,
    pub finished_unix_ms: i64,
    pub oracles: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Tuned {
    pub result: TuneResult,
}

/// Where a run is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum TunePhase {
    /// No run yet in this process.
    #[default]
    None,
    /// Reading the commits that become questions.
    History,
    /// Asking the oracles each question once.
    Asking,
    /// Replaying the fusion under candidate settings.
    Fitting,
    /// Measuring the best settings on the held-out slice.
    Checking,
}

impl TunePhase {
    pub fn name(self) -> &'static str {
        match self {
            TunePhase::None => "",
            TunePhase::History => "history",
            TunePhase::Asking => "asking",
            TunePhase::Fitting => "fitting",
            TunePhase::Checking => "checking",
        }
    }
}

/// Progress of a run.
#[derive(Clone, Debug, Default)]
pub(crate) struct Progress {
    pub running: bool,
    pub phase: TunePhase,
    pub done: u32,
    pub total: u32,
    /// Why the last run failed ("" when it did not).
    pub error: String,
}

/// A repository's stored tuning (`tuned.json`) and the progress of its run.
pub(crate) struct TuneSlot {
    file: PathBuf,
    tuned: RwLock<Option<Arc<Tuned>>>,
    /// Moves with every change of `tuned` (`Input::Tuned`: cached answers are not served).
    version: std::sync::atomic::AtomicU64,
    progress: Mutex<Progress>,
}

impl TuneSlot {
    /// Load `file`; a missing or unreadable one means untuned.
    pub fn open(file: &Path) -> TuneSlot {
        let tuned = std::fs::read(file)
            .ok()
            .and_then(|b| serde_json::from_slice::<Tuned>(&b).ok())
            .map(Arc::new);
        TuneSlot {
            file: file.to_path_buf(),
            tuned: RwLock::new(tuned),
            version: Default::default(),
            progress: Mutex::new(Progress::default()),
        }
    }

    /// The version of the stored settings: moves whenever they are stored or removed.
    pub fn version(&self) -> u64 {
        self.version.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn tuned(&self) -> Option<Arc<Tuned>> {
        self.tuned.read().expect("tuned lock").clone()
    }

    pub fn progress(&self) -> Progress {
        self.progress.lock().expect("tune progress lock").clone()
    }

    /// Mark a run as started (phase `phase`), unless one is running: then its progress.
    pub fn begin(&self, phase: TunePhase) -> std::result::Result<(), Progress> {
        let mut p = self.progress.lock().expect("tune progress lock");
        if p.running {
            return Err(p.clone());
        }
        *p = Progress {
            running: true,
            phase,
            ..Progress::default()
        };
        Ok(())
    }

    pub fn update(&self, f: impl FnOnce(&mut Progress)) {
        f(&mut self.progress.lock().expect("tune progress lock"));
    }

    /// Drop the tuned settings of repository `name`: its queries use the configuration again.
    /// Refused while a run is going on.
    pub fn reset(&self, name: &str) -> Result<()> {
        if self.progress().running {
            return Err(UserError::Invalid(format!(
                "{name} is being tuned; reset when it is done"
            ))
            .into());
        }
        self.store(None)
    }

    /// Store (atomically) or remove the tuned result.
    pub fn store(&self, tuned: Option<Tuned>) -> Result<()> {
        match &tuned {
            Some(t) => {
                let tmp = self.file.with_extension("json.tmp");
                std::fs::write(&tmp, serde_json::to_vec_pretty(t)?)
                    .with_context(|| format!("writing {}", tmp.display()))?;
                std::fs::rename(&tmp, &self.file)
                    .with_context(|| format!("writing {}", self.file.display()))?;
            }
            None => match std::fs::remove_file(&self.file) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e).context("removing tuned.json"),
            },
        }
        *self.tuned.write().expect("tuned lock") = tuned.map(Arc::new);
        self.version
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use patina_retrieve::tune::Knob as _;

    fn base() -> Tuning {
        Tuning::from_config(&Config::default())
    }

    #[test]
    fn knobs_round_trip_their_names_and_values() {
        let mut t = base();
        for k in [
            Knob::Weight(OracleId::Lexical),
            Knob::Weight(OracleId::History),
            Knob::VotePrior,
            Knob::ScopePrior,
            Knob::ProseLexical,
            Knob::Definition,
            Knob::Parent,
            Knob::Mention,
            Knob::PathWord,
            Knob::Coherence,
        ] {
            assert_eq!(Knob::parse(&k.name()), Some(k), "{}", k.name());
            k.set(&mut t, 0.42);
            assert_eq!(k.get(&t), 0.42);
        }
        assert_eq!(Knob::parse("weight.nonsense"), None);
        assert!(
            t.history_by_default,
            "a history weight above 0 runs it by default"
        );
        Knob::HistoryOn.set(&mut t, 0.0);
        assert!(!t.history_by_default);
        assert_eq!(Knob::HistoryOn.candidates(0.0), vec![1.0]);
    }

    #[test]
    fn an_off_weight_is_tried_on_and_factors_scale_their_excess() {
        let t = base();
        assert!(!t.history_by_default);
        let c = Knob::Weight(OracleId::History).candidates(0.0);
        assert!(c.iter().all(|v| *v > 0.0) && !c.is_empty());
        let c = Knob::Definition.candidates(1.3);
        assert!(c.contains(&1.0) && c.contains(&1.6) && !c.contains(&1.3));
    }
}

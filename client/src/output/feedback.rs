//! `patina feedback stats`.

use std::io::Write;

use anyhow::Result;
use patina_proto::v1 as pb;
use serde_json::json;

use crate::output::units::ymd;

/// `patina feedback stats`.
pub(crate) fn print_feedback_stats(s: &pb::FeedbackStatsResponse, json: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        let v = json!({
            "records": s.records, "explicit": s.explicit, "implicit": s.implicit,
            "queries": s.queries, "used": s.used, "unhelpful": s.unhelpful,
            "ratings": s.ratings, "mean_rating": s.mean_rating,
            "most_used": s.most_used.iter().map(|p| json!({"path": p.path, "count": p.count})).collect::<Vec<_>>(),
            "last_unix_ms": s.last_unix_ms,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    writeln!(
        out,
        "{} feedback records ({} explicit, {} implicit) on {} answers",
        s.records, s.explicit, s.implicit, s.queries
    )?;
    writeln!(
        out,
        "results marked used: {}, unhelpful: {}",
        s.used, s.unhelpful
    )?;
    let rated: u64 = s.ratings.iter().sum();
    if rated > 0 {
        let per: Vec<String> = s
            .ratings
            .iter()
            .enumerate()
            .map(|(i, n)| format!("{}: {n}", i + 1))
            .collect();
        writeln!(
            out,
            "ratings: {rated}, mean {:.2} ({})",
            s.mean_rating,
            per.join(", ")
        )?;
    }
    if !s.most_used.is_empty() {
        writeln!(out, "most used:")?;
        for p in &s.most_used {
            writeln!(out, "  {:>4}  {}", p.count, p.path)?;
        }
    }
    if s.last_unix_ms > 0 {
        writeln!(out, "last: {}", ymd(s.last_unix_ms / 1000))?;
    }
    Ok(())
}

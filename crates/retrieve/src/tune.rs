//! The optimiser of `patina tune`, over any settings: coordinate ascent on named knobs
//! ([`ascend`]), the values a knob tries from where it stands ([`Shape::candidates`]) and the
//! measure it climbs ([`first_answer_scores`]: MRR@10 and recall@5 of the first answer's
//! position). The daemon names its knobs and replays its own fusion as the score.

/// How a knob's values are tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A fusion weight: scaled down and up, and off; when off, tried at small to full weights.
    Weight,
    /// A weight whose useful range is wider (`prose_weight.lexical`): scaled further.
    WideWeight,
    /// A boost factor ≥ 1: its excess over 1 is scaled.
    Factor,
    /// A switch (0 or 1): tried flipped.
    Switch,
    /// A small strength or share ≥ 0: scaled, and when 0 tried at small values.
    Strength,
    /// A share between 0 and 1: tried at quarters.
    Share,
}

impl Shape {
    /// The values tried from `v` (never `v` itself, no duplicates), rounded to 3 decimals.
    pub fn candidates(self, v: f64) -> Vec<f64> {
        let scaled = |base: f64, steps: &[f64]| -> Vec<f64> {
            steps.iter().map(|s| base * s).collect::<Vec<f64>>()
        };
        let raw = match self {
            Shape::Weight | Shape::WideWeight if v <= 0.0 => vec![0.05, 0.1, 0.2, 0.5, 1.0],
            Shape::Weight => scaled(v, &[0.0, 0.25, 0.5, 0.75, 1.5, 2.0, 3.0]),
            Shape::WideWeight => scaled(v, &[0.0, 0.5, 2.0, 4.0, 8.0]),
            Shape::Factor => scaled(v - 1.0, &[0.0, 0.5, 1.5, 2.0])
                .into_iter()
                .map(|e| 1.0 + e)
                .collect(),
            Shape::Switch => vec![1.0 - v],
            Shape::Strength if v <= 0.0 => vec![0.05, 0.1, 0.25],
            Shape::Strength => scaled(v, &[0.0, 0.5, 1.5, 2.0]),
            Shape::Share => vec![0.0, 0.25, 0.5, 0.75, 1.0],
        };
        let mut out: Vec<f64> = Vec::new();
        for x in raw {
            let x = (x * 1000.0).round() / 1000.0;
            if (x - v).abs() > 1e-9 && !out.iter().any(|o| (o - x).abs() < 1e-9) {
                out.push(x);
            }
        }
        out
    }
}

/// One tunable setting of settings `S`.
pub trait Knob<S>: Copy {
    fn get(self, settings: &S) -> f64;
    fn set(self, settings: &mut S, value: f64);
    /// The values tried from `value`.
    fn candidates(self, value: f64) -> Vec<f64>;
}

/// Coordinate ascent: for each knob in turn, the candidate value that raises `eval` the most (by
/// more than `min_gain`) replaces the current one; passes repeat until one changes nothing or
/// `rounds` are done. Starts from `start` and only ever accepts improvements, so the result scores
/// at least `eval(start)`. Returns the settings, their score and the score of `start`.
pub fn ascend<S: Clone, K: Knob<S>>(
    start: &S,
    knobs: &[K],
    rounds: usize,
    min_gain: f64,
    mut eval: impl FnMut(&S) -> f64,
) -> (S, f64, f64) {
    let first = eval(start);
    let (mut best, mut score) = (start.clone(), first);
    for _ in 0..rounds.max(1) {
        let mut changed = false;
        for &k in knobs {
            let mut pick: Option<(f64, f64)> = None;
            for v in k.candidates(k.get(&best)) {
                let mut t = best.clone();
                k.set(&mut t, v);
                let s = eval(&t);
                if s > pick.map_or(score + min_gain, |p| p.1) + 1e-9 {
                    pick = Some((v, s));
                }
            }
            if let Some((v, s)) = pick {
                k.set(&mut best, v);
                score = s;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    (best, score, first)
}

/// MRR@10 and recall@5 of questions whose first answer came at these 0-based positions (`None`:
/// not in the top 10); (0, 0) for no question.
pub fn first_answer_scores(positions: impl IntoIterator<Item = Option<usize>>) -> (f64, f64) {
    let (mut rr, mut r5, mut n) = (0.0, 0.0, 0usize);
    for p in positions {
        n += 1;
        if let Some(i) = p {
            rr += 1.0 / (i + 1) as f64;
            r5 += (i < 5) as u8 as f64;
        }
    }
    if n == 0 {
        return (0.0, 0.0);
    }
    (rr / n as f64, r5 / n as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy)]
    struct Axis(usize);

    impl Knob<[f64; 2]> for Axis {
        fn get(self, s: &[f64; 2]) -> f64 {
            s[self.0]
        }
        fn set(self, s: &mut [f64; 2], v: f64) {
            s[self.0] = v;
        }
        fn candidates(self, v: f64) -> Vec<f64> {
            Shape::Weight.candidates(v)
        }
    }

    #[test]
    fn ascent_never_ends_below_its_start_and_finds_a_better_setting() {
        let f = |s: &[f64; 2]| 1.0 - (s[0] - 0.5).abs() - (s[1] - 0.2).abs();
        let (s, after, before) = ascend(&[1.0, 0.0], &[Axis(0), Axis(1)], 3, 0.0, f);
        assert!(after >= before);
        assert_eq!(s, [0.5, 0.2]);
        let (s, after, before) = ascend(&[1.0, 0.0], &[Axis(0), Axis(1)], 3, 0.0, |_| 0.3);
        assert_eq!(after, before);
        assert_eq!(s, [1.0, 0.0], "a flat score changes nothing");
    }

    #[test]
    fn candidates_leave_out_the_current_value_and_follow_the_shape() {
        assert_eq!(Shape::Switch.candidates(1.0), vec![0.0]);
        assert_eq!(
            Shape::Weight.candidates(0.0),
            vec![0.05, 0.1, 0.2, 0.5, 1.0]
        );
        assert!(!Shape::Weight.candidates(1.0).contains(&1.0));
        assert_eq!(Shape::Factor.candidates(1.2), vec![1.0, 1.1, 1.3, 1.4]);
        assert_eq!(Shape::Strength.candidates(0.0), vec![0.05, 0.1, 0.25]);
    }

    #[test]
    fn first_answers_score_reciprocal_rank_and_recall_at_five() {
        assert_eq!(first_answer_scores([]), (0.0, 0.0));
        let (mrr, r5) = first_answer_scores([Some(0), Some(1), None, Some(6)]);
        assert!((mrr - (1.0 + 0.5 + 1.0 / 7.0) / 4.0).abs() < 1e-12);
        assert!((r5 - 0.5).abs() < 1e-12);
    }
}

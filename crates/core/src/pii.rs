//! Masking personal data (opt-in per repository, `[pii]` in the daemon's configuration): e-mail
//! addresses, IPv4 and IPv6 addresses and the configured patterns are replaced by `*`, one per
//! character, before a file's text is chunked, indexed or embedded, and in what is served
//! (`get_file`, commit messages). Line breaks are never masked, so every line keeps its number
//! and its length in characters.

use std::borrow::Cow;

use regex::Regex;

use crate::UserError;

const EMAIL: &str = r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}";
const IPV4: &str = r"\b(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\b";
/// Full and `::`-compressed IPv6 addresses (a match must also hold a digit and a `:` run of
/// hex groups, so `Db::Add` in code is not one: see [`Scrubber::scrub`]).
const IPV6: &str = r"\b(?:(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|(?:[0-9A-Fa-f]{1,4}:){1,6}:(?:[0-9A-Fa-f]{1,4}:){0,5}[0-9A-Fa-f]{1,4})\b";

/// What is masked.
pub struct Scrubber {
    patterns: Vec<(Regex, bool)>,
    fingerprint: String,
}

impl Scrubber {
    /// E-mail addresses (`emails`), IP addresses (`ips`) and the regular expressions `patterns`
    /// (a pattern that does not compile is an error naming it).
    pub fn new(emails: bool, ips: bool, patterns: &[String]) -> Result<Scrubber, UserError> {
        let mut out = Vec::new();
        let mut fp = Vec::new();
        if emails {
            out.push((Regex::new(EMAIL).expect("a valid regex"), false));
            fp.push("emails".to_string());
        }
        if ips {
            out.push((Regex::new(IPV4).expect("a valid regex"), false));
            out.push((Regex::new(IPV6).expect("a valid regex"), true));
            fp.push("ips".to_string());
        }
        for p in patterns {
            let re = Regex::new(p)
                .map_err(|e| UserError::Invalid(format!("invalid [pii] pattern '{p}': {e}")))?;
            out.push((re, false));
            fp.push(format!("re:{p}"));
        }
        Ok(Scrubber {
            patterns: out,
            fingerprint: fp.join("\u{1f}"),
        })
    }

    /// Names these rules: an index made under other rules is chunked again.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// `text` with every match masked (`*` per character, line breaks kept).
    pub fn scrub<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut spans: Vec<(usize, usize)> = Vec::new();
        for (re, is_v6) in &self.patterns {
            for m in re.find_iter(text) {
                if *is_v6 && !m.as_str().bytes().any(|b| b.is_ascii_digit()) {
                    continue;
                }
                spans.push((m.start(), m.end()));
            }
        }
        if spans.is_empty() {
            return Cow::Borrowed(text);
        }
        spans.sort();
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (s, e) in spans {
            let s = s.max(at);
            if e <= s {
                continue;
            }
            out.push_str(&text[at..s]);
            out.extend(
                text[s..e]
                    .chars()
                    .map(|c| if c == '\n' || c == '\r' { c } else { '*' }),
            );
            at = e;
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails_and_ips_are_masked_character_for_character() {
        let s = Scrubber::new(true, true, &[]).unwrap();
        let text = "owner: Jane Doe <jane.doe@example.co.uk>\nserver = \"10.0.0.12\"\nv6 fe80::1ff:fe23:4567:890a\n";
        let masked = s.scrub(text);
        assert!(
            !masked.contains("jane.doe") && !masked.contains("10.0.0.12"),
            "{masked}"
        );
        assert!(!masked.contains("fe80"), "{masked}");
        assert_eq!(masked.lines().count(), text.lines().count());
        for (a, b) in text.lines().zip(masked.lines()) {
            assert_eq!(a.chars().count(), b.chars().count(), "{a} / {b}");
        }
        let stars = "*".repeat("jane.doe@example.co.uk".len());
        assert!(
            masked.starts_with(&format!("owner: Jane Doe <{stars}>\n")),
            "{masked}"
        );
        // Code is not an address.
        let code = "use std::io;\nlet x = Db::Add;\nversion = \"1.2.3\"\n";
        assert_eq!(s.scrub(code), code);
    }

    #[test]
    fn configured_patterns_are_masked_and_bad_ones_refused() {
        let s = Scrubber::new(false, false, &[r"EMP-\d{6}".into()]).unwrap();
        assert_eq!(s.scrub("id EMP-123456 a@b.io"), "id ********** a@b.io");
        let err = Scrubber::new(false, false, &["(".into()]).err().unwrap();
        assert!(
            err.to_string().contains("invalid [pii] pattern '('"),
            "{err}"
        );
        assert_ne!(
            s.fingerprint(),
            Scrubber::new(true, true, &[]).unwrap().fingerprint()
        );
    }
}

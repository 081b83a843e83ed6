//! Licences as SPDX expressions: what a file says of itself (`SPDX-License-Identifier:` in its
//! first lines), what a licence file's text is (a key-phrase classifier of the common licences),
//! and the query filters over them (`--licence MIT,Apache-2.0`, `--no-copyleft`). Manifests
//! (`Cargo.toml`, `package.json`, …) need parsers and the disk: `patina_index::licences`.

use serde::{Deserialize, Serialize};

/// Where a file's licence was found, strongest first: the file's own header beats the nearest
/// manifest, which beats the nearest licence file.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum LicenceSource {
    Header,
    Manifest,
    File,
    /// Nothing says: the licence is unknown.
    None,
}

impl LicenceSource {
    pub fn name(self) -> &'static str {
        match self {
            LicenceSource::Header => "header",
            LicenceSource::Manifest => "manifest",
            LicenceSource::File => "file",
            LicenceSource::None => "none",
        }
    }
}

/// A file's licence as decided at index time: an SPDX expression (`MIT`, `MIT OR Apache-2.0`),
/// `None` when unknown, and where it was found.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, Hash)]
pub struct Licence {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expr: Option<String>,
    pub source: LicenceSource,
}

impl Licence {
    pub fn unknown() -> Licence {
        Licence {
            expr: None,
            source: LicenceSource::None,
        }
    }
}

/// Lines of a file searched for an `SPDX-License-Identifier:` tag.
const HEADER_LINES: usize = 40;

/// The SPDX expression a file declares in its first lines (`// SPDX-License-Identifier: MIT`,
/// `# SPDX-License-Identifier: MIT OR Apache-2.0`, `/* … */`, `<!-- … -->`).
pub fn header_licence(text: &str) -> Option<String> {
    const TAG: &str = "SPDX-License-Identifier:";
    for line in text.lines().take(HEADER_LINES) {
        let Some(at) = line.find(TAG) else { continue };
        let expr = line[at + TAG.len()..]
            .trim()
            .trim_end_matches("*/")
            .trim_end_matches("-->")
            .trim_end_matches("\"")
            .trim();
        if let Some(e) = normalise_expr(expr) {
            return Some(e);
        }
    }
    None
}

/// An SPDX expression tidied: single spaces, upper-case operators; `None` when empty or not one
/// (anything but ids, operators and parentheses).
pub fn normalise_expr(expr: &str) -> Option<String> {
    let words: Vec<String> = expr
        .split_whitespace()
        .map(|w| match w.to_ascii_uppercase().as_str() {
            "OR" | "AND" | "WITH" => w.to_ascii_uppercase(),
            _ => w.to_string(),
        })
        .collect();
    let ok = !words.is_empty()
        && words.iter().all(|w| {
            w.chars().all(|c| {
                c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '+' | '(' | ')' | ':')
            })
        });
    ok.then(|| words.join(" "))
}

/// The alternatives of an expression, each the ids all of which apply (`A OR (B AND C)` →
/// `[[A], [B, C]]`; `WITH` exceptions stay with their licence). Parentheses only group: AND binds
/// tighter than OR, as in SPDX.
pub fn alternatives(expr: &str) -> Vec<Vec<String>> {
    let flat = expr.replace(['(', ')'], " ");
    let words: Vec<&str> = flat.split_whitespace().collect();
    let mut out = vec![Vec::new()];
    let mut i = 0;
    while i < words.len() {
        match words[i] {
            "OR" => out.push(Vec::new()),
            "AND" => {}
            "WITH" => i += 1, // the exception names no licence of its own
            id => out.last_mut().expect("never empty").push(id.to_string()),
        }
        i += 1;
    }
    out.retain(|a| !a.is_empty());
    out
}

/// Is `id` a copyleft licence (GPL, AGPL, LGPL, MPL, EPL, EUPL, CDDL, OSL, CC BY-SA)?
pub fn is_copyleft(id: &str) -> bool {
    let id = id.to_ascii_uppercase();
    [
        "GPL-",
        "AGPL-",
        "LGPL-",
        "MPL-",
        "EPL-",
        "EUPL-",
        "CDDL-",
        "OSL-",
        "CC-BY-SA-",
    ]
    .iter()
    .any(|p| id.starts_with(p))
}

/// The query's licence filter: only some licences (`--licence MIT,Apache-2.0`), or no copyleft.
/// A file passes when one alternative of its expression is entirely allowed; a file whose
/// licence is unknown never passes a filter that asks for licences.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LicenceFilter {
    /// SPDX ids accepted (case-insensitive); empty = any.
    pub allowed: Vec<String>,
    /// Refuse copyleft licences ([`is_copyleft`]).
    pub no_copyleft: bool,
}

impl LicenceFilter {
    pub fn is_empty(&self) -> bool {
        self.allowed.is_empty() && !self.no_copyleft
    }

    pub fn allows(&self, licence: Option<&Licence>) -> bool {
        if self.is_empty() {
            return true;
        }
        let Some(expr) = licence.and_then(|l| l.expr.as_deref()) else {
            return false;
        };
        alternatives(expr).iter().any(|alt| {
            alt.iter().all(|id| {
                (self.allowed.is_empty() || self.allowed.iter().any(|a| a.eq_ignore_ascii_case(id)))
                    && !(self.no_copyleft && is_copyleft(id))
            })
        })
    }
}

/// The licence a licence file's text is, by key phrases of the common licences (MIT, Apache-2.0,
/// BSD-2/3-Clause, ISC, GPL/LGPL/AGPL, MPL-2.0, Unlicense, BSL-1.0, CC0-1.0, Zlib); `None` when
/// it is none of them. A file that is itself an SPDX tag or expression is taken at its word.
/// The full GPL texts do not say whether "or later" applies (only the files' notices do): they
/// are read as `-only`.
pub fn classify_text(text: &str) -> Option<String> {
    if let Some(e) = header_licence(text) {
        return Some(e);
    }
    let t: String = text
        .to_ascii_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let has = |p: &str| t.contains(p);
    let id = if has("gnu affero general public license") {
        "AGPL-3.0-only"
    } else if has("gnu lesser general public license") {
        if has("version 2.1") {
            "LGPL-2.1-only"
        } else {
            "LGPL-3.0-only"
        }
    } else if has("gnu general public license") {
        if has("version 3") {
            "GPL-3.0-only"
        } else {
            "GPL-2.0-only"
        }
    } else if has("mozilla public license") && (has("version 2.0") || has("v. 2.0")) {
        "MPL-2.0"
    } else if has("apache license") && has("version 2.0") {
        "Apache-2.0"
    } else if has("boost software license") {
        "BSL-1.0"
    } else if has("this is free and unencumbered software released into the public domain") {
        "Unlicense"
    } else if has("cc0 1.0 universal") {
        "CC0-1.0"
    } else if has("permission is hereby granted, free of charge, to any person obtaining a copy") {
        "MIT"
    } else if has(
        "permission to use, copy, modify, and/or distribute this software for any purpose",
    ) || has(
        "permission to use, copy, modify, and distribute this software for any purpose",
    ) {
        "ISC"
    } else if has("redistribution and use in source and binary forms") {
        if has("neither the name") || has("may be used to endorse or promote") {
            "BSD-3-Clause"
        } else {
            "BSD-2-Clause"
        }
    } else if has("this software is provided 'as-is', without any express or implied warranty")
        && has("altered source versions must be plainly marked")
    {
        "Zlib"
    } else {
        return None;
    };
    Some(id.to_string())
}

/// Is a file of this name a licence file (`LICENSE`, `LICENCE-MIT`, `COPYING.txt`, …)?
pub fn is_licence_file(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let n = [".txt", ".md", ".markdown", ".rst"]
        .iter()
        .find_map(|ext| n.strip_suffix(ext))
        .unwrap_or(&n);
    ["license", "licence", "copying", "unlicense"]
        .iter()
        .any(|p| n == *p || (n.starts_with(&format!("{p}-")) && !n.contains('.')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_read_from_the_first_lines_in_any_comment_syntax() {
        assert_eq!(
            header_licence("// SPDX-License-Identifier: MIT\nfn x() {}\n").as_deref(),
            Some("MIT")
        );
        assert_eq!(
            header_licence("#!/bin/sh\n# SPDX-License-Identifier: MIT or Apache-2.0\n").as_deref(),
            Some("MIT OR Apache-2.0")
        );
        assert_eq!(
            header_licence("/* SPDX-License-Identifier: GPL-2.0-only */\n").as_deref(),
            Some("GPL-2.0-only")
        );
        let late = format!("{}// SPDX-License-Identifier: MIT\n", "x\n".repeat(60));
        assert_eq!(header_licence(&late), None);
        assert_eq!(header_licence("// SPDX-License-Identifier: \n"), None);
    }

    #[test]
    fn licence_texts_are_recognised_by_their_key_phrases() {
        let mit = "MIT License\n\nCopyright (c) 2024 Someone\n\nPermission is hereby granted, free of charge, to any person obtaining a copy\nof this software ...";
        assert_eq!(classify_text(mit).as_deref(), Some("MIT"));
        let apache = "                                 Apache License\n                           Version 2.0, January 2004";
        assert_eq!(classify_text(apache).as_deref(), Some("Apache-2.0"));
        let gpl3 = "GNU GENERAL PUBLIC LICENSE\n Version 3, 29 June 2007";
        assert_eq!(classify_text(gpl3).as_deref(), Some("GPL-3.0-only"));
        let agpl = "GNU AFFERO GENERAL PUBLIC LICENSE\n Version 3, 19 November 2007";
        assert_eq!(classify_text(agpl).as_deref(), Some("AGPL-3.0-only"));
        let bsd3 = "Redistribution and use in source and binary forms, with or without\nmodification, are permitted ... Neither the name of the copyright holder";
        assert_eq!(classify_text(bsd3).as_deref(), Some("BSD-3-Clause"));
        assert_eq!(classify_text("All rights reserved."), None);
    }

    #[test]
    fn filters_accept_an_expression_when_one_alternative_is_allowed() {
        let l = |e: &str| Licence {
            expr: Some(e.into()),
            source: LicenceSource::Manifest,
        };
        let permissive = LicenceFilter {
            allowed: vec!["MIT".into(), "apache-2.0".into()],
            no_copyleft: false,
        };
        assert!(permissive.allows(Some(&l("MIT"))));
        assert!(permissive.allows(Some(&l("GPL-3.0-only OR Apache-2.0"))));
        assert!(!permissive.allows(Some(&l("GPL-3.0-only"))));
        assert!(!permissive.allows(Some(&l("MIT AND GPL-3.0-only"))));
        assert!(!permissive.allows(Some(&Licence::unknown())));
        assert!(!permissive.allows(None));
        let no_copyleft = LicenceFilter {
            allowed: vec![],
            no_copyleft: true,
        };
        assert!(no_copyleft.allows(Some(&l("BSD-3-Clause"))));
        assert!(no_copyleft.allows(Some(&l("MIT OR GPL-2.0-or-later"))));
        assert!(!no_copyleft.allows(Some(&l("AGPL-3.0-only"))));
        assert!(!no_copyleft.allows(Some(&l("(LGPL-2.1-only AND MIT)"))));
        assert!(
            no_copyleft.allows(Some(&l("Apache-2.0 WITH LLVM-exception"))),
            "an exception is not a licence"
        );
        assert!(LicenceFilter::default().allows(None));
    }

    #[test]
    fn licence_files_are_named_by_convention() {
        for n in [
            "LICENSE",
            "LICENSE-MIT",
            "licence.txt",
            "COPYING",
            "UNLICENSE",
            "LICENSE.md",
        ] {
            assert!(is_licence_file(n), "{n}");
        }
        for n in [
            "license.rs",
            "licenses",
            "src",
            "COPYRIGHT",
            "license-check.py",
        ] {
            assert!(!is_licence_file(n), "{n}");
        }
    }
}

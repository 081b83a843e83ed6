//! A repository's identity in the store: its remote URL, normalised so that the forms git accepts
//! for one repository (HTTPS, SSH, scp-like, with or without `.git`, with credentials) are one key,
//! and no credential is ever part of it.

/// `host/path` for a network remote (host lower-cased, port, user, password and `.git` dropped),
/// `file:/path` for a local one; `None` for an empty URL.
pub fn normalise(url: &str) -> Option<String> {
    let url = url.trim();
    if url.is_empty() {
        return None;
    }
    let (host, path) = if let Some((scheme, rest)) = url.split_once("://") {
        if scheme.eq_ignore_ascii_case("file") {
            return Some(format!("file:{}", tidy_path(rest)));
        }
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        (authority, path)
    } else if url.starts_with('/') || url.starts_with('.') {
        return Some(format!("file:{}", tidy_path(url)));
    } else if let Some((authority, path)) = url.split_once(':') {
        // scp-like: [user@]host:path
        (authority, path)
    } else {
        return Some(format!("file:{}", tidy_path(url)));
    };
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    let host = match host.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => host,
    };
    let path = tidy_path(path);
    let path = path.trim_start_matches('/');
    Some(format!("{}/{path}", host.to_ascii_lowercase()))
}

/// The last two segments of a normalised remote (`owner/name`), to show.
pub fn short_name(remote: &str) -> String {
    let path = remote.strip_prefix("file:").unwrap_or(remote);
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    match parts.as_slice() {
        [] => remote.to_string(),
        [one] => (*one).to_string(),
        [.., a, b] => format!("{a}/{b}"),
    }
}

fn tidy_path(path: &str) -> String {
    let path = path.trim_end_matches('/');
    path.strip_suffix(".git").unwrap_or(path).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_one_remote_is_one_key_without_credentials() {
        let want = Some("github.com/owner/name".to_string());
        for url in [
            "https://github.com/owner/name.git",
            "https://github.com/owner/name",
            "https://user:secret@GitHub.com/owner/name.git/",
            "git@github.com:owner/name.git",
            "ssh://git@github.com:22/owner/name.git",
            "ssh://github.com/owner/name",
        ] {
            assert_eq!(normalise(url), want, "{url}");
        }
        assert!(
            !normalise("https://user:secret@host/x")
                .unwrap()
                .contains("secret")
        );
    }

    #[test]
    fn local_remotes_are_paths() {
        assert_eq!(
            normalise("/srv/git/app.git").as_deref(),
            Some("file:/srv/git/app")
        );
        assert_eq!(
            normalise("file:///srv/git/app").as_deref(),
            Some("file:/srv/git/app")
        );
        assert_eq!(normalise("  "), None);
    }

    #[test]
    fn the_short_name_is_owner_and_name() {
        assert_eq!(short_name("github.com/owner/name"), "owner/name");
        assert_eq!(short_name("file:/srv/git/app"), "git/app");
    }
}

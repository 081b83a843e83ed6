//! A repository's indexing followed (`Repos.Watch`) or started (`Repos.Add`), reported to the
//! client as work-done `$/progress` when it accepts it (`window/workDoneProgress/create`).

use std::time::Duration;

use lsp_types::notification::Progress;
use lsp_types::request::WorkDoneProgressCreate;
use lsp_types::{
    NumberOrString, ProgressParams, ProgressParamsValue, WorkDoneProgress, WorkDoneProgressBegin,
    WorkDoneProgressCreateParams, WorkDoneProgressEnd, WorkDoneProgressReport,
};
use patina_proto::v1 as pb;

use crate::logging::log;
use crate::methods::common::rpc;
use crate::state::State;

/// Register (`add`) or follow a repository's indexing, reporting it as `$/progress` when the
/// client accepts it; a registered repository joins the search scope.
pub(crate) async fn index_with_progress(state: &State, path: &str, name: &str, add: bool) {
    let stream = if add {
        rpc!(
            state,
            pb::repos_client::ReposClient<_>,
            add,
            pb::AddRequest {
                path: path.into(),
                force: false,
            }
        )
    } else {
        rpc!(
            state,
            pb::repos_client::ReposClient<_>,
            watch,
            pb::WatchRequest { repo: path.into() }
        )
    };
    let mut stream = match stream {
        Ok(s) => s,
        Err((_, e)) => {
            log(format!("indexing {path}: {e}"));
            return;
        }
    };
    let token = NumberOrString::String(format!("patina-index-{path}"));
    let progress = state.client_supports_progress()
        && state
            .request::<WorkDoneProgressCreate>(
                WorkDoneProgressCreateParams {
                    token: token.clone(),
                },
                Duration::from_secs(5),
            )
            .await
            .is_some();
    let report = |value: WorkDoneProgress| {
        state.notify::<Progress>(ProgressParams {
            token: token.clone(),
            value: ProgressParamsValue::WorkDone(value),
        })
    };
    let title = format!(
        "Patina: indexing {}",
        if name.is_empty() { path } else { name }
    );
    if progress {
        report(WorkDoneProgress::Begin(WorkDoneProgressBegin {
            title,
            percentage: Some(0),
            ..Default::default()
        }));
    }
    let mut last: Option<pb::IndexProgress> = None;
    loop {
        match stream.message().await {
            Ok(Some(p)) => {
                if let Some(repo) = &p.repo
                    && add
                {
                    let mut scope = state.scope.lock().expect("scope lock");
                    if !scope.contains(&repo.id) {
                        scope.push(repo.id.clone());
                    }
                }
                if progress && p.files_total > 0 {
                    let pct = (p.files_done * 100 / p.files_total).min(100);
                    report(WorkDoneProgress::Report(WorkDoneProgressReport {
                        percentage: Some(pct as u32),
                        message: Some(format!("{}/{} files", p.files_done, p.files_total)),
                        ..Default::default()
                    }));
                }
                last = Some(p);
            }
            Ok(None) => break,
            Err(e) => {
                log(format!("indexing {path}: {}", e.message()));
                break;
            }
        }
    }
    if progress {
        let message = match &last {
            Some(p) if p.phase == pb::IndexPhase::Failed as i32 => format!("failed: {}", p.message),
            Some(p) => format!("{} files, {} changed", p.files_total, p.files_changed),
            None => "done".into(),
        };
        report(WorkDoneProgress::End(WorkDoneProgressEnd {
            message: Some(message),
        }));
    }
}

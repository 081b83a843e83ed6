//! `patina.v1.Graph`: navigation on the dependency graph (`patina refs|callers|callees|defs`),
//! its neighbourhood of a symbol or file (`patina graph`) and the repository map (`patina map`).

use patina_proto::v1 as pb;
use tonic::{Request, Response, Status};

use super::{Services, blocking};
use patina_core::UserError;

#[tonic::async_trait]
impl pb::graph_server::Graph for Services {
    async fn navigate(
        &self,
        req: Request<pb::NavigateRequest>,
    ) -> Result<Response<pb::NavigateResponse>, Status> {
        let req = req.into_inner();
        let repos = self.0.repos.clone();
        let sites = blocking(move || {
            let repos = if req.repos.is_empty() {
                repos.all()
            } else {
                req.repos
                    .iter()
                    .map(|k| repos.resolve(k))
                    .collect::<anyhow::Result<Vec<_>>>()?
            };
            crate::services::navigate::navigate(&repos, &req.what, &req.symbol)
        })
        .await?;
        Ok(Response::new(pb::NavigateResponse {
            sites: sites
                .into_iter()
                .map(|(repo, s)| pb::GraphSite {
                    repo,
                    path: s.path,
                    line: s.line,
                    end_line: s.end_line,
                    symbol: s.symbol,
                    kind: s.kind,
                    resolution: s.resolution,
                    target: s.target,
                    call: s.call,
                })
                .collect(),
        }))
    }

    async fn walk(
        &self,
        req: Request<pb::WalkRequest>,
    ) -> Result<Response<pb::WalkResponse>, Status> {
        use patina_index::neighbourhood::{Direction, NodeKind, neighbourhood};
        let req = req.into_inner();
        let repos = self.0.repos.clone();
        let resp = blocking(move || {
            let target = req.target.trim().trim_start_matches("./").to_string();
            if target.is_empty() {
                return Err(
                    UserError::Invalid("empty target: give a file or a symbol".into()).into(),
                );
            }
            let direction = Direction::parse(&req.direction).ok_or_else(|| {
                UserError::Invalid(format!(
                    "unknown direction '{}' (out, in, both)",
                    req.direction
                ))
            })?;
            let depth = match req.depth {
                0 => 2,
                d => d.min(10),
            };
            let repos = if req.repos.is_empty() {
                repos.all()
            } else {
                req.repos
                    .iter()
                    .map(|k| repos.resolve(k))
                    .collect::<anyhow::Result<Vec<_>>>()?
            };
            for repo in repos {
                let graph = repo.index().graph();
                let Some(g) = neighbourhood(&graph, &target, depth, direction) else {
                    continue;
                };
                return Ok(pb::WalkResponse {
                    repo: repo.record().name,
                    roots: g.roots as u32,
                    cut: g.cut,
                    edges: g
                        .links
                        .iter()
                        .map(|l| pb::WalkEdge {
                            from: l.from as u32,
                            to: l.to as u32,
                            relation: l.relation.name().into(),
                            line: l.line,
                            resolution: l.resolution.map(|r| r.name().into()).unwrap_or_default(),
                        })
                        .collect(),
                    nodes: g
                        .nodes
                        .into_iter()
                        .map(|n| pb::WalkNode {
                            label: n.label(),
                            kind: match &n.kind {
                                NodeKind::Def { kind, .. } => (*kind).into(),
                                NodeKind::File => "file".into(),
                            },
                            id: n.id,
                            path: n.path.to_string(),
                            start_line: n.start_line,
                            end_line: n.end_line,
                            depth: n.depth,
                        })
                        .collect(),
                });
            }
            Err(UserError::NotFound(format!(
                "'{target}' is neither a file nor a symbol of the repositories in scope"
            ))
            .into())
        })
        .await?;
        Ok(Response::new(resp))
    }

    async fn map(&self, req: Request<pb::MapRequest>) -> Result<Response<pb::MapResponse>, Status> {
        let req = req.into_inner();
        let repos = self.0.repos.clone();
        let resp = blocking(move || {
            let repo = if req.repo.is_empty() {
                let mut all = repos.all();
                if all.len() != 1 {
                    return Err(UserError::Invalid(format!(
                        "{} repositories are registered: name one (repo)",
                        all.len()
                    ))
                    .into());
                }
                all.remove(0)
            } else {
                repos.resolve(&req.repo)?
            };
            let m = patina_index::repo_map::repo_map(
                repo.index(),
                &repo.record().name,
                &patina_index::repo_map::MapRequest {
                    budget_tokens: req.token_budget as usize,
                    seed_paths: req.seed_paths,
                    query: req.query,
                },
            )?;
            Ok(pb::MapResponse {
                repo: repo.record().name,
                text: m.text,
                used_tokens: m.used_tokens as u32,
                budget_tokens: m.budget_tokens as u32,
                total_files: m.total_files as u32,
                files: m
                    .files
                    .into_iter()
                    .map(|f| pb::MapFile {
                        path: f.path,
                        rank: f.rank,
                        symbols: f
                            .symbols
                            .into_iter()
                            .map(|s| pb::MapSymbol {
                                symbol: s.symbol,
                                kind: s.kind.into(),
                                start_line: s.start_line,
                                end_line: s.end_line,
                                signature: s.signature,
                                rank: s.rank,
                            })
                            .collect(),
                    })
                    .collect(),
            })
        })
        .await?;
        Ok(Response::new(resp))
    }
}

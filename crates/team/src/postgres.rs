//! [`SharedStore`] on PostgreSQL with pgvector, over the engine's own protocol (`tokio-postgres`).
//!
//! The schema (`patina.*`) is created by the first publish, under an advisory lock. Readers need
//! `USAGE` on the schema and `SELECT` on its tables (a publish grants them to the roles it names)
//! and see only the repositories `patina.grants` gives their roles: row-level security on every
//! table, by repository. The publisher owns the tables, so it reads and writes everything.

use std::collections::HashSet;
use std::str::FromStr;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use futures_util::pin_mut;
use pgvector::Vector;
use tokio::sync::Mutex;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::config::SslMode;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, Config, NoTls};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::{
    Begun, Chunk, CommitHead, FileContent, Key, OrgHit, OrgHits, OrgQuery, Published, SharedStore,
    StoreFuture, coordination_queries, valid_role,
};

/// Vectors one COPY writes.
const VECTOR_BATCH: usize = 5_000;
/// Keys one lookup asks for.
const KEY_BATCH: usize = 10_000;

/// The vectors' nearest-neighbour index. A publish that brings more vectors than the store holds
/// drops it and builds it again once its vectors are in ([`SharedStore::load_begin`]): pgvector
/// builds a graph over a table far faster than it inserts into one (254 vectors a second on this
/// machine, bench/RESULTS.md), and as such a publish at least doubles the table, the builds of a
/// store's life cost no more than twice its vectors. Whoever begins a publish creates it when it
/// is missing (after a publisher died in its load).
const VECTOR_INDEX: &str = "CREATE INDEX IF NOT EXISTS vectors_near ON patina.vectors
           USING hnsw (embedding vector_cosine_ops)";

/// The advisory lock a bulk load of vectors holds on its connection, so one publisher at a time
/// drops the index; a publisher that does not get it inserts into the index as it stands.
const LOAD_LOCK: &str = "hashtext('patina-vectors-load')";

/// The tables, their indexes and their row-level security; safe to run again.
fn schema(dim: usize) -> String {
    let tables = [
        "repos",
        "grants",
        "files",
        "chunks",
        "vectors",
        "commits",
        "commit_files",
        "imports",
    ];
    let mut sql = format!(
        "CREATE EXTENSION IF NOT EXISTS vector;
         CREATE SCHEMA IF NOT EXISTS patina;
         CREATE TABLE IF NOT EXISTS patina.repos (
           repo_id bigserial PRIMARY KEY, remote text NOT NULL UNIQUE, name text NOT NULL);
         CREATE TABLE IF NOT EXISTS patina.grants (
           repo_id bigint NOT NULL REFERENCES patina.repos, role name NOT NULL,
           PRIMARY KEY (repo_id, role));
         CREATE TABLE IF NOT EXISTS patina.files (
           repo_id bigint NOT NULL REFERENCES patina.repos, file_key bytea NOT NULL,
           path text NOT NULL, PRIMARY KEY (repo_id, file_key));
         ALTER TABLE patina.files ADD COLUMN IF NOT EXISTS facts bytea;
         CREATE TABLE IF NOT EXISTS patina.chunks (
           repo_id bigint NOT NULL, file_key bytea NOT NULL, ord int NOT NULL, path text NOT NULL,
           start_line int NOT NULL, end_line int NOT NULL, parent text NOT NULL,
           symbol text NOT NULL, kind text NOT NULL, vkey bytea NOT NULL, body text NOT NULL,
           tsv tsvector GENERATED ALWAYS AS
             (to_tsvector('simple', path || ' ' || symbol || ' ' || body)) STORED,
           PRIMARY KEY (repo_id, file_key, ord));
         CREATE INDEX IF NOT EXISTS chunks_tsv ON patina.chunks USING gin (tsv);
         CREATE INDEX IF NOT EXISTS chunks_vkey ON patina.chunks (repo_id, vkey);
         CREATE INDEX IF NOT EXISTS chunks_symbol ON patina.chunks (lower(symbol))
           WHERE symbol <> '' AND kind NOT IN ('section', 'block', 'window');
         CREATE TABLE IF NOT EXISTS patina.imports (
           repo_id bigint NOT NULL, file_key bytea NOT NULL, ord int NOT NULL, line int NOT NULL,
           module text NOT NULL, name text NOT NULL, alias text NOT NULL,
           PRIMARY KEY (repo_id, file_key, ord));
         CREATE INDEX IF NOT EXISTS imports_module ON patina.imports (module);
         CREATE TABLE IF NOT EXISTS patina.vectors (
           repo_id bigint NOT NULL REFERENCES patina.repos, vkey bytea NOT NULL,
           model text NOT NULL, embedding vector({dim}) NOT NULL, PRIMARY KEY (repo_id, vkey));
         CREATE INDEX IF NOT EXISTS vectors_vkey ON patina.vectors (vkey);
         {VECTOR_INDEX};
         CREATE TABLE IF NOT EXISTS patina.commits (
           repo_id bigint NOT NULL REFERENCES patina.repos, sha text NOT NULL, model text NOT NULL,
           files int NOT NULL, chunks int NOT NULL,
           published_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (repo_id, sha, model));
         CREATE TABLE IF NOT EXISTS patina.commit_files (
           repo_id bigint NOT NULL, sha text NOT NULL, model text NOT NULL, path text NOT NULL,
           file_key bytea NOT NULL, PRIMARY KEY (repo_id, sha, model, path));
         CREATE INDEX IF NOT EXISTS commit_files_key ON patina.commit_files (repo_id, file_key);
         ALTER TABLE patina.grants ENABLE ROW LEVEL SECURITY;
         DROP POLICY IF EXISTS patina_read ON patina.grants;
         CREATE POLICY patina_read ON patina.grants FOR SELECT
           USING (pg_has_role(current_user, role, 'MEMBER'));"
    );
    for t in tables.iter().filter(|t| **t != "grants") {
        sql.push_str(&format!(
            "ALTER TABLE patina.{t} ENABLE ROW LEVEL SECURITY;
             DROP POLICY IF EXISTS patina_read ON patina.{t};
             CREATE POLICY patina_read ON patina.{t} FOR SELECT
               USING (repo_id IN (SELECT g.repo_id FROM patina.grants g));"
        ));
    }
    sql
}

/// A team's store on PostgreSQL: `url` is a libpq connection string or URI (the password may
/// come from it or from `PGPASSWORD`-style settings in it; it is never shown).
pub struct Postgres {
    config: Config,
    /// TLS verified against the team's CA, when one is given; otherwise the protocol in the clear.
    tls: Option<MakeRustlsConnect>,
    timeout: Duration,
    dim: usize,
    /// The reading connection, opened on first use and again after it broke.
    reader: Mutex<Option<Client>>,
    /// A bulk load holds [`LOAD_LOCK`] on the reading connection, and dropped the index.
    loading: Mutex<bool>,
    /// A bulk load ended: the commit's file list gets fresh statistics once it is in.
    analyse_commit: std::sync::atomic::AtomicBool,
}

impl Postgres {
    /// Check `url` and remember it; nothing connects until the first request. Each request
    /// (connecting included) gives up after `timeout`; a publish only bounds its connecting.
    /// With `ca_file` (PEM), every connection is TLS, its certificate verified against those CAs
    /// for the URL's host name; a URL that asks for TLS (`sslmode=require`) without one is an error.
    pub fn new(
        url: &str,
        timeout: Duration,
        dim: usize,
        ca_file: Option<&std::path::Path>,
    ) -> Result<Postgres> {
        let mut config = Config::from_str(url).map_err(|e| {
            anyhow!("the team store's URL is not a PostgreSQL connection string: {e}")
        })?;
        let tls = match ca_file {
            Some(path) => {
                config.ssl_mode(SslMode::Require);
                Some(MakeRustlsConnect::new(client_config(path)?))
            }
            None if config.get_ssl_mode() == SslMode::Require => bail!(
                "the team store's URL asks for TLS (sslmode=require): give the CA that signed the \
                 server's certificate as [team] ca_file"
            ),
            None => {
                // Without a CA nothing could be verified: the clear protocol, as asked.
                config.ssl_mode(SslMode::Disable);
                None
            }
        };
        config.connect_timeout(timeout);
        if config.get_application_name().is_none() {
            config.application_name("patina");
        }
        Ok(Postgres {
            config,
            tls,
            timeout,
            dim,
            reader: Mutex::new(None),
            loading: Mutex::new(false),
            analyse_commit: std::sync::atomic::AtomicBool::new(false),
        })
    }

    async fn connect(&self) -> Result<Client> {
        let late = || {
            anyhow!(
                "{}: no connection within {:?}",
                self.describe(),
                self.timeout
            )
        };
        let failed = || format!("connecting to {}", self.describe());
        let client = match &self.tls {
            Some(tls) => open(&self.config, tls.clone(), self.timeout).await,
            None => open(&self.config, NoTls, self.timeout).await,
        }
        .map_err(|e| e.map_or_else(late, |e| anyhow::Error::new(e).context(failed())))?;
        Ok(client)
    }

    /// The reading connection, opened when there is none or it broke.
    async fn reader(&self) -> Result<tokio::sync::MutexGuard<'_, Option<Client>>> {
        let mut slot = self.reader.lock().await;
        if slot.as_ref().is_none_or(Client::is_closed) {
            *slot = Some(self.connect().await?);
        }
        Ok(slot)
    }

    /// `work` within the timeout, or an error naming the engine.
    async fn bounded<T>(&self, work: impl std::future::Future<Output = Result<T>>) -> Result<T> {
        tokio::time::timeout(self.timeout, work)
            .await
            .map_err(|_| anyhow!("{}: no answer within {:?}", self.describe(), self.timeout))?
    }

    /// The tables (created when missing), the repository's row and its readers' grants; whether
    /// the commit is already published.
    async fn begin_now(&self, head: &CommitHead) -> Result<Begun> {
        for r in &head.readers {
            if !valid_role(r) {
                bail!("'{r}' is not a role name (letters, digits, '_' and '-')");
            }
        }
        let mut slot = self.reader().await?;
        let client = slot.as_mut().expect("connected");
        let tx = client.transaction().await?;
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtext('patina-schema'))",
            &[],
        )
        .await?;
        tx.batch_execute(&schema(self.dim)).await.context(
            "creating the store's tables (the publishing role needs CREATE on the database, and \
             pgvector installed)",
        )?;
        let repo: i64 = tx
            .query_one(
                "INSERT INTO patina.repos (remote, name) VALUES ($1, $2)
                 ON CONFLICT (remote) DO UPDATE SET name = EXCLUDED.name RETURNING repo_id",
                &[&head.remote, &head.name],
            )
            .await?
            .get(0);
        for r in &head.readers {
            tx.execute(
                "INSERT INTO patina.grants (repo_id, role) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                &[&repo, &r.as_str()],
            )
            .await?;
            tx.batch_execute(&format!(
                "GRANT USAGE ON SCHEMA patina TO \"{r}\"; \
                 GRANT SELECT ON ALL TABLES IN SCHEMA patina TO \"{r}\";"
            ))
            .await
            .with_context(|| format!("granting role '{r}' read access"))?;
        }
        tx.commit().await?;
        let already = client
            .query_opt(
                "SELECT 1 FROM patina.commits WHERE repo_id = $1 AND sha = $2 AND model = $3",
                &[&repo, &head.sha, &head.model],
            )
            .await?
            .is_some();
        Ok(Begun {
            repo,
            sha: head.sha.clone(),
            model: head.model.clone(),
            already,
        })
    }

    async fn put_files_now(&self, b: &Begun, files: &[FileContent]) -> Result<usize> {
        let mut slot = self.reader().await?;
        let client = slot.as_mut().expect("connected");
        let tx = client.transaction().await?;
        let mut cols = ChunkColumns::default();
        for f in files {
            for (ord, ch) in f.chunks.iter().enumerate() {
                cols.push(&f.key, ord, ch);
            }
        }
        tx.execute(
            "INSERT INTO patina.chunks (repo_id, file_key, ord, path, start_line, end_line,
               parent, symbol, kind, vkey, body)
             SELECT $1, * FROM unnest($2::bytea[], $3::int[], $4::text[], $5::int[], $6::int[],
               $7::text[], $8::text[], $9::text[], $10::bytea[], $11::text[])
             ON CONFLICT DO NOTHING",
            &[
                &b.repo,
                &cols.file,
                &cols.ord,
                &cols.path,
                &cols.start,
                &cols.end,
                &cols.parent,
                &cols.symbol,
                &cols.kind,
                &cols.vkey,
                &cols.body,
            ],
        )
        .await?;
        let mut imports = ImportColumns::default();
        for f in files {
            for (ord, i) in f.facts.iter().flat_map(|x| &x.imports).enumerate() {
                imports.push(&f.key, ord, i);
            }
        }
        tx.execute(
            "INSERT INTO patina.imports (repo_id, file_key, ord, line, module, name, alias)
             SELECT $1, * FROM unnest($2::bytea[], $3::int[], $4::int[], $5::text[], $6::text[],
               $7::text[])
             ON CONFLICT DO NOTHING",
            &[
                &b.repo,
                &imports.file,
                &imports.ord,
                &imports.line,
                &imports.module,
                &imports.name,
                &imports.alias,
            ],
        )
        .await?;
        // The file's row last: a file is stored with all its chunks and facts or not at all.
        let keys: Vec<Vec<u8>> = files.iter().map(|f| f.key.to_vec()).collect();
        let paths: Vec<String> = files.iter().map(|f| no_nul(&f.path)).collect();
        let facts: Vec<Option<Vec<u8>>> = files
            .iter()
            .map(|f| f.facts.as_ref().map(|x| x.encode()))
            .collect();
        tx.execute(
            "INSERT INTO patina.files (repo_id, file_key, path, facts)
             SELECT $1, * FROM unnest($2::bytea[], $3::text[], $4::bytea[]) ON CONFLICT DO NOTHING",
            &[&b.repo, &keys, &paths, &facts],
        )
        .await?;
        tx.commit().await?;
        Ok(cols.ord.len())
    }

    async fn load_begin_now(&self, incoming: usize) -> Result<bool> {
        let mut loading = self.loading.lock().await;
        let slot = self.reader().await?;
        let client = slot.as_ref().expect("connected");
        if *loading || incoming == 0 {
            return Ok(*loading);
        }
        let locked: bool = client
            .query_one(&format!("SELECT pg_try_advisory_lock({LOAD_LOCK})"), &[])
            .await?
            .get(0);
        if !locked {
            return Ok(false);
        }
        // Only the tables' owner may drop the index; the owner counts every row (no row-level
        // security applies to it).
        let row = client
            .query_one(
                "SELECT pg_has_role(current_user, c.relowner, 'USAGE'),
                   EXISTS (SELECT 1 FROM pg_indexes
                           WHERE schemaname = 'patina' AND indexname = 'vectors_near'),
                   (SELECT count(*) FROM patina.vectors)
                 FROM pg_class c WHERE c.oid = 'patina.vectors'::regclass",
                &[],
            )
            .await?;
        let (owner, indexed, held): (bool, bool, i64) = (row.get(0), row.get(1), row.get(2));
        if owner && indexed && incoming as i64 > held {
            client
                .batch_execute("DROP INDEX IF EXISTS patina.vectors_near")
                .await?;
            *loading = true;
            return Ok(true);
        }
        client
            .execute(&format!("SELECT pg_advisory_unlock({LOAD_LOCK})"), &[])
            .await?;
        Ok(false)
    }

    async fn load_end_now(&self) -> Result<()> {
        let mut loading = self.loading.lock().await;
        if !*loading {
            return Ok(());
        }
        let slot = self.reader().await?;
        let client = slot.as_ref().expect("connected");
        crate::before_index_hook();
        // A connection that broke since took the lock with it; the index is built either way.
        client
            .batch_execute(VECTOR_INDEX)
            .await
            .context("building the store's vector index again after a bulk load")?;
        // Fresh statistics, or the planner, which saw far smaller tables, scans the vectors
        // whole for every lookup of keys (a clone's take went from 1 s to 28 s at 110k vectors).
        client
            .batch_execute(
                "ANALYZE patina.vectors; ANALYZE patina.chunks; ANALYZE patina.files;
                 ANALYZE patina.imports",
            )
            .await?;
        *loading = false;
        self.analyse_commit
            .store(true, std::sync::atomic::Ordering::Relaxed);
        client
            .execute(&format!("SELECT pg_advisory_unlock({LOAD_LOCK})"), &[])
            .await?;
        Ok(())
    }

    async fn put_vectors_now(&self, b: &Begun, vectors: &[(Key, Vec<f32>)]) -> Result<usize> {
        let mut slot = self.reader().await?;
        let client = slot.as_mut().expect("connected");
        let mut sent = 0;
        for batch in vectors.chunks(VECTOR_BATCH) {
            let tx = client.transaction().await?;
            tx.batch_execute(&format!(
                "CREATE TEMP TABLE patina_stage (vkey bytea, embedding vector({})) ON COMMIT DROP",
                self.dim
            ))
            .await?;
            let vector_type = tx
                .prepare("SELECT embedding FROM patina_stage")
                .await?
                .columns()[0]
                .type_()
                .clone();
            let sink = tx
                .copy_in("COPY patina_stage (vkey, embedding) FROM STDIN (FORMAT binary)")
                .await?;
            let writer = BinaryCopyInWriter::new(sink, &[Type::BYTEA, vector_type]);
            pin_mut!(writer);
            for (k, v) in batch.iter().filter(|(_, v)| v.len() == self.dim) {
                let key = k.to_vec();
                let vector = Vector::from(v.clone());
                writer.as_mut().write(&[&key, &vector]).await?;
                sent += 1;
            }
            writer.finish().await?;
            tx.execute(
                "INSERT INTO patina.vectors (repo_id, vkey, model, embedding)
                 SELECT $1, vkey, $2, embedding FROM patina_stage ON CONFLICT DO NOTHING",
                &[&b.repo, &b.model],
            )
            .await?;
            tx.commit().await?;
        }
        Ok(sent)
    }

    async fn commit_now(&self, b: &Begun, files: &[(String, Key)], chunks: usize) -> Result<bool> {
        let mut slot = self.reader().await?;
        let client = slot.as_mut().expect("connected");
        // The commit, whole, in one transaction: until it commits no reader sees any of it.
        let tx = client.transaction().await?;
        let paths: Vec<String> = files.iter().map(|f| no_nul(&f.0)).collect();
        let keys: Vec<Vec<u8>> = files.iter().map(|f| f.1.to_vec()).collect();
        tx.execute(
            "INSERT INTO patina.commit_files (repo_id, sha, model, path, file_key)
             SELECT $1, $2, $3, * FROM unnest($4::text[], $5::bytea[]) ON CONFLICT DO NOTHING",
            &[&b.repo, &b.sha, &b.model, &paths, &keys],
        )
        .await?;
        let inserted = tx
            .execute(
                "INSERT INTO patina.commits (repo_id, sha, model, files, chunks)
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                &[
                    &b.repo,
                    &b.sha,
                    &b.model,
                    &(files.len() as i32),
                    &(chunks as i32),
                ],
            )
            .await?;
        crate::before_commit_hook();
        tx.commit().await?;
        // After a bulk load, the commit's file list is as large as the repository: without
        // statistics the planner takes it for empty, and the first --org question took 122 s
        // (490k chunks) until autovacuum came by.
        if self
            .analyse_commit
            .swap(false, std::sync::atomic::Ordering::Relaxed)
        {
            client.batch_execute("ANALYZE patina.commit_files").await?;
        }
        Ok(inserted == 1)
    }
}

/// Connect with `tls` within `timeout` (`None`: it ran out), the connection's task spawned.
async fn open<T>(
    config: &Config,
    tls: T,
    timeout: Duration,
) -> std::result::Result<Client, Option<tokio_postgres::Error>>
where
    T: tokio_postgres::tls::MakeTlsConnect<tokio_postgres::Socket>,
    T::Stream: Send + 'static,
{
    let (client, connection) = tokio::time::timeout(timeout, config.connect(tls))
        .await
        .map_err(|_| None)?
        .map_err(Some)?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

/// A TLS client that trusts the CAs of the PEM file at `path` (and nothing else).
fn client_config(path: &std::path::Path) -> Result<rustls::ClientConfig> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| anyhow!("reading the team store's CA file {}: {e}", path.display()))?;
    for cert in certs {
        let cert = cert.map_err(|e| anyhow!("{}: {e}", path.display()))?;
        roots
            .add(cert)
            .map_err(|e| anyhow!("{}: not a CA certificate: {e}", path.display()))?;
    }
    if roots.is_empty() {
        bail!("{} holds no certificate", path.display());
    }
    // ring, not aws-lc-rs: the latter's C build (cmake, minutes) would fall on every cold build
    // of the daemon. ring lacks the post-quantum key exchange rustls now prefers, hence the
    // deprecation; TLS 1.3 with X25519 stays what libpq itself negotiates.
    #[allow(deprecated)]
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| anyhow!("TLS set-up: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// Of `keys`, those `sql` (`… WHERE repo_id = $1 AND key = ANY($2)`) does not find, in batches.
async fn absent(client: &Client, sql: &str, repo: i64, keys: &[Key]) -> Result<Vec<Key>> {
    let mut held: HashSet<Vec<u8>> = HashSet::new();
    for batch in keys.chunks(KEY_BATCH) {
        let batch: Vec<Vec<u8>> = batch.iter().map(|k| k.to_vec()).collect();
        for row in client.query(sql, &[&repo, &batch]).await? {
            held.insert(row.get::<_, Vec<u8>>(0));
        }
    }
    Ok(keys
        .iter()
        .filter(|k| !held.contains(k.as_slice()))
        .copied()
        .collect())
}

/// Chunks as columns, for one `unnest` insert.
#[derive(Default)]
struct ChunkColumns {
    file: Vec<Vec<u8>>,
    ord: Vec<i32>,
    path: Vec<String>,
    start: Vec<i32>,
    end: Vec<i32>,
    parent: Vec<String>,
    symbol: Vec<String>,
    kind: Vec<String>,
    vkey: Vec<Vec<u8>>,
    body: Vec<String>,
}

impl ChunkColumns {
    fn push(&mut self, file: &Key, ord: usize, c: &Chunk) {
        self.file.push(file.to_vec());
        self.ord.push(ord as i32);
        self.path.push(no_nul(&c.path));
        self.start.push(c.start_line as i32);
        self.end.push(c.end_line as i32);
        self.parent.push(no_nul(&c.parent));
        self.symbol.push(no_nul(&c.symbol));
        self.kind.push(no_nul(&c.kind));
        self.vkey.push(c.vkey.to_vec());
        self.body.push(no_nul(&c.body));
    }
}

/// Imports as columns, for one `unnest` insert.
#[derive(Default)]
struct ImportColumns {
    file: Vec<Vec<u8>>,
    ord: Vec<i32>,
    line: Vec<i32>,
    module: Vec<String>,
    name: Vec<String>,
    alias: Vec<String>,
}

impl ImportColumns {
    fn push(&mut self, file: &Key, ord: usize, i: &patina_core::Import) {
        self.file.push(file.to_vec());
        self.ord.push(ord as i32);
        self.line.push(i.line as i32);
        self.module.push(no_nul(&i.module));
        self.name
            .push(no_nul(i.name.as_deref().unwrap_or_default()));
        self.alias
            .push(no_nul(i.alias.as_deref().unwrap_or_default()));
    }
}

/// PostgreSQL's text holds no NUL character.
fn no_nul(s: &str) -> String {
    s.replace('\0', "\u{fffd}")
}

fn key_of(bytes: &[u8]) -> Option<Key> {
    bytes.try_into().ok()
}

const LATEST: &str = "latest AS (
    SELECT DISTINCT ON (repo_id) repo_id, sha FROM patina.commits WHERE model = $1
    ORDER BY repo_id, published_at DESC)";

/// A ranking of the newest published chunks that meet `condition` by `score` (best first; ties
/// by repository, path and line), the best `$4`, but those of the remotes in `$3`; `$1` is the
/// model. The condition is met through its own index first (materialised, so the planner cannot
/// turn it into a filter over a repository's every chunk: 1.7 s for one common word at 490k
/// chunks, against 0.11 s this way), then kept to the newest commits; the texts (TOASTed) are
/// read for the best alone.
fn ranked(score: &str, condition: &str) -> String {
    format!(
        "WITH {LATEST},
         matched AS MATERIALIZED (
           SELECT ch.repo_id, ch.file_key, ch.ord, ch.path, ch.start_line, {score} AS score
           FROM patina.chunks ch WHERE {condition}),
         top AS (
           SELECT m.repo_id, m.file_key, m.ord, m.score
           FROM matched m
           JOIN latest l ON l.repo_id = m.repo_id
           JOIN patina.commit_files cf ON cf.repo_id = m.repo_id AND cf.sha = l.sha
             AND cf.model = $1 AND cf.file_key = m.file_key
           JOIN patina.repos r ON r.repo_id = m.repo_id
           WHERE r.remote <> ALL($3)
           ORDER BY m.score DESC, r.remote, m.path, m.start_line LIMIT $4)
         SELECT r.remote, r.name, l.sha, ch.path, ch.start_line, ch.end_line, ch.symbol, ch.body,
           top.score
         FROM top
         JOIN patina.chunks ch USING (repo_id, file_key, ord)
         JOIN latest l ON l.repo_id = top.repo_id
         JOIN patina.repos r ON r.repo_id = top.repo_id
         ORDER BY top.score DESC, r.remote, ch.path, ch.start_line"
    )
}

fn hit(row: &tokio_postgres::Row) -> OrgHit {
    OrgHit {
        remote: row.get(0),
        name: row.get(1),
        sha: row.get(2),
        path: row.get(3),
        start_line: row.get::<_, i32>(4).max(0) as u32,
        end_line: row.get::<_, i32>(5).max(0) as u32,
        symbol: row.get(6),
        body: row.get(7),
        score: row.get::<_, f64>(8) as f32,
    }
}

impl SharedStore for Postgres {
    fn describe(&self) -> String {
        let host = self
            .config
            .get_hosts()
            .first()
            .map(|h| match h {
                tokio_postgres::config::Host::Tcp(h) => h.clone(),
                tokio_postgres::config::Host::Unix(p) => p.display().to_string(),
            })
            .unwrap_or_else(|| "localhost".into());
        let port = self.config.get_ports().first().copied().unwrap_or(5432);
        let db = self.config.get_dbname().unwrap_or("postgres");
        let user = self.config.get_user().unwrap_or("(default user)");
        let tls = if self.tls.is_some() { ", TLS" } else { "" };
        format!("PostgreSQL {host}:{port}/{db} as {user}{tls}")
    }

    fn begin<'a>(&'a self, head: &'a CommitHead) -> StoreFuture<'a, Begun> {
        Box::pin(self.begin_now(head))
    }

    fn missing_files<'a>(&'a self, b: &'a Begun, keys: &'a [Key]) -> StoreFuture<'a, Vec<Key>> {
        Box::pin(self.bounded(async move {
            let slot = self.reader().await?;
            let client = slot.as_ref().expect("connected");
            let sql = "SELECT file_key FROM patina.files WHERE repo_id = $1 AND file_key = ANY($2)";
            absent(client, sql, b.repo, keys).await
        }))
    }

    fn missing_vectors<'a>(&'a self, b: &'a Begun, keys: &'a [Key]) -> StoreFuture<'a, Vec<Key>> {
        Box::pin(self.bounded(async move {
            let slot = self.reader().await?;
            let client = slot.as_ref().expect("connected");
            let sql = "SELECT vkey FROM patina.vectors WHERE repo_id = $1 AND vkey = ANY($2)";
            absent(client, sql, b.repo, keys).await
        }))
    }

    fn put_files<'a>(&'a self, b: &'a Begun, files: &'a [FileContent]) -> StoreFuture<'a, usize> {
        Box::pin(self.put_files_now(b, files))
    }

    fn load_begin<'a>(&'a self, _b: &'a Begun, incoming: usize) -> StoreFuture<'a, bool> {
        Box::pin(self.load_begin_now(incoming))
    }

    fn load_end<'a>(&'a self, _b: &'a Begun) -> StoreFuture<'a, ()> {
        Box::pin(self.load_end_now())
    }

    fn put_vectors<'a>(
        &'a self,
        b: &'a Begun,
        vectors: &'a [(Key, Vec<f32>)],
    ) -> StoreFuture<'a, usize> {
        Box::pin(self.put_vectors_now(b, vectors))
    }

    fn commit<'a>(
        &'a self,
        b: &'a Begun,
        files: &'a [(String, Key)],
        chunks: usize,
    ) -> StoreFuture<'a, bool> {
        Box::pin(self.commit_now(b, files, chunks))
    }

    fn vectors<'a>(
        &'a self,
        model: &'a str,
        keys: &'a [Key],
    ) -> StoreFuture<'a, Vec<(Key, Vec<f32>)>> {
        Box::pin(self.bounded(async move {
            {
                let slot = self.reader().await?;
                let client = slot.as_ref().expect("connected");
                let mut out = Vec::new();
                for batch in keys.chunks(KEY_BATCH) {
                    let batch: Vec<Vec<u8>> = batch.iter().map(|k| k.to_vec()).collect();
                    let rows = client
                        .query(
                            "SELECT DISTINCT ON (vkey) vkey, embedding FROM patina.vectors
                             WHERE model = $1 AND vkey = ANY($2)",
                            &[&model, &batch],
                        )
                        .await?;
                    for row in rows {
                        let key: Vec<u8> = row.get(0);
                        let v: Vector = row.get(1);
                        if let Some(k) = key_of(&key) {
                            out.push((k, v.to_vec()));
                        }
                    }
                }
                Ok(out)
            }
        }))
    }

    fn published(&self) -> StoreFuture<'_, Vec<Published>> {
        Box::pin(self.bounded(async move {
            {
                let slot = self.reader().await?;
                let client = slot.as_ref().expect("connected");
                let rows = client
                    .query(
                        "SELECT DISTINCT ON (r.repo_id) r.remote, r.name, c.sha, c.model, c.files,
                           c.chunks, extract(epoch FROM c.published_at)::bigint
                         FROM patina.commits c JOIN patina.repos r USING (repo_id)
                         ORDER BY r.repo_id, c.published_at DESC",
                        &[],
                    )
                    .await
                    .map_err(missing_schema)?;
                let mut out: Vec<Published> = rows
                    .iter()
                    .map(|row| Published {
                        remote: row.get(0),
                        name: row.get(1),
                        sha: row.get(2),
                        model: row.get(3),
                        files: row.get::<_, i32>(4).max(0) as u64,
                        chunks: row.get::<_, i32>(5).max(0) as u64,
                        published_at: row.get(6),
                    })
                    .collect();
                out.sort_by(|a, b| a.remote.cmp(&b.remote));
                Ok(out)
            }
        }))
    }

    fn search<'a>(&'a self, q: &'a OrgQuery) -> StoreFuture<'a, OrgHits> {
        Box::pin(self.bounded(async move {
            {
                let slot = self.reader().await?;
                let client = slot.as_ref().expect("connected");
                let limit = q.limit.clamp(1, 200) as i64;
                let mut hits = OrgHits::default();
                // Chunks with every word first, then (while they are fewer than asked for) those
                // with all but one, then any, each level by the engine's rank.
                let words: Vec<&str> = if q.words.is_empty() {
                    vec![q.text.as_str()]
                } else {
                    q.words.iter().map(String::as_str).collect()
                };
                let sql = ranked(
                    "ts_rank(ch.tsv, to_tsquery('simple', $2))::float8",
                    "ch.tsv @@ to_tsquery('simple', $2)",
                );
                for tsq in coordination_queries(words.iter().copied()) {
                    let rows = client
                        .query(&sql, &[&q.model, &tsq, &q.skip, &limit])
                        .await
                        .map_err(missing_schema)?;
                    for h in rows.iter().map(hit) {
                        let seen = hits.lexical.iter().any(|x| {
                            x.remote == h.remote && x.path == h.path && x.start_line == h.start_line
                        });
                        if !seen && hits.lexical.len() < limit as usize {
                            hits.lexical.push(h);
                        }
                    }
                    if hits.lexical.len() >= limit as usize {
                        break;
                    }
                }
                if !q.names.is_empty() {
                    let names: Vec<String> = q.names.iter().map(|n| n.to_lowercase()).collect();
                    // Definitions only (the partial index's condition), the first name first.
                    let sql = ranked(
                        "(1.0 / array_position($2::text[], lower(ch.symbol)))::float8",
                        "lower(ch.symbol) = ANY($2) AND ch.symbol <> ''
                           AND ch.kind NOT IN ('section', 'block', 'window')",
                    );
                    let rows = client
                        .query(&sql, &[&q.model, &names, &q.skip, &limit])
                        .await
                        .map_err(missing_schema)?;
                    hits.symbols = rows.iter().map(hit).collect();
                }
                if let Some(v) = &q.vector {
                    let sql = format!(
                        "WITH {LATEST},
                         near AS (SELECT repo_id, vkey, embedding <=> $2 AS d FROM patina.vectors
                                  WHERE model = $1 ORDER BY embedding <=> $2 LIMIT $4::bigint * 4)
                         SELECT r.remote, r.name, l.sha, ch.path, ch.start_line, ch.end_line,
                           ch.symbol, ch.body, (1 - near.d)::float8
                         FROM near
                         JOIN patina.chunks ch ON ch.repo_id = near.repo_id AND ch.vkey = near.vkey
                         JOIN latest l ON l.repo_id = ch.repo_id
                         JOIN patina.commit_files cf ON cf.repo_id = ch.repo_id AND cf.sha = l.sha
                           AND cf.model = $1 AND cf.file_key = ch.file_key
                         JOIN patina.repos r ON r.repo_id = ch.repo_id
                         WHERE r.remote <> ALL($3)
                         ORDER BY near.d, r.remote, ch.path, ch.start_line LIMIT $4"
                    );
                    let vector = Vector::from(v.clone());
                    let rows = client
                        .query(&sql, &[&q.model, &vector, &q.skip, &limit])
                        .await
                        .map_err(missing_schema)?;
                    hits.semantic = rows.iter().map(hit).collect();
                }
                Ok(hits)
            }
        }))
    }
}

/// A store nothing was ever published to has no tables: say so rather than quote SQL.
fn missing_schema(e: tokio_postgres::Error) -> anyhow::Error {
    if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE)
        || e.code() == Some(&tokio_postgres::error::SqlState::INVALID_SCHEMA_NAME)
    {
        anyhow!("nothing is published in this store yet (or this role may not read it)")
    } else if e.code() == Some(&tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) {
        anyhow!("this role may not read the store (no repository is granted to it)")
    } else {
        anyhow::Error::new(e)
    }
}

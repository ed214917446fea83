//! Shared test harness: the two backends (the same tests run against both), a throwaway PostgreSQL cluster on
//! loopback, servers on loopback, organizations with users and tokens.

use chrono::{TimeZone, Utc};
use pactwise_domain::{Clock, FixedClock, Role};
use pactwise_sync_server::rate::RateConfig;
use pactwise_sync_server::sqlite::SqliteStorage;
use pactwise_sync_server::storage::Counts;
use pactwise_sync_server::{AppState, ServerConfig, SyncStorage, admin};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Storage on a fresh database; the guard keeps its files (SQLite) alive.
pub struct Fresh {
    pub storage: Arc<dyn SyncStorage>,
    _dir: Option<tempfile::TempDir>,
}

/// Run blocking storage work from an async test (the PostgreSQL client blocks on a runtime of its own).
pub fn blocking<T>(f: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(f)
}

pub fn fresh(backend: Backend) -> Fresh {
    fresh_at(backend).0
}

/// Storage on a fresh database and where that database is (a SQLite file's path, a PostgreSQL URL), for tests
/// that read what was stored.
pub fn fresh_at(backend: Backend) -> (Fresh, String) {
    blocking(|| match backend {
        Backend::Sqlite => {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("sync.sqlite3");
            let storage = SqliteStorage::open(&path).unwrap();
            (Fresh { storage: Arc::new(storage), _dir: Some(dir) }, path.display().to_string())
        }
        Backend::Postgres => {
            let url = pg_database();
            let storage = pactwise_sync_server::postgres::PgStorage::connect(&url, 8).unwrap();
            (Fresh { storage: Arc::new(storage), _dir: None }, url)
        }
    })
}

/// A throwaway cluster for this test process: `initdb` into a temp dir and `postgres` on a loopback port, run
/// under a shell that stops the server when this process's end of its stdin closes (so it never outlives the
/// tests). Set `PACTWISE_TEST_PG_URL` (a superuser URL without a database name) to use a running server instead.
struct PgCluster {
    base_url: String,
    _dir: Option<tempfile::TempDir>,
    _child: Option<Mutex<Child>>,
}

fn pg_bin(name: &str) -> Option<PathBuf> {
    let mut versions: Vec<PathBuf> =
        std::fs::read_dir("/usr/lib/postgresql").ok()?.flatten().map(|e| e.path()).collect();
    versions.sort_by_key(|p| p.file_name().and_then(|n| n.to_str()).and_then(|n| n.parse::<u32>().ok()).unwrap_or(0));
    versions.into_iter().rev().map(|v| v.join("bin").join(name)).find(|p| p.is_file())
}

fn as_postgres_user(mut args: Vec<String>) -> Command {
    let root = Command::new("id").arg("-u").output().map(|o| o.stdout.starts_with(b"0\n")).unwrap_or(false);
    if root {
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", "postgres", "--"]).args(args);
        cmd
    } else {
        let mut cmd = Command::new(args.remove(0));
        cmd.args(args);
        cmd
    }
}

fn cluster() -> &'static PgCluster {
    static CLUSTER: OnceLock<PgCluster> = OnceLock::new();
    CLUSTER.get_or_init(|| {
        if let Ok(url) = std::env::var("PACTWISE_TEST_PG_URL") {
            return PgCluster { base_url: url.trim_end_matches('/').to_string(), _dir: None, _child: None };
        }
        let (Some(initdb), Some(postgres)) = (pg_bin("initdb"), pg_bin("postgres")) else {
            panic!(
                "PostgreSQL is not installed: run `make setup` (installs Debian's postgresql) or set \
                 PACTWISE_TEST_PG_URL=postgres://user@127.0.0.1:PORT"
            );
        };
        // Removed by the shell below when the server stops (this static is never dropped).
        let dir = tempfile::Builder::new().prefix("pactwise-pg-").tempdir().unwrap();
        let root = Command::new("id").arg("-u").output().map(|o| o.stdout.starts_with(b"0\n")).unwrap_or(false);
        if root {
            let status = Command::new("chown").args(["postgres:postgres"]).arg(dir.path()).status().unwrap();
            assert!(status.success(), "chown of the cluster directory failed");
        }
        let data = dir.path().join("data");
        let out = as_postgres_user(vec![
            initdb.display().to_string(),
            "-D".into(),
            data.display().to_string(),
            "-U".into(),
            "postgres".into(),
            "--auth=trust".into(),
            "--no-sync".into(),
        ])
        .stdout(Stdio::null())
        .output()
        .unwrap();
        assert!(out.status.success(), "initdb failed: {}", String::from_utf8_lossy(&out.stderr));
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let pg_ctl = postgres.with_file_name("pg_ctl");
        // `pg_ctl -w` returns once the server accepts connections; the shell then says "ready" and waits for this
        // process's end of its stdin to close (at exit, whatever the outcome) to stop the server and remove it all.
        let script = format!(
            "{pg_ctl} -D {data} -l {dir}/log -w -o '-p {port} -k {dir} -c listen_addresses=127.0.0.1 -c fsync=off \
             -c synchronous_commit=off -c full_page_writes=off -c max_connections=200' start >/dev/null && echo ready; \
             read _; {pg_ctl} -D {data} -m fast -w stop >/dev/null; rm -rf {dir}",
            pg_ctl = pg_ctl.display(),
            data = data.display(),
            dir = dir.path().display(),
        );
        let mut child = as_postgres_user(vec!["sh".into(), "-c".into(), script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut ready = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut ready).unwrap();
        assert_eq!(ready.trim(), "ready", "PostgreSQL did not start; see {}/log", dir.path().display());
        let base_url = format!("postgres://postgres@127.0.0.1:{port}");
        PgCluster { base_url, _dir: Some(dir), _child: Some(Mutex::new(child)) }
    })
}

/// A new, empty database in the test cluster.
pub fn pg_database() -> String {
    let cluster = cluster();
    let name = format!("t_{}", uuid::Uuid::now_v7().simple());
    let mut admin = postgres::Client::connect(&format!("{}/postgres", cluster.base_url), postgres::NoTls).unwrap();
    admin.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
    format!("{}/{name}", cluster.base_url)
}

pub fn start_time() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 9, 0, 0).unwrap()
}

pub fn generous() -> ServerConfig {
    ServerConfig {
        rate: RateConfig { burst: 1e9, per_second: 1e9 },
        sign_in_rate: RateConfig { burst: 1e9, per_second: 1e9 },
        ..ServerConfig::default()
    }
}

/// A server on loopback in this runtime. Dropping it stops it gracefully.
pub struct TestServer {
    pub endpoint: String,
    pub addr: SocketAddr,
    pub state: AppState,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl TestServer {
    pub async fn start(storage: Arc<dyn SyncStorage>, clock: Arc<dyn Clock>, config: ServerConfig) -> Self {
        Self::start_state(AppState::new(storage, clock, config)).await
    }

    /// A server over a state built by the test (a wait timer it ends by hand, say).
    pub async fn start_state(state: AppState) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(pactwise_sync_server::serve(listener, state.clone(), async move {
            let _ = stopped.await;
        }));
        Self { endpoint: format!("http://{addr}"), addr, state, stop: Some(stop) }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.endpoint)
    }

    /// Stop it gracefully now, as dropping it does.
    pub fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// An organization with users of the given roles, each with a device token.
pub struct Org {
    pub tokens: Vec<String>,
}

pub fn org(storage: &dyn SyncStorage, clock: &dyn Clock, slug: &str, roles: &[Role]) -> Org {
    blocking(|| make_org(storage, clock, slug, roles))
}

fn make_org(storage: &dyn SyncStorage, clock: &dyn Clock, slug: &str, roles: &[Role]) -> Org {
    let now = clock.now();
    admin::create_org(storage, slug, &format!("{slug} Ltd"), now).unwrap();
    let mut tokens = Vec::new();
    for (i, role) in roles.iter().enumerate() {
        let email = format!("user{i}@{slug}.example");
        admin::create_user(storage, slug, &email, "a-long-password-1", *role, now).unwrap();
        let (token, _) = admin::issue_device(storage, slug, &email, "laptop", now, chrono::Duration::days(30)).unwrap();
        tokens.push(token);
    }
    Org { tokens }
}

pub fn fixed_clock() -> Arc<FixedClock> {
    Arc::new(FixedClock::new(start_time()))
}

pub fn counts(storage: &dyn SyncStorage) -> Counts {
    blocking(|| storage.counts().unwrap())
}

/// Generate `#[tokio::test]`s for both backends from `async fn name(backend: Backend)`.
#[macro_export]
macro_rules! both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::common::Backend::Sqlite).await
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::common::Backend::Postgres).await
                }
            )*
        }
    };
}

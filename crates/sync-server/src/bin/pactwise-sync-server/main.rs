//! `pactwise-sync-server`: serve, administer, benchmark. The logic lives in the library.

mod bench;
mod offset_clock;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use pactwise_domain::{Clock, Role, SystemClock};
use pactwise_sync_server::{AppState, ServerConfig, SyncStorage, admin, load_tls, open_storage, serve, serve_tls};
use std::io::Read;
use std::sync::Arc;

#[derive(Parser)]
#[command(name = "pactwise-sync-server", about = "The Pactwise sync service")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the sync API until SIGINT/SIGTERM, then finish requests in flight.
    Serve {
        #[arg(long, env = "PACTWISE_SYNC_LISTEN", default_value = "127.0.0.1:8787")]
        listen: String,
        /// `sqlite:PATH` (default) or `postgres://user@host:port/db`.
        #[arg(long, env = "PACTWISE_SYNC_DATABASE", default_value = "sqlite:pactwise-sync.sqlite3")]
        database: String,
        /// Serve HTTPS with this certificate chain (PEM); needs --tls-key. Without both, plain HTTP: for loopback,
        /// or behind a TLS proxy.
        #[arg(long, env = "PACTWISE_SYNC_TLS_CERT", value_name = "FILE", requires = "tls_key")]
        tls_cert: Option<std::path::PathBuf>,
        /// The private key (PEM) of --tls-cert.
        #[arg(long, env = "PACTWISE_SYNC_TLS_KEY", value_name = "FILE", requires = "tls_cert")]
        tls_key: Option<std::path::PathBuf>,
        /// A bearer token that opens /metrics to peers not on this computer (else /metrics answers loopback only).
        #[arg(long, env = "PACTWISE_SYNC_METRICS_TOKEN", value_name = "TOKEN", hide_env_values = true)]
        metrics_token: Option<String>,
        /// PactWise Source's key-wrapping key: a file holding 64 hex characters (made by `source-key`), kept apart
        /// from the database and readable only by the service. Without it the Source routes say Source is not set up.
        #[arg(long, env = "PACTWISE_SOURCE_KEY_FILE", value_name = "FILE")]
        source_key_file: Option<std::path::PathBuf>,
        /// For end-to-end tests only: the service's time is the system's plus the whole seconds written in FILE
        /// (re-read at every use; a missing or empty file is 0), so a test can pass a tender's deadline. Whoever
        /// can write FILE decides the service's time: never give it in production.
        #[arg(long, value_name = "FILE")]
        clock_offset_file: Option<std::path::PathBuf>,
    },
    /// Write a new PactWise Source key-wrapping key to FILE (created with mode 0600; an existing file is kept).
    SourceKey {
        #[arg(value_name = "FILE")]
        file: std::path::PathBuf,
    },
    /// Create organizations and users.
    Admin {
        #[arg(long, env = "PACTWISE_SYNC_DATABASE", default_value = "sqlite:pactwise-sync.sqlite3")]
        database: String,
        #[command(subcommand)]
        action: AdminAction,
    },
    /// Load benchmark on loopback: prints one JSON line per figure.
    Bench {
        /// `sqlite` (a temporary file) or a `postgres://` URL of an empty database.
        #[arg(long, default_value = "sqlite")]
        database: String,
        #[arg(long, default_value_t = 200)]
        clients: usize,
        /// Push/pull rounds per client.
        #[arg(long, default_value_t = 10)]
        rounds: usize,
        /// Changes per push.
        #[arg(long, default_value_t = 20)]
        batch: usize,
        /// Changes in the one-client scenario.
        #[arg(long, default_value_t = 10_000)]
        single: usize,
        /// Writes timed in the propagation scenario, per mode (push channel, poll).
        #[arg(long, default_value_t = 20)]
        samples: usize,
        /// The poll interval of the propagation scenario, in milliseconds (the desktop's is 30,000).
        #[arg(long, default_value_t = 3_000)]
        poll_ms: u64,
        /// Run only these scenarios (comma-separated: one_client, concurrent_clients, propagation).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
    },
}

#[derive(Subcommand)]
enum AdminAction {
    CreateOrg {
        #[arg(long)]
        slug: String,
        #[arg(long)]
        name: String,
    },
    /// The password is read from standard input (never from argv).
    CreateUser {
        #[arg(long)]
        org: String,
        #[arg(long)]
        email: String,
        #[arg(long, default_value = "reviewer")]
        role: String,
    },
}

fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("PACTWISE_LOG").unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    match cli.command {
        Command::SourceKey { file } => {
            use std::io::Write as _;
            use std::os::unix::fs::OpenOptionsExt as _;
            let key = pactwise_source::envelope::KeyPair::generate();
            let mut out = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&file)
                .with_context(|| format!("creating {} (an existing key is never overwritten)", file.display()))?;
            writeln!(out, "{}", hex::encode(key.secret_bytes())).context("writing the key")?;
            println!("{}", serde_json::json!({"file": file, "public_key": key.public()}));
            Ok(())
        }
        Command::Serve { listen, database, tls_cert, tls_key, metrics_token, source_key_file, clock_offset_file } => {
            let tls = match (tls_cert, tls_key) {
                (Some(cert), Some(key)) => Some(load_tls(&cert, &key).context("loading the TLS certificate and key")?),
                _ => None,
            };
            let metrics_token = metrics_token.map(|t| t.trim().to_string()).filter(|t| !t.is_empty());
            if metrics_token.as_ref().is_some_and(|t| t.len() < 16) {
                bail!("the metrics token must be at least 16 characters");
            }
            let source_wrapping_key = match source_key_file {
                Some(path) => {
                    let text = std::fs::read_to_string(&path)
                        .with_context(|| format!("reading the Source key file {}", path.display()))?;
                    let bytes = hex::decode(text.trim()).context("the Source key file holds 64 hex characters")?;
                    let key = pactwise_source::envelope::KeyPair::from_secret(&bytes)
                        .map_err(|e| anyhow::anyhow!("the Source key file: {e}"))?;
                    Some(Arc::new(key))
                }
                None => None,
            };
            let config = ServerConfig { metrics_token, source_wrapping_key, ..ServerConfig::default() };
            // Opened before the runtime starts: the PostgreSQL client blocks on a small runtime of its own.
            let storage = open_storage(&database).context("opening the database")?;
            let clock: Arc<dyn Clock> = match clock_offset_file {
                Some(file) => {
                    tracing::warn!(file = %file.display(), "the service's clock follows an offset file (tests only)");
                    Arc::new(offset_clock::OffsetFileClock::new(file))
                }
                None => Arc::new(SystemClock),
            };
            runtime.block_on(run_server(&listen, storage, tls, config, clock))
        }
        Command::Admin { database, action } => {
            let storage = open_storage(&database).context("opening the database")?;
            let now = SystemClock.now();
            match action {
                AdminAction::CreateOrg { slug, name } => {
                    let id = admin::create_org(storage.as_ref(), &slug, &name, now)?;
                    println!("{}", serde_json::json!({"org_id": id, "slug": slug}));
                }
                AdminAction::CreateUser { org, email, role } => {
                    let role: Role = role.parse().map_err(anyhow::Error::msg)?;
                    let mut password = String::new();
                    std::io::stdin().read_to_string(&mut password).context("reading the password from stdin")?;
                    let password = password.trim_end_matches(['\n', '\r']);
                    if password.is_empty() {
                        bail!("pipe the new user's password on standard input");
                    }
                    let id = admin::create_user(storage.as_ref(), &org, &email, password, role, now)?;
                    println!("{}", serde_json::json!({"user_id": id, "org": org, "email": email, "role": role}));
                }
            }
            Ok(())
        }
        Command::Bench { database, clients, rounds, batch, single, samples, poll_ms, only } => {
            let options = bench::Options { clients, rounds, batch, single, samples, poll_ms, only };
            runtime.block_on(bench::run(&database, &options))
        }
    }
}

async fn run_server(
    listen: &str,
    storage: Arc<dyn SyncStorage>,
    tls: Option<Arc<rustls::ServerConfig>>,
    config: ServerConfig,
    clock: Arc<dyn Clock>,
) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(listen).await.with_context(|| format!("binding {listen}"))?;
    let addr = listener.local_addr()?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    tracing::info!(%addr, scheme, backend = storage.backend(), "pactwise-sync-server listening");
    if tls.is_none() && !addr.ip().is_loopback() {
        tracing::warn!(
            "serving plain HTTP on {addr}, which is not loopback: desktops refuse http:// to another computer; \
             put a TLS proxy in front or pass --tls-cert and --tls-key"
        );
    }
    let state = AppState::new(storage, clock, config);
    match tls {
        Some(tls) => serve_tls(listener, state, tls, shutdown_signal()).await?,
        None => serve(listener, state, shutdown_signal()).await?,
    }
    tracing::info!("stopped");
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
    tracing::info!("shutting down: finishing requests in flight");
}

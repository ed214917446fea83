//! `pactwise-fake-model`: serves a fake Messages API on loopback from a JSON script, for demos and end-to-end tests
//! of the CLI and the app (point them at it with `PACTWISE_MODEL_ENDPOINT`).
//!
//! ```text
//! pactwise-fake-model --script replies.json [--port 4010] [--log requests.json]
//! ```
//! Prints one JSON line `{"endpoint": "http://127.0.0.1:PORT"}` on stdout once it listens, then serves until
//! interrupted (Ctrl-C / SIGTERM); with `--log` it writes the request log there on exit. The log is also at
//! `GET {endpoint}/_fake/requests`; more replies can be appended with `POST {endpoint}/_fake/replies`.
//! The script is a `FakeScript` as JSON, for example:
//! `{"replies": [{"kind": "text", "text": "hello"}, {"kind": "error", "status": 429, "retry_after": "1"}],
//!   "when_exhausted": "repeat_last"}`

use anyhow::Context;
use clap::Parser;
use pactwise_model::fake::{FakeModelServer, FakeScript};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(name = "pactwise-fake-model", about = "A fake Anthropic Messages API on 127.0.0.1, answering from a script")]
struct Args {
    /// The script: a JSON file with `replies` (and optionally `when_exhausted`, `api_key`).
    #[arg(long)]
    script: PathBuf,
    /// Port on 127.0.0.1; 0 picks a free one (the chosen endpoint is printed).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Write the request log (JSON) to this file on exit.
    #[arg(long)]
    log: Option<PathBuf>,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let text = std::fs::read_to_string(&args.script)
        .with_context(|| format!("reading the script {}", args.script.display()))?;
    let script: FakeScript = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a fake-model script (see --help)", args.script.display()))?;
    let mut server = FakeModelServer::start_on_port(script, args.port)
        .await
        .with_context(|| format!("listening on 127.0.0.1:{}", args.port))?;
    println!("{}", serde_json::json!({ "endpoint": server.endpoint() }));
    eprintln!("fake model API listening on {}; Ctrl-C to stop", server.endpoint());

    wait_for_shutdown().await;
    server.stop();
    if let Some(path) = args.log {
        let log = serde_json::to_string_pretty(&server.requests())?;
        std::fs::write(&path, log).with_context(|| format!("writing the request log {}", path.display()))?;
    }
    Ok(())
}

async fn wait_for_shutdown() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => {
                tokio::signal::ctrl_c().await.ok();
            }
        }
    }
    #[cfg(not(unix))]
    {
        tokio::signal::ctrl_c().await.ok();
    }
}

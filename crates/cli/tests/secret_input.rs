//! Secrets typed on a terminal: the API key (`settings api-key`) and the sync password (`sync sign-in`) are read
//! without echo and end at Enter. Each test runs the real binary on a pseudo-terminal whose echo is on, as in a
//! person's terminal, waits until the program has switched echo off, types the secret and Enter (never an end of
//! input), and reads everything the terminal showed until the program ends.

use nix::sys::termios::{LocalFlags, tcgetattr};
use rexpect::session::{PtySession, spawn_command};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const WAIT_MS: u64 = 30_000;

/// `pactwise ARGS` on a new terminal with echo on (`rexpect` starts its terminals with echo off; a person's is on).
fn on_terminal(data: &Path, args: &[&str]) -> PtySession {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg("stty echo icanon && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_pactwise"))
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .env_remove("PACTWISE_DATA_DIR")
        .env_remove("PACTWISE_SYNC_PASSWORD")
        .env("PACTWISE_LOG", "info");
    spawn_command(command, Some(WAIT_MS)).expect("the program starts on a terminal")
}

/// Whether the terminal echoes what is typed now (the master side reads the terminal's own settings).
fn echoes(session: &PtySession) -> bool {
    let master = session.process().get_file_handle().expect("the terminal's master side");
    tcgetattr(&master).expect("the terminal's settings").local_flags.contains(LocalFlags::ECHO)
}

/// Waits (bounded) until the program has turned echo off for its prompt.
fn wait_for_echo_off(session: &PtySession) {
    let deadline = Instant::now() + Duration::from_millis(WAIT_MS);
    while echoes(session) {
        assert!(Instant::now() < deadline, "the program never turned echo off while asking for the secret");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Types `secret` and Enter after the prompt, then reads the rest of the session; returns (before, after).
fn type_secret(session: &mut PtySession, prompt: &str, secret: &str) -> (String, String) {
    let before = session.exp_string(prompt).expect("the prompt is shown");
    wait_for_echo_off(session);
    session.send_line(secret).expect("typing works");
    // Enter alone must end the input: the terminal stays open (no end of input is ever sent).
    let after = session.exp_eof().expect("the program ends after Enter, without waiting for the end of input");
    (before, after)
}

#[test]
fn the_api_key_typed_on_a_terminal_is_not_echoed_and_enter_ends_it() {
    let tmp = tempfile::tempdir().unwrap();
    let secret = "sk-ant-api03-NOT-A-REAL-KEY-typed-on-a-terminal-0123456789";
    let mut session = on_terminal(&tmp.path().join("data"), &["settings", "api-key"]);
    let (before, after) = type_secret(&mut session, "Paste the API key and press Enter", secret);
    let shown = format!("{before}{after}");
    assert!(!shown.contains(secret), "the key was echoed:\n{shown}");
    assert!(!shown.contains("NOT-A-REAL-KEY"), "part of the key was echoed:\n{shown}");
    // The key was read (stored, or refused because this machine has no keychain): either way the program said so.
    assert!(
        after.contains("API key stored in the OS keychain") || after.contains("keychain"),
        "the program did not answer after Enter:\n{shown}"
    );
    assert!(echoes(&session), "the terminal was left without echo");
}

#[test]
fn the_sync_password_typed_on_a_terminal_is_not_echoed_and_enter_ends_it() {
    let tmp = tempfile::tempdir().unwrap();
    // Nothing listens on this loopback port: sign-in fails after the password was read.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let server = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let secret = "correct-horse-battery-staple-typed-on-a-terminal";
    let mut session = on_terminal(
        &tmp.path().join("data"),
        &["sync", "sign-in", "--server", &server, "--org", "acme", "--email", "ana@example.com"],
    );
    let (before, after) = type_secret(&mut session, "Type the sync password and press Enter", secret);
    let shown = format!("{before}{after}");
    assert!(!shown.contains(secret), "the password was echoed:\n{shown}");
    assert!(!shown.contains("battery"), "part of the password was echoed:\n{shown}");
    assert!(after.contains("error:"), "the program did not answer after Enter:\n{shown}");
}

#[test]
fn a_plain_http_address_is_refused_before_the_password_is_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let mut session = on_terminal(
        &tmp.path().join("data"),
        &["sync", "sign-in", "--server", "http://sync.example.com", "--org", "acme", "--email", "ana@example.com"],
    );
    let shown = session.exp_eof().expect("the program ends without waiting for a password");
    assert!(shown.contains("use https://"), "the refusal says what to write instead:\n{shown}");
    assert!(!shown.contains("Type the sync password"), "a password was asked for a refused address:\n{shown}");
}

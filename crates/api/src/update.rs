//! Signed updates of the desktop app: where an installation's update feed comes from, what the Updates section in
//! Settings shows, and how the updater's failures read to a person. The shell runs Tauri's updater plugin, which
//! fetches the feed, keeps only a newer version (never a downgrade), downloads it, verifies its minisign signature
//! with the app's update key and installs the `.deb`; this module holds no network code.
//!
//! The update key is compiled into the app (`plugins.updater.pubkey`, set by `make package`) and is never read from
//! anywhere else. Where updates come from may be changed by IT for a whole computer in one file,
//! [`UPDATE_FEED_FILE`] (read once at start by [`read_feed_override`]): an organization can point its desktops at its
//! own mirror, or turn the check off and deploy versions itself, but cannot make the app accept a package that
//! Pactwise did not sign. A file under `/etc` rather than an environment variable: it is owned by root, applies to
//! every person and every way of starting the app (menus do not pass a shell's variables), and configuration
//! management already writes such files.

use crate::ApiError;
use pactwise_domain::ErrorCode;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::Path;

/// The computer-wide feed setting IT may write: `{"feed": "https://…/latest.json"}` to use another feed (its
/// `{{current_version}}`, `{{target}}`, `{{arch}}` are filled in by the updater), or `{"feed": null}` to turn the
/// app's own check off.
pub const UPDATE_FEED_FILE: &str = "/etc/pactwise-desk/update.json";

/// The refusal a person reads when a signature is missing or wrong (the code is `update_refused`).
pub const REFUSED: &str = "This update was not signed by Pactwise, so it was not installed. Nothing changed.";

/// Whether this installation checks for updates, as the Updates section shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum UpdateState {
    /// No update key or no feed (a development build, or IT turned the check off): `message` says which.
    NotSetUp,
    /// The feed's newest version is not newer than this one.
    UpToDate,
    /// A newer version is offered: `available`.
    Available,
}

/// A newer version the feed offers, before it is downloaded or verified.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct AvailableUpdate {
    pub version: String,
    /// The release notes as the feed gives them (plain text).
    pub notes: Option<String>,
    /// When it was published (`YYYY-MM-DD`), if the feed says.
    pub published: Option<String>,
}

/// The answer of a check for updates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct UpdateStatus {
    /// The version running now.
    pub current_version: String,
    pub state: UpdateState,
    pub available: Option<AvailableUpdate>,
    /// What to tell the person, in words.
    pub message: String,
}

impl UpdateStatus {
    pub fn not_set_up(current_version: &str, message: impl Into<String>) -> UpdateStatus {
        UpdateStatus {
            current_version: current_version.to_owned(),
            state: UpdateState::NotSetUp,
            available: None,
            message: message.into(),
        }
    }

    pub fn up_to_date(current_version: &str) -> UpdateStatus {
        UpdateStatus {
            current_version: current_version.to_owned(),
            state: UpdateState::UpToDate,
            available: None,
            message: format!("Pactwise Desk {current_version} is up to date."),
        }
    }

    /// `published` is the feed's RFC 3339 date; only its day is kept.
    pub fn available(current_version: &str, version: &str, notes: Option<String>, published: Option<&str>) -> Self {
        let notes = notes.map(|n| n.trim().to_owned()).filter(|n| !n.is_empty());
        let published = published.and_then(|p| p.get(..10)).filter(|d| is_iso_day(d)).map(str::to_owned);
        UpdateStatus {
            current_version: current_version.to_owned(),
            state: UpdateState::Available,
            available: Some(AvailableUpdate { version: version.to_owned(), notes, published }),
            message: format!("Pactwise Desk {version} is available (this is {current_version})."),
        }
    }
}

fn is_iso_day(text: &str) -> bool {
    text.len() == 10
        && text.bytes().enumerate().all(|(i, b)| if i == 4 || i == 7 { b == b'-' } else { b.is_ascii_digit() })
}

/// A verified update was installed; the new version runs after a restart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct UpdateInstalled {
    pub version: String,
    pub message: String,
}

impl UpdateInstalled {
    pub fn new(version: &str) -> UpdateInstalled {
        UpdateInstalled {
            version: version.to_owned(),
            message: format!(
                "Pactwise Desk {version} is installed and its signature checked. Restart Pactwise Desk to use it."
            ),
        }
    }
}

/// How far the download of an update is, sent while `update_install` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct UpdateProgress {
    pub downloaded: u64,
    /// The size, when the server says it.
    pub total: Option<u64>,
}

/// Counts downloaded bytes and says when the window should be told: at most once per 1 % of a known size (or per
/// 256 KiB of an unknown one), and at the end, so a large package does not send thousands of events.
#[derive(Debug, Default)]
pub struct DownloadCounter {
    downloaded: u64,
    last_sent: Option<u64>,
}

impl DownloadCounter {
    pub fn advance(&mut self, chunk: u64, total: Option<u64>) -> Option<UpdateProgress> {
        self.downloaded += chunk;
        let step = match total {
            Some(total) if total > 0 => (total / 100).max(1),
            _ => 256 * 1024,
        };
        let finished = total.is_some_and(|t| self.downloaded >= t);
        let due = match self.last_sent {
            None => true,
            Some(last) => self.downloaded - last >= step,
        };
        if due || (finished && self.last_sent != Some(self.downloaded)) {
            self.last_sent = Some(self.downloaded);
            return Some(UpdateProgress { downloaded: self.downloaded, total });
        }
        None
    }
}

/// What an installation's updater is set up with, decided once at start from the app's compiled configuration
/// (`plugins.updater`) and the computer's [`UPDATE_FEED_FILE`].
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateSetup {
    /// The updater plugin's configuration to run with (always valid for the plugin, even when not set up).
    pub plugin_config: Value,
    /// `None` when updates are set up; otherwise why not, in words.
    pub not_set_up: Option<String>,
}

impl UpdateSetup {
    pub fn is_set_up(&self) -> bool {
        self.not_set_up.is_none()
    }
}

/// Reads [`UPDATE_FEED_FILE`] (or `path` in tests): `None` when there is none.
pub fn read_feed_override(path: &Path) -> Option<Result<String, String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Some(Ok(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => Some(Err(format!("{} could not be read ({e})", path.display()))),
    }
}

/// Decides the updater's setup. `compiled` is the app's `plugins.updater` (absent in development builds);
/// `override_file` what [`read_feed_override`] found. A feed must be HTTPS; plain HTTP is accepted only to this
/// computer's own loopback address (a local mirror, the install test), where nothing travels over a network. The
/// update key is only ever the compiled one.
pub fn update_setup(compiled: Option<&Value>, override_file: Option<Result<String, String>>) -> UpdateSetup {
    let pubkey = compiled.and_then(|c| c.get("pubkey")).and_then(Value::as_str).unwrap_or("").trim().to_owned();
    let compiled_feeds: Vec<String> = compiled
        .and_then(|c| c.get("endpoints"))
        .and_then(Value::as_array)
        .map(|e| e.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    let off = |why: String| UpdateSetup {
        plugin_config: json!({ "pubkey": pubkey, "endpoints": [], "requireSignedVersion": true }),
        not_set_up: Some(why),
    };
    if pubkey.is_empty() {
        return off("Updates are not set up for this installation: it was built without the Pactwise update key \
                    (a development build). Install Pactwise Desk from its package to receive updates."
            .into());
    }
    let feeds = match override_file {
        None => compiled_feeds,
        Some(Err(why)) => {
            tracing::warn!("the update feed setting is unreadable: {why}");
            return off(format!(
                "Updates are not checked: {why}. Ask your IT team to fix {UPDATE_FEED_FILE} or remove it."
            ));
        }
        Some(Ok(text)) => match parse_override(&text) {
            Ok(Some(feed)) => vec![feed],
            Ok(None) => {
                return off("Updates for this computer are managed by your organization (the app's own check is \
                            turned off in "
                    .to_owned()
                    + UPDATE_FEED_FILE
                    + ").");
            }
            Err(why) => {
                tracing::warn!("the update feed setting is not usable: {why}");
                return off(format!("Updates are not checked: the setting in {UPDATE_FEED_FILE} {why}."));
            }
        },
    };
    if feeds.is_empty() {
        return off("Updates are not set up for this installation: no update feed is configured.".into());
    }
    let mut loopback_http = false;
    for feed in &feeds {
        match feed_transport(feed) {
            Ok(Transport::Https) => {}
            Ok(Transport::LoopbackHttp) => loopback_http = true,
            Err(why) => return off(format!("Updates are not checked: the update feed {why}.")),
        }
    }
    UpdateSetup {
        plugin_config: json!({
            "pubkey": pubkey,
            "endpoints": feeds,
            // Only ever for a feed on this computer's loopback address (checked above): the plugin refuses plain
            // HTTP otherwise. The package is verified by its signature either way.
            "dangerousInsecureTransportProtocol": loopback_http,
            // The signature names the version it was made for: a feed cannot pair a newer number with an older,
            // validly signed package to force a downgrade.
            "requireSignedVersion": true,
        }),
        not_set_up: None,
    }
}

/// `Ok(None)`: the check is turned off (`"feed": null`).
fn parse_override(text: &str) -> Result<Option<String>, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("is not JSON ({e})"))?;
    match value.get("feed") {
        Some(Value::String(feed)) if !feed.trim().is_empty() => Ok(Some(feed.trim().to_owned())),
        Some(Value::Null) => Ok(None),
        _ => Err(r#"has no "feed" (write {"feed": "https://…"} or {"feed": null})"#.into()),
    }
}

enum Transport {
    Https,
    LoopbackHttp,
}

fn feed_transport(feed: &str) -> Result<Transport, String> {
    let (scheme, rest) = feed.split_once("://").ok_or_else(|| format!("{feed} is not a web address"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(bracketed) = host.strip_prefix('[') {
        bracketed.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(h, _)| h)
    };
    if host.is_empty() {
        return Err(format!("{feed} names no server"));
    }
    match scheme.to_ascii_lowercase().as_str() {
        "https" => Ok(Transport::Https),
        "http" if is_loopback(host) => Ok(Transport::LoopbackHttp),
        "http" => Err(format!("{feed} is not HTTPS (plain HTTP is accepted only to this computer's loopback address)")),
        _ => Err(format!("{feed} is not an HTTPS address")),
    }
}

fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// What went wrong with a check or an install, as the shell classifies the updater's error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateFailure {
    /// No answer from the feed (offline, DNS, TLS, a server error).
    Unreachable,
    /// An answer that is not a feed the updater can read.
    NotAFeed,
    /// The feed has no build for this computer's system and package kind.
    NoBuildHere,
    /// The signature is missing, malformed, not made with the app's key, does not match the file, or names another
    /// version than the feed announced.
    Unsigned,
    /// The download was verified but is not a package this installation can install.
    WrongPackage,
    /// The administrator password was not given.
    NotAuthorized,
    /// The package manager failed.
    InstallFailed,
}

impl UpdateFailure {
    /// A feed that fails to parse only because a platform lacks its `signature` is an unsigned update, not a broken
    /// feed: `message` is the parser's.
    pub fn of_unreadable_feed(message: &str) -> UpdateFailure {
        if message.contains("`signature`") { UpdateFailure::Unsigned } else { UpdateFailure::NotAFeed }
    }

    /// The error a person reads; `current_version` is the version that stays installed.
    pub fn error(self, current_version: &str) -> ApiError {
        let (code, message) = match self {
            UpdateFailure::Unreachable => (
                ErrorCode::UpdateUnavailable,
                "The update server could not be reached. Check the network connection and try again later; \
                 nothing was changed."
                    .to_owned(),
            ),
            UpdateFailure::NotAFeed => (
                ErrorCode::UpdateUnavailable,
                "The update server's answer is not an update list Pactwise Desk can read, so nothing was installed. \
                 Try again later, or tell your IT team if it keeps happening."
                    .to_owned(),
            ),
            UpdateFailure::NoBuildHere => (
                ErrorCode::UpdateUnavailable,
                "The update server has no version of Pactwise Desk for this computer, so nothing was installed."
                    .to_owned(),
            ),
            UpdateFailure::Unsigned => (ErrorCode::UpdateRefused, REFUSED.to_owned()),
            UpdateFailure::WrongPackage => (
                ErrorCode::UpdateRefused,
                format!(
                    "The downloaded update is not a package this installation can install, so it was not installed. \
                     Pactwise Desk {current_version} is still installed."
                ),
            ),
            UpdateFailure::NotAuthorized => (
                ErrorCode::UpdateNotInstalled,
                format!(
                    "The update was checked but not installed: installing needs an administrator's password, and \
                     none was given. Pactwise Desk {current_version} is still installed."
                ),
            ),
            UpdateFailure::InstallFailed => (
                ErrorCode::UpdateNotInstalled,
                format!(
                    "The update was checked but the system's package manager could not install it. Pactwise Desk \
                     {current_version} is still installed; the details are in the log."
                ),
            ),
        };
        ApiError::new(code, message)
    }
}

/// The version offered when the person chose Install is no longer what the feed offers.
pub fn offer_changed(chosen: &str, now: Option<&str>) -> ApiError {
    let message = match now {
        Some(now) => format!("The update server now offers {now} instead of {chosen}. Check for updates again."),
        None => format!("{chosen} is no longer offered by the update server. Check for updates again."),
    };
    ApiError::new(ErrorCode::Conflict, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compiled(pubkey: &str, feeds: &[&str]) -> Value {
        json!({ "pubkey": pubkey, "endpoints": feeds })
    }

    #[test]
    fn a_build_without_the_update_key_is_not_set_up_and_says_so_in_words() {
        for config in [None, Some(compiled("", &["https://updates.example/latest.json"]))] {
            let setup = update_setup(config.as_ref(), None);
            assert!(!setup.is_set_up());
            assert!(setup.not_set_up.unwrap().starts_with("Updates are not set up for this installation"));
            assert_eq!(setup.plugin_config["endpoints"], json!([]));
            assert!(setup.plugin_config["pubkey"].is_string(), "the plugin still starts");
        }
    }

    #[test]
    fn the_compiled_feed_and_key_are_used_and_signed_versions_are_required() {
        let setup = update_setup(Some(&compiled("KEY", &["https://updates.example/{{target}}/latest.json"])), None);
        assert!(setup.is_set_up());
        assert_eq!(setup.plugin_config["pubkey"], "KEY");
        assert_eq!(setup.plugin_config["endpoints"], json!(["https://updates.example/{{target}}/latest.json"]));
        assert_eq!(setup.plugin_config["requireSignedVersion"], true);
        assert_eq!(setup.plugin_config["dangerousInsecureTransportProtocol"], false);
    }

    #[test]
    fn it_may_move_the_feed_but_never_the_key() {
        let file =
            Some(Ok(r#"{"feed": "https://mirror.example.org/pactwise/latest.json", "pubkey": "THEIRS"}"#.into()));
        let setup = update_setup(Some(&compiled("OURS", &["https://updates.example/latest.json"])), file);
        assert!(setup.is_set_up());
        assert_eq!(setup.plugin_config["endpoints"], json!(["https://mirror.example.org/pactwise/latest.json"]));
        assert_eq!(setup.plugin_config["pubkey"], "OURS");
    }

    #[test]
    fn plain_http_is_accepted_only_to_loopback() {
        let ours = compiled("KEY", &["https://updates.example/latest.json"]);
        for feed in ["http://127.0.0.1:8123/latest.json", "http://localhost/x.json", "http://[::1]:9000/f.json"] {
            let setup = update_setup(Some(&ours), Some(Ok(json!({ "feed": feed }).to_string())));
            assert!(setup.is_set_up(), "{feed}");
            assert_eq!(setup.plugin_config["dangerousInsecureTransportProtocol"], true, "{feed}");
        }
        for feed in ["http://updates.example/latest.json", "http://10.0.0.2/latest.json", "ftp://127.0.0.1/f", "nope"] {
            let setup = update_setup(Some(&ours), Some(Ok(json!({ "feed": feed }).to_string())));
            let why = setup.not_set_up.unwrap_or_else(|| panic!("{feed} was accepted"));
            assert!(why.starts_with("Updates are not checked"), "{why}");
            assert_eq!(setup.plugin_config["endpoints"], json!([]));
        }
    }

    #[test]
    fn it_may_turn_the_check_off_and_a_broken_setting_is_explained() {
        let ours = compiled("KEY", &["https://updates.example/latest.json"]);
        let off = update_setup(Some(&ours), Some(Ok(r#"{"feed": null}"#.into())));
        assert!(off.not_set_up.unwrap().contains("managed by your organization"));
        for text in ["not json", r#"{"url": "https://x.example"}"#, r#"{"feed": ""}"#] {
            let setup = update_setup(Some(&ours), Some(Ok(text.into())));
            assert!(setup.not_set_up.unwrap().contains(UPDATE_FEED_FILE), "{text}");
        }
        let unreadable =
            update_setup(Some(&ours), Some(Err("/etc/pactwise-desk/update.json could not be read".into())));
        assert!(unreadable.not_set_up.unwrap().contains("Ask your IT team"));
    }

    #[test]
    fn refusals_have_a_stable_code_and_words_without_internals() {
        let refused = UpdateFailure::Unsigned.error("0.1.0");
        assert_eq!(refused.code, ErrorCode::UpdateRefused);
        assert_eq!(refused.message, REFUSED);
        assert_eq!(UpdateFailure::of_unreadable_feed("missing field `signature` at line 1"), UpdateFailure::Unsigned);
        assert_eq!(UpdateFailure::of_unreadable_feed("expected value at line 1 column 1"), UpdateFailure::NotAFeed);
        for failure in [
            UpdateFailure::Unreachable,
            UpdateFailure::NotAFeed,
            UpdateFailure::NoBuildHere,
            UpdateFailure::WrongPackage,
            UpdateFailure::NotAuthorized,
            UpdateFailure::InstallFailed,
        ] {
            let e = failure.error("0.1.0");
            assert!(!e.message.contains('{') && !e.message.contains("Error"), "{e:?}");
        }
        assert_eq!(UpdateFailure::InstallFailed.error("0.1.0").code, ErrorCode::UpdateNotInstalled);
        assert_eq!(UpdateFailure::Unreachable.error("0.1.0").code, ErrorCode::UpdateUnavailable);
    }

    #[test]
    fn an_offer_keeps_its_day_and_drops_empty_notes() {
        let status = UpdateStatus::available("0.1.0", "0.2.0", Some("  ".into()), Some("2026-11-30T09:00:00Z"));
        let offered = status.available.unwrap();
        assert_eq!((offered.notes, offered.published.as_deref()), (None, Some("2026-11-30")));
        assert_eq!(UpdateStatus::available("0.1.0", "0.2.0", None, Some("soon")).available.unwrap().published, None);
    }

    #[test]
    fn download_progress_is_sent_per_percent_and_at_the_end() {
        let mut counter = DownloadCounter::default();
        let sent: Vec<_> = (0..1000).filter_map(|_| counter.advance(1000, Some(1_000_000))).collect();
        assert!(sent.len() <= 101 && sent.len() >= 100, "{}", sent.len());
        assert_eq!(sent.last().unwrap().downloaded, 1_000_000);
        let mut unknown = DownloadCounter::default();
        let sent = (0..64).filter_map(|_| unknown.advance(16 * 1024, None)).count();
        assert_eq!(sent, 4);
    }
}

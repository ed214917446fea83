//! PactWise Source on the buyer's desktop: one function per buyer action on a tender, over the organization's sync
//! service (the same client, TLS rule and device token as sync; `pactwise_source::wire` is the wire format both
//! sides use). The organization is the session's: these functions work only for the organization this install is
//! signed in to sync with, and say what to do otherwise.
//!
//! The buyer's **opening key** (X25519) is made here when a package is published as a tender. Its secret half is
//! kept only in the OS keychain, one entry per tender, named by the key's public half ([`OpeningKeys`]); never in
//! SQLite, never in a log. The service seals every envelope to it (inside its own deadline layer), so only this
//! desktop can read the submissions, and only after the service removed its layer after the deadline. Another
//! desktop of the organization is told which desktop keeps the key.
//!
//! Opened envelopes are read in memory and returned; nothing of a submission is written to the store. The service
//! keeps the sealed copy and this desktop the key, so opening again is one request and one decryption, and the
//! plaintext never sits in the database file that syncs and gets backed up. A file is written to disk only when a
//! person saves it ([`Api::source_save_file`]); every file in an envelope passed the service's default-deny
//! inspection before it was sealed (a refused file never becomes part of a submission).
//!
//! Code computes; people decide: scores are typed by people with a reason, the weighted totals come from the
//! service (`pactwise_source::evaluation`), price totals from the opened price envelopes with the same rule
//! (`pactwise_source::evaluation::price_total`), and nothing here ranks or recommends a vendor.

use crate::{Api, ApiError, Existing};
use base64::Engine as _;
use chrono::{DateTime, Utc};
use pactwise_domain::ErrorCode;
use pactwise_rules::prep::Artifacts;
use pactwise_source::envelope::{self, EnvelopeKind, KeyPair, PublicKey};
use pactwise_source::evaluation::{PriceOffer, price_total};
use pactwise_source::tender::Phase;
use pactwise_source::wire::{self, TENDERS};
use pactwise_store::OrgScope;
use pactwise_sync::{DeviceToken, HttpApi, KeyringTokenStore, MemoryTokenStore, SyncError, TokenStore};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};
use uuid::Uuid;

/// The keychain entry's name of a tender's opening key: by the sync device that made it (two data directories on one
/// computer are two desktops, and only the publishing one holds the key) and by its public half, so the entry exists
/// before the service gives the tender an id (nothing is sent until the key is kept).
fn entry_name(device: Uuid, public: &PublicKey) -> String {
    format!("source-opening-key/{device}/{}", hex_of(public))
}

fn hex_of(public: &PublicKey) -> String {
    public.0.iter().map(|b| format!("{b:02x}")).collect()
}

/// This desktop as the sync service knows it: its name for people (who keeps a key) and its device id.
struct ThisDesktop {
    name: String,
    device: Uuid,
}

/// Where the secret halves of this desktop's opening keys are kept: one entry per tender.
pub trait OpeningKeys: Send + Sync {
    fn store_for(&self, device: Uuid, public: &PublicKey) -> Arc<dyn TokenStore>;
}

/// The OS keychain (service `pactwise-desk`, entry `source-opening-key/<public half>`).
#[derive(Debug, Default, Clone, Copy)]
pub struct KeyringOpeningKeys;

impl OpeningKeys for KeyringOpeningKeys {
    fn store_for(&self, device: Uuid, public: &PublicKey) -> Arc<dyn TokenStore> {
        Arc::new(KeyringTokenStore::new(pactwise_sync::token::KEYRING_SERVICE, entry_name(device, public)))
    }
}

/// Opening keys in memory (tests; each desktop of a test has its own).
#[derive(Debug, Default)]
pub struct MemoryOpeningKeys {
    stores: Mutex<HashMap<String, Arc<MemoryTokenStore>>>,
}

impl MemoryOpeningKeys {
    /// The secret halves kept so far (hex), for tests that look for them where they must not be.
    pub fn kept_secrets(&self) -> Vec<String> {
        let stores = self.stores.lock().unwrap_or_else(|e| e.into_inner());
        stores.values().filter_map(|s| s.get().ok().flatten()).map(|t| t.expose().to_owned()).collect()
    }
}

impl OpeningKeys for MemoryOpeningKeys {
    fn store_for(&self, device: Uuid, public: &PublicKey) -> Arc<dyn TokenStore> {
        self.stores.lock().unwrap_or_else(|e| e.into_inner()).entry(entry_name(device, public)).or_default().clone()
    }
}

/// A tender as the Tenders area lists it: status in words, counts, and what may be done now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct TenderView {
    pub id: String,
    pub title: String,
    /// In words: "Awaiting second approval", "Open", "Closed", "Technical envelopes open", "Technical evaluation
    /// locked", "Price envelopes open", "Awarded".
    pub status: String,
    pub questions_close: String,
    pub submissions_close: String,
    pub invited: u32,
    pub joined: u32,
    /// How many vendors have submitted: a number only (the content stays sealed until opening).
    pub submissions: u32,
    /// What of the submissions is still sealed, in words ("sealed until opened", "prices sealed", "opened").
    pub submissions_sealed: String,
    pub requested_by: String,
    /// The desktop that keeps the opening key.
    pub opening_key_holder: String,
    /// Whether this desktop has the opening key (it can open the envelopes).
    pub key_here: bool,
    pub can_approve: bool,
    pub can_invite: bool,
    pub can_extend: bool,
    pub can_open_technical: bool,
    pub can_score: bool,
    pub can_lock: bool,
    pub can_open_price: bool,
    pub can_award: bool,
    pub awarded: bool,
}

/// An invitation made: the link to show and copy (single use).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct InvitationView {
    pub vendor_name: String,
    pub email: String,
    pub link: String,
}

/// Whom to invite: a vendor record of the organization (its name) or a name, and the email the link is meant for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct InviteInput {
    /// A vendor record's id (its name is used).
    pub vendor_id: Option<String>,
    /// The vendor's name, when not from a record.
    pub vendor_name: Option<String>,
    pub email: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct QuestionView {
    pub id: String,
    pub question: String,
    pub asked_by: Option<String>,
    pub answer: Option<String>,
    pub answered_at: Option<String>,
}

/// A requirement and a vendor's answer to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AnswerLine {
    pub code: String,
    pub requirement: String,
    pub mandatory: bool,
    pub answer: String,
}

/// A file of a submission: it passed the service's inspection before it was sealed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct SubmittedFile {
    pub name: String,
    /// What the inspection found (type, pages, size).
    pub inspection: String,
    pub bytes: u64,
}

/// One vendor's opened technical envelope (its last submission).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct OpenedSubmission {
    pub vendor: String,
    pub vendor_account: String,
    /// 1 for the first, 2 after one replacement, …
    pub submission: u32,
    pub answers: Vec<AnswerLine>,
    pub files: Vec<SubmittedFile>,
}

/// A criterion of the tender, for the scoring grid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct CriterionLine {
    pub id: String,
    pub name: String,
    pub description: String,
    /// The weight in percent, as people read it ("40%").
    pub weight: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct OpenedTechnical {
    pub tender: TenderView,
    pub criteria: Vec<CriterionLine>,
    pub submissions: Vec<OpenedSubmission>,
    /// The highest points a score may have (the lowest is 0).
    pub max_points: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ScoreInput {
    pub vendor_account: String,
    pub criterion_id: String,
    pub points: u32,
    pub reason: String,
}

/// A vendor's price, computed by code from its opened price envelope and the tender's pricing schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct PriceLineView {
    pub code: String,
    pub description: String,
    pub amount: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct CriterionScore {
    pub criterion: String,
    pub mean_points: String,
    pub weighted: String,
}

/// One vendor's figures, from code: never a rank or a recommendation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct VendorFigures {
    pub vendor: String,
    pub vendor_account: String,
    /// The weighted technical total out of 100 (once the technical evaluation is locked).
    pub technical_total: Option<String>,
    pub criteria: Vec<CriterionScore>,
    /// The price total (once the price envelopes are open).
    pub price_total: Option<String>,
    pub currency: String,
    pub price_lines: Vec<PriceLineView>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct EvaluationView {
    pub tender: TenderView,
    /// Vendors in name order (not ranked).
    pub vendors: Vec<VendorFigures>,
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AwardInput {
    pub vendor_account: String,
    pub reason: String,
    /// Start the contract lifecycle: find or make the organization's vendor record and start the built-in
    /// contract approval workflow for the awarded contract.
    pub start_contract: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AwardView {
    pub tender: TenderView,
    pub vendor: String,
    pub price_total: Option<String>,
    /// The vendor record the award is linked to (made when there was none), when the lifecycle was started.
    pub vendor_record: Option<String>,
    /// The contract approval run started for the award, when it was.
    pub contract_run: Option<String>,
    pub message: String,
}

/// A file the buyer exported (OCDS record, audit trail, a submission's file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct SourceExport {
    pub path: String,
    pub bytes: u64,
    /// For the audit trail: whether its chain checks out, in words.
    pub message: String,
    pub verified: Option<bool>,
    pub entries: Option<u32>,
}

fn internal(e: impl std::fmt::Display) -> ApiError {
    ApiError::new(ErrorCode::Internal, e.to_string())
}

/// The service's refusal in its own words; other failures as sync's, with what to do.
fn source_error(e: SyncError) -> ApiError {
    match e {
        SyncError::Rejected { ref message, .. } => ApiError::new(e.code(), message.clone()),
        SyncError::Unauthenticated => ApiError::new(
            ErrorCode::Unauthenticated,
            "the sync service did not accept this device's sign-in (it may have been signed out); sign in to sync \
             again (Settings → Sync)",
        ),
        other => ApiError::new(
            other.code(),
            format!("{other}. Tenders live on the organization's sync service: try again when it can be reached"),
        ),
    }
}

fn parse_uuid(text: &str, what: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(text.trim()).map_err(|_| ApiError::new(ErrorCode::NotFound, format!("no such {what}")))
}

fn when(at: DateTime<Utc>) -> String {
    at.to_rfc3339()
}

/// The status in people's words and what may be done, from the service's status and its clock (this desktop's
/// clock only when an older service did not say its time).
fn tender_view(status: &wire::TenderStatus, key_here: bool, now: DateTime<Utc>) -> TenderView {
    let published = status.status == wire::PUBLISHED;
    let closed = status.service_now.unwrap_or(now) >= status.deadlines.submissions_close;
    let words = if !published {
        "Awaiting second approval"
    } else {
        match status.phase {
            Phase::Open if closed => "Closed",
            Phase::Open => "Open",
            Phase::TechnicalOpened => "Technical envelopes open",
            Phase::TechnicalLocked => "Technical evaluation locked",
            Phase::PriceOpened => "Price envelopes open",
            Phase::Awarded => "Awarded",
        }
    };
    let open = published && status.phase == Phase::Open;
    let sealed = match status.phase {
        Phase::Open => "sealed until opened",
        Phase::TechnicalOpened | Phase::TechnicalLocked => "technical envelopes opened; prices sealed until the lock",
        Phase::PriceOpened | Phase::Awarded => "opened",
    };
    TenderView {
        id: status.id.to_string(),
        title: status.title.clone(),
        status: words.to_owned(),
        questions_close: when(status.deadlines.questions_close),
        submissions_close: when(status.deadlines.submissions_close),
        invited: status.invited as u32,
        joined: status.vendors_joined as u32,
        submissions: status.submissions as u32,
        submissions_sealed: sealed.to_owned(),
        requested_by: status.requested_by.clone(),
        opening_key_holder: status.opening_key_holder.clone(),
        key_here,
        can_approve: !published && !status.requested_by_you,
        can_invite: open && !closed,
        can_extend: open && !closed,
        can_open_technical: open && closed,
        can_score: published && status.phase == Phase::TechnicalOpened,
        can_lock: published && status.phase == Phase::TechnicalOpened,
        can_open_price: published && status.phase == Phase::TechnicalLocked,
        can_award: published && status.phase == Phase::PriceOpened,
        awarded: status.phase == Phase::Awarded,
    }
}

/// The tender's path under `/api/v1`.
fn path(id: Uuid, tail: &str) -> String {
    format!("{TENDERS}/{id}{tail}")
}

impl Api {
    /// The sync service with this device's token, for the scope's organization; a clear error when this desktop is
    /// not signed in to it.
    async fn source_service(&self, scope: &OrgScope) -> Result<(HttpApi, ThisDesktop), ApiError> {
        let not_signed_in = || {
            ApiError::new(
                ErrorCode::SyncUnavailable,
                "tenders are published and opened through the organization's sync service, and this desktop is not \
                 signed in to it for this organization; sign in to sync (Settings → Sync), then try again",
            )
        };
        let Some((bound, account, _)) = self.bound_sync().await? else { return Err(not_signed_in()) };
        if bound.org() != scope.org() {
            return Err(not_signed_in());
        }
        let device = Uuid::parse_str(&account.device_id)
            .map_err(|_| ApiError::new(ErrorCode::Unauthenticated, "the sync sign-in is incomplete; sign in again"))?;
        let token: DeviceToken = self
            .sync_tokens
            .store_for(device)
            .get()
            .map_err(crate::sync::token_error)?
            .ok_or_else(|| ApiError::new(ErrorCode::Unauthenticated, "sign in to sync again to work on tenders"))?;
        let name = format!("{} (signed in as {})", crate::sync::device_name(), account.email);
        Ok((self.sync_http(&account.server, Some(token))?, ThisDesktop { name, device }))
    }

    fn has_opening_key(&self, status: &wire::TenderStatus, here: &ThisDesktop) -> bool {
        status
            .opening_key
            .as_ref()
            .is_some_and(|k| matches!(self.opening_keys.store_for(here.device, k).get(), Ok(Some(_))))
    }

    /// The tender's opening key from the keychain, or why it cannot be used here.
    fn opening_key(&self, status: &wire::TenderStatus, here: &ThisDesktop) -> Result<KeyPair, ApiError> {
        let missing = || {
            let holder = if status.opening_key_holder.trim().is_empty() {
                "the desktop that published it".to_owned()
            } else {
                format!("the desktop “{}”", status.opening_key_holder)
            };
            ApiError::new(
                ErrorCode::Forbidden,
                format!(
                    "this desktop does not have the opening key of “{}”: it was published from {holder}, which \
                     keeps the key in its keychain. Open the envelopes there",
                    status.title
                ),
            )
        };
        let public = status.opening_key.as_ref().ok_or_else(missing)?;
        let kept = self
            .opening_keys
            .store_for(here.device, public)
            .get()
            .map_err(crate::sync::token_error)?
            .ok_or_else(missing)?;
        let bytes = hex_decode(kept.expose()).ok_or_else(|| {
            ApiError::new(ErrorCode::Storage, "the tender's opening key in the keychain is damaged; it cannot be used")
        })?;
        let pair = KeyPair::from_secret(&bytes).map_err(|_| missing())?;
        if pair.public() != public {
            return Err(missing());
        }
        Ok(pair)
    }

    async fn tender_status(&self, http: &HttpApi, id: Uuid) -> Result<wire::TenderStatus, ApiError> {
        http.get_json(&path(id, "")).await.map_err(source_error)
    }

    fn view_of(&self, status: &wire::TenderStatus, here: &ThisDesktop) -> TenderView {
        tender_view(status, self.has_opening_key(status, here), self.clock.now())
    }

    /// Publishes a published Prep Studio package as a tender: the store's publish gate must have passed; an
    /// opening key is made here (its secret half kept in the keychain before anything is sent); the service
    /// checks the gate again and waits for a second member's approval.
    #[tracing::instrument(name = "source_publish", skip_all)]
    pub async fn source_publish(&self, scope: &OrgScope, package: &str) -> Result<TenderView, ApiError> {
        let view = self.prep_view(scope, package).await?;
        if view.status != "published" {
            return Err(ApiError::new(
                ErrorCode::PublishBlocked,
                "this package is not published yet: approve its six parts and publish it in Prep Studio, then \
                 publish it as a tender",
            ));
        }
        let (http, here) = self.source_service(scope).await?;
        let release = pactwise_prep::export::ocds_release(&view.package, &view.id, view.version, self.clock.now())?;
        let key = KeyPair::generate();
        let kept = self.opening_keys.store_for(here.device, key.public());
        kept.set(&DeviceToken::new(hex_encode(key.secret_bytes()))).map_err(crate::sync::token_error)?;
        let request = wire::PublicationRequest {
            title: view.package.title.clone(),
            artifacts: view.package.artifacts.clone(),
            opening_key: key.public().clone(),
            tender_release: Some(release),
            opening_key_holder: here.name.clone(),
        };
        match http.post_json::<_, wire::TenderStatus>(TENDERS, &request).await {
            Ok(status) => {
                tracing::info!(tender = %status.id, "tender publication requested");
                Ok(self.view_of(&status, &here))
            }
            Err(e) => {
                // Nothing was published: the key is not needed.
                let _ = kept.clear();
                Err(source_error(e))
            }
        }
    }

    /// The organization's tenders, newest first.
    pub async fn source_list(&self, scope: &OrgScope) -> Result<Vec<TenderView>, ApiError> {
        let (http, here) = self.source_service(scope).await?;
        let list: Vec<wire::TenderStatus> = http.get_json(TENDERS).await.map_err(source_error)?;
        Ok(list.iter().map(|s| self.view_of(s, &here)).collect())
    }

    pub async fn source_show(&self, scope: &OrgScope, tender: &str) -> Result<TenderView, ApiError> {
        let id = parse_uuid(tender, "tender")?;
        let (http, here) = self.source_service(scope).await?;
        Ok(self.view_of(&self.tender_status(&http, id).await?, &here))
    }

    /// A second member approves the publication: the tender is published and vendors can be invited.
    #[tracing::instrument(name = "source_approve", skip_all)]
    pub async fn source_approve(&self, scope: &OrgScope, tender: &str) -> Result<TenderView, ApiError> {
        let id = parse_uuid(tender, "tender")?;
        let (http, here) = self.source_service(scope).await?;
        let status: wire::TenderStatus =
            http.post_json(&path(id, "/approve"), &serde_json::json!({})).await.map_err(source_error)?;
        Ok(self.view_of(&status, &here))
    }

    /// Invites a vendor (a vendor record's name, or a name typed) by a single-use link to show and copy.
    #[tracing::instrument(name = "source_invite", skip_all)]
    pub async fn source_invite(
        &self,
        scope: &OrgScope,
        tender: &str,
        input: InviteInput,
    ) -> Result<InvitationView, ApiError> {
        let id = parse_uuid(tender, "tender")?;
        let name = match (input.vendor_id.as_deref().filter(|v| !v.trim().is_empty()), input.vendor_name.as_deref()) {
            (Some(vendor), _) => self.vendor_detail(scope, vendor.trim().to_owned()).await?.vendor.name,
            (None, Some(name)) if !name.trim().is_empty() => name.trim().to_owned(),
            _ => {
                return Err(ApiError::new(
                    ErrorCode::InvalidInput,
                    "choose a vendor from your vendor records or type the vendor's name",
                ));
            }
        };
        let (http, _) = self.source_service(scope).await?;
        let request = wire::InvitationRequest { vendor_name: name.clone(), email: input.email.trim().to_owned() };
        let created: wire::InvitationCreated =
            http.post_json(&path(id, "/invitations"), &request).await.map_err(source_error)?;
        let link = format!("{}{}", http.endpoint().trim_end_matches('/'), created.link);
        Ok(InvitationView { vendor_name: name, email: request.email, link })
    }

    /// The vendors' questions with their answers (the buyer sees who asked; vendors never do).
    pub async fn source_questions(&self, scope: &OrgScope, tender: &str) -> Result<Vec<QuestionView>, ApiError> {
        let id = parse_uuid(tender, "tender")?;
        let (http, _) = self.source_service(scope).await?;
        let list: Vec<wire::PublishedQuestion> = http.get_json(&path(id, "/questions")).await.map_err(source_error)?;
        Ok(list.into_iter().map(question_view).collect())
    }

    /// Answers a question: the answer is published to every invited vendor without the asker's name.
    pub async fn source_answer(
        &self,
        scope: &OrgScope,
        tender: &str,
        question: &str,
        answer: String,
    ) -> Result<QuestionView, ApiError> {
        let id = parse_uuid(tender, "tender")?;
        let question = parse_uuid(question, "question")?;
        let (http, _) = self.source_service(scope).await?;
        let answered: wire::PublishedQuestion = http
            .post_json(&path(id, &format!("/questions/{question}/answer")), &wire::AnswerRequest { answer })
            .await
            .map_err(source_error)?;
        Ok(question_view(answered))
    }

    /// Moves the deadlines later, with a reason every vendor sees.
    pub async fn source_extend(
        &self,
        scope: &OrgScope,
        tender: &str,
        questions_close: DateTime<Utc>,
        submissions_close: DateTime<Utc>,
        reason: String,
    ) -> Result<TenderView, ApiError> {
        let id = parse_uuid(tender, "tender")?;
        let (http, here) = self.source_service(scope).await?;
        let request = wire::ExtensionRequest { questions_close, submissions_close, reason };
        let status: wire::TenderStatus =
            http.post_json(&path(id, "/extension"), &request).await.map_err(source_error)?;
        Ok(self.view_of(&status, &here))
    }

    async fn package_of(&self, http: &HttpApi, id: Uuid) -> Result<Artifacts, ApiError> {
        http.get_json(&path(id, "/package")).await.map_err(source_error)
    }

    /// Asks the service to open one kind of envelope (after the deadline; price only after the lock) and opens
    /// each part with the keychain's opening key: (vendor, account, submission, part, summary, plaintext).
    async fn open_parts(
        &self,
        (http, here): (&HttpApi, &ThisDesktop),
        status: &wire::TenderStatus,
        kind: EnvelopeKind,
    ) -> Result<Vec<(wire::OpenedPart, Vec<u8>)>, ApiError> {
        let key = self.opening_key(status, here)?;
        let opened: wire::Opened =
            http.post_json(&path(status.id, "/open"), &wire::OpenRequest { kind }).await.map_err(source_error)?;
        let _span = tracing::info_span!("source_open", tender = %status.id, parts = opened.parts.len()).entered();
        let mut out = Vec::with_capacity(opened.parts.len());
        for part in opened.parts {
            let sealed = base64::engine::general_purpose::STANDARD
                .decode(part.sealed_for_opening_key.as_bytes())
                .map_err(|_| {
                    ApiError::new(ErrorCode::SyncUnavailable, "an envelope arrived damaged; open the envelopes again")
                })?;
            let bound = wire::BoundContext::of_part(status.id, &status.published_hash, kind, &part);
            let plain = envelope::open(&sealed, &bound.context(), &key).map_err(|_| {
                ApiError::new(
                    ErrorCode::FileCorrupt,
                    format!(
                        "{}'s envelope “{}” does not open with this tender's key: it may have been altered; the \
                         audit trail and the service's operator can tell more",
                        part.vendor, part.part
                    ),
                )
            })?;
            out.push((part, plain));
        }
        Ok(out)
    }

    /// Opens the technical envelopes (after the submission deadline), reads them here with the opening key, and
    /// returns the answers and the list of files per vendor, with the criteria for the scoring grid.
    #[tracing::instrument(name = "source_open_technical", skip_all)]
    pub async fn source_open_technical(&self, scope: &OrgScope, tender: &str) -> Result<OpenedTechnical, ApiError> {
        let id = parse_uuid(tender, "tender")?;
        let (http, here) = self.source_service(scope).await?;
        let status = self.tender_status(&http, id).await?;
        let parts = self.open_parts((&http, &here), &status, EnvelopeKind::Technical).await?;
        let artifacts = self.package_of(&http, id).await?;
        let requirements = artifacts.requirements.content.as_ref().map(|r| r.items.clone()).unwrap_or_default();
        let mut by_vendor: BTreeMap<(String, Uuid), OpenedSubmission> = BTreeMap::new();
        for (part, plain) in parts {
            let entry =
                by_vendor.entry((part.vendor.clone(), part.vendor_account)).or_insert_with(|| OpenedSubmission {
                    vendor: part.vendor.clone(),
                    vendor_account: part.vendor_account.to_string(),
                    submission: part.submission,
                    answers: Vec::new(),
                    files: Vec::new(),
                });
            if part.part == "answers.json" {
                let answers: BTreeMap<String, String> = serde_json::from_slice(&plain).unwrap_or_default();
                entry.answers = requirements
                    .iter()
                    .map(|r| AnswerLine {
                        code: r.code.clone(),
                        requirement: r.text.clone(),
                        mandatory: r.kind == pactwise_rules::prep::RequirementKind::Mandatory,
                        answer: answers.get(&r.code).cloned().unwrap_or_default(),
                    })
                    .collect();
            } else {
                entry.files.push(SubmittedFile {
                    name: part.part,
                    inspection: part.summary,
                    bytes: plain.len() as u64,
                });
            }
        }
        let status = self.tender_status(&http, id).await?;
        Ok(OpenedTechnical {
            tender: self.view_of(&status, &here),
            criteria: criteria_lines(&artifacts),
            submissions: by_vendor.into_values().collect(),
            max_points: wire::MAX_POINTS,
        })
    }

    /// Saves one file of a vendor's opened technical envelope to `out` (the person chose where).
    pub async fn source_save_file(
        &self,
        scope: &OrgScope,
        tender: &str,
        vendor_account: &str,
        file: &str,
        out: &Path,
        existing: Existing,
    ) -> Result<SourceExport, ApiError> {
        crate::export_file::check_target(out, existing)?;
        let id = parse_uuid(tender, "tender")?;
        let account = parse_uuid(vendor_account, "vendor")?;
        let (http, here) = self.source_service(scope).await?;
        let status = self.tender_status(&http, id).await?;
        let parts = self.open_parts((&http, &here), &status, EnvelopeKind::Technical).await?;
        let (_, bytes) = parts
            .into_iter()
            .find(|(p, _)| p.vendor_account == account && p.part == file && p.part != "answers.json")
            .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("no file “{file}” in that vendor's envelope")))?;
        crate::export_file::write_export(out, &bytes, existing)?;
        Ok(SourceExport {
            path: out.display().to_string(),
            bytes: bytes.len() as u64,
            message: format!("saved {file}"),
            verified: None,
            entries: None,
        })
    }

    /// Records a person's score of one vendor on one criterion (0 to 10) with a reason.
    #[tracing::instrument(name = "source_score", skip_all)]
    pub async fn source_score(&self, scope: &OrgScope, tender: &str, score: ScoreInput) -> Result<(), ApiError> {
        let id = parse_uuid(tender, "tender")?;
        let request = wire::ScoreRequest {
            vendor_account: parse_uuid(&score.vendor_account, "vendor")?,
            criterion_id: score.criterion_id,
            points: score.points,
            reason: score.reason,
        };
        if request.reason.trim().is_empty() {
            return Err(ApiError::new(ErrorCode::InvalidInput, "give a reason for the score"));
        }
        if request.points > wire::MAX_POINTS {
            return Err(ApiError::new(
                ErrorCode::InvalidInput,
                format!("a score is from 0 to {}; {} is too high", wire::MAX_POINTS, request.points),
            ));
        }
        let (http, _) = self.source_service(scope).await?;
        http.post_no_content(&path(id, "/scores"), &request).await.map_err(source_error)
    }

    /// Locks the technical evaluation (every criterion of every bidder scored); the price envelopes may open.
    #[tracing::instrument(name = "source_lock", skip_all)]
    pub async fn source_lock(&self, scope: &OrgScope, tender: &str) -> Result<TenderView, ApiError> {
        let id = parse_uuid(tender, "tender")?;
        let (http, here) = self.source_service(scope).await?;
        let status: wire::TenderStatus =
            http.post_json(&path(id, "/lock"), &serde_json::json!({})).await.map_err(source_error)?;
        Ok(self.view_of(&status, &here))
    }

    /// Opens the price envelopes (after the lock) and returns the evaluation with the price totals.
    #[tracing::instrument(name = "source_open_price", skip_all)]
    pub async fn source_open_price(&self, scope: &OrgScope, tender: &str) -> Result<EvaluationView, ApiError> {
        let id = parse_uuid(tender, "tender")?;
        let (http, here) = self.source_service(scope).await?;
        let status = self.tender_status(&http, id).await?;
        self.open_parts((&http, &here), &status, EnvelopeKind::Price).await?;
        self.source_evaluation(scope, tender).await
    }

    /// The evaluation's figures from code: weighted technical totals (once locked) and price totals (once the
    /// price envelopes are open), vendors in name order.
    pub async fn source_evaluation(&self, scope: &OrgScope, tender: &str) -> Result<EvaluationView, ApiError> {
        let id = parse_uuid(tender, "tender")?;
        let (http, here) = self.source_service(scope).await?;
        let status = self.tender_status(&http, id).await?;
        let artifacts = self.package_of(&http, id).await?;
        let names: BTreeMap<String, String> = artifacts
            .criteria
            .content
            .as_ref()
            .map(|c| c.criteria.iter().map(|c| (c.id.clone(), c.name.clone())).collect())
            .unwrap_or_default();
        let locked = matches!(status.phase, Phase::TechnicalLocked | Phase::PriceOpened | Phase::Awarded);
        let mut vendors: BTreeMap<Uuid, VendorFigures> = BTreeMap::new();
        if locked {
            let results: Vec<wire::VendorResult> =
                http.get_json(&path(id, "/evaluation")).await.map_err(source_error)?;
            for r in results {
                vendors.insert(
                    r.vendor_account,
                    VendorFigures {
                        vendor: r.vendor.clone(),
                        vendor_account: r.vendor_account.to_string(),
                        technical_total: Some(r.technical_total),
                        criteria: r
                            .criteria
                            .into_iter()
                            .map(|(criterion, mean_points, weighted)| CriterionScore {
                                criterion: names.get(&criterion).cloned().unwrap_or(criterion),
                                mean_points,
                                weighted,
                            })
                            .collect(),
                        price_total: None,
                        currency: String::new(),
                        price_lines: Vec::new(),
                    },
                );
            }
        }
        let priced = matches!(status.phase, Phase::PriceOpened | Phase::Awarded);
        if priced {
            let pricing = artifacts.pricing.content.as_ref().ok_or_else(|| internal("the tender has no pricing"))?;
            for (part, plain) in self.open_parts((&http, &here), &status, EnvelopeKind::Price).await? {
                let offer: PriceOffer = serde_json::from_slice(&plain).map_err(|_| {
                    ApiError::new(ErrorCode::FileCorrupt, format!("{}'s price envelope is not readable", part.vendor))
                })?;
                let total = price_total(pricing, &offer).map_err(|errors| {
                    let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
                    ApiError::new(
                        ErrorCode::InvalidInput,
                        format!("{}'s prices do not add up: {}", part.vendor, list.join("; ")),
                    )
                })?;
                let figures = vendors.entry(part.vendor_account).or_insert_with(|| VendorFigures {
                    vendor: part.vendor.clone(),
                    vendor_account: part.vendor_account.to_string(),
                    technical_total: None,
                    criteria: Vec::new(),
                    price_total: None,
                    currency: String::new(),
                    price_lines: Vec::new(),
                });
                figures.price_total = Some(total.total.to_string());
                figures.currency = pricing.currency.clone();
                figures.price_lines = total
                    .lines
                    .iter()
                    .map(|l| PriceLineView {
                        code: l.code.clone(),
                        description: pricing
                            .lines
                            .iter()
                            .find(|p| p.code == l.code)
                            .map(|p| p.description.clone())
                            .unwrap_or_default(),
                        amount: l.amount.to_string(),
                    })
                    .collect();
            }
        }
        let mut vendors: Vec<VendorFigures> = vendors.into_values().collect();
        vendors.sort_by_key(|a| a.vendor.to_lowercase());
        let note = match (locked, priced) {
            (false, _) => "The totals appear once the technical evaluation is locked.",
            (true, false) => "The price totals appear once the price envelopes are open.",
            (true, true) => "Totals computed by code from people's scores and the vendors' prices; the award is yours.",
        };
        Ok(EvaluationView { tender: self.view_of(&status, &here), vendors, note: note.into() })
    }

    /// Awards the tender to a vendor with a reason (a person's decision); the price total recorded is the one code
    /// computed from that vendor's price envelope. With `start_contract`, the organization's vendor record is found
    /// (or made) by the vendor's name and the built-in contract approval workflow (`contract_lifecycle`) starts.
    #[tracing::instrument(name = "source_award", skip_all)]
    pub async fn source_award(&self, scope: &OrgScope, tender: &str, input: AwardInput) -> Result<AwardView, ApiError> {
        let id = parse_uuid(tender, "tender")?;
        let account = parse_uuid(&input.vendor_account, "vendor")?;
        if input.reason.trim().is_empty() {
            return Err(ApiError::new(ErrorCode::InvalidInput, "give the reason for the award"));
        }
        let evaluation = self.source_evaluation(scope, tender).await?;
        let figures = evaluation
            .vendors
            .iter()
            .find(|v| v.vendor_account == account.to_string())
            .ok_or_else(|| ApiError::new(ErrorCode::InvalidInput, "that vendor did not submit to this tender"))?
            .clone();
        let price = figures.price_total.clone().map(|p| (p, figures.currency.clone()));
        let (http, here) = self.source_service(scope).await?;
        let request =
            wire::AwardRequest { vendor_account: account, reason: input.reason.trim().to_owned(), price_total: price };
        let status: wire::TenderStatus = http.post_json(&path(id, "/award"), &request).await.map_err(source_error)?;
        let mut view = AwardView {
            tender: self.view_of(&status, &here),
            vendor: figures.vendor.clone(),
            price_total: figures.price_total.as_ref().map(|p| format!("{p} {}", figures.currency)),
            vendor_record: None,
            contract_run: None,
            message: format!("Awarded to {}.", figures.vendor),
        };
        if input.start_contract {
            let existing = self.vendor_list(scope, false).await?;
            let record = match existing.into_iter().find(|v| v.name.trim().eq_ignore_ascii_case(figures.vendor.trim()))
            {
                Some(v) => v,
                None => {
                    let input =
                        crate::VendorInput { name: Some(figures.vendor.clone()), aliases: None, identifiers: None };
                    self.vendor_create(scope, input).await?
                }
            };
            let contract = serde_json::json!({"contract": {
                "title": format!("{} — {}", status.title, figures.vendor),
                "value": figures.price_total.clone().unwrap_or_else(|| "0".into()),
                "risk_flags": [],
            }});
            let run = self.start_run(scope, "contract_lifecycle".into(), contract).await?;
            view.message = format!(
                "Awarded to {}. The contract approval workflow started for it (vendor record “{}”).",
                figures.vendor, record.name
            );
            view.vendor_record = Some(record.name);
            view.contract_run = Some(run.id.to_string());
        }
        Ok(view)
    }

    /// Writes the tender's OCDS 1.1 release package (tender, amendments, number of tenderers, award) to `out`.
    #[tracing::instrument(name = "source_export_ocds", skip_all)]
    pub async fn source_export_ocds(
        &self,
        scope: &OrgScope,
        tender: &str,
        out: &Path,
        existing: Existing,
    ) -> Result<SourceExport, ApiError> {
        crate::export_file::check_target(out, existing)?;
        let id = parse_uuid(tender, "tender")?;
        let (http, _) = self.source_service(scope).await?;
        let record: serde_json::Value = http.get_json(&path(id, "/ocds")).await.map_err(source_error)?;
        let bytes = serde_json::to_vec_pretty(&record).map_err(internal)?;
        crate::export_file::write_export(out, &bytes, existing)?;
        let releases = record["releases"].as_array().map_or(0, Vec::len);
        Ok(SourceExport {
            path: out.display().to_string(),
            bytes: bytes.len() as u64,
            message: format!("OCDS record with {releases} releases saved"),
            verified: None,
            entries: Some(releases as u32),
        })
    }

    /// Writes the tender's audit trail as CSV to `out`, after checking its hash chain here
    /// (`pactwise_source::audit::verify`); the result in words.
    #[tracing::instrument(name = "source_export_audit", skip_all)]
    pub async fn source_export_audit(
        &self,
        scope: &OrgScope,
        tender: &str,
        out: &Path,
        existing: Existing,
    ) -> Result<SourceExport, ApiError> {
        crate::export_file::check_target(out, existing)?;
        let id = parse_uuid(tender, "tender")?;
        let (http, _) = self.source_service(scope).await?;
        let trail: wire::AuditTrail = http.get_json(&path(id, "/audit")).await.map_err(source_error)?;
        let check = pactwise_source::audit::verify(&trail.entries);
        let csv = pactwise_source::audit::csv(&trail.entries);
        crate::export_file::write_export(out, csv.as_bytes(), existing)?;
        let message = match &check {
            Ok(()) => format!("{} events, each chained to the one before: the trail is intact", trail.entries.len()),
            Err(broken) => format!("the trail does not check out: {broken}"),
        };
        Ok(SourceExport {
            path: out.display().to_string(),
            bytes: csv.len() as u64,
            message,
            verified: Some(check.is_ok()),
            entries: Some(trail.entries.len() as u32),
        })
    }
}

fn question_view(q: wire::PublishedQuestion) -> QuestionView {
    QuestionView {
        id: q.id.to_string(),
        question: q.question,
        asked_by: q.asked_by,
        answer: q.answer,
        answered_at: q.answered_at.map(when),
    }
}

fn criteria_lines(artifacts: &Artifacts) -> Vec<CriterionLine> {
    artifacts
        .criteria
        .content
        .as_ref()
        .map(|c| {
            c.criteria
                .iter()
                .map(|c| CriterionLine {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    description: c.description.clone(),
                    weight: format!("{}%", pactwise_source::evaluation::shown(weight_percent(c.weight_bp), 2)),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Basis points as a percentage (exact).
fn weight_percent(bp: u32) -> rust_decimal::Decimal {
    rust_decimal::Decimal::new(i64::from(bp), 2).normalize()
}

fn hex_encode(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hex_decode(text: &str) -> Option<Vec<u8>> {
    let text = text.trim();
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use pactwise_source::tender::Deadlines;

    fn status(phase: Phase, published: bool) -> wire::TenderStatus {
        let at = |h| Utc.with_ymd_and_hms(2027, 3, 10, h, 0, 0).unwrap();
        wire::TenderStatus {
            id: Uuid::nil(),
            title: "Fleet".into(),
            status: if published { wire::PUBLISHED } else { wire::AWAITING_APPROVAL }.into(),
            phase,
            deadlines: Deadlines { questions_close: at(9), submissions_close: at(17) },
            invited: 2,
            vendors_joined: 1,
            submissions: 1,
            published_hash: "h".into(),
            opening_key: None,
            opening_key_holder: "ann-laptop".into(),
            requested_by: "Ann".into(),
            requested_by_you: false,
            service_now: None,
        }
    }

    #[test]
    fn a_tenders_status_reads_in_words_with_only_the_next_actions_offered() {
        let before = Utc.with_ymd_and_hms(2027, 3, 10, 12, 0, 0).unwrap();
        let after = Utc.with_ymd_and_hms(2027, 3, 10, 17, 0, 0).unwrap();
        let cases = [
            (status(Phase::Open, false), before, "Awaiting second approval"),
            (status(Phase::Open, true), before, "Open"),
            (status(Phase::Open, true), after, "Closed"),
            (status(Phase::TechnicalOpened, true), after, "Technical envelopes open"),
            (status(Phase::TechnicalLocked, true), after, "Technical evaluation locked"),
            (status(Phase::PriceOpened, true), after, "Price envelopes open"),
            (status(Phase::Awarded, true), after, "Awarded"),
        ];
        for (s, now, words) in cases {
            let view = tender_view(&s, true, now);
            assert_eq!(view.status, words);
            let sealed = match s.phase {
                Phase::Open => "sealed until opened",
                Phase::TechnicalOpened | Phase::TechnicalLocked => {
                    "technical envelopes opened; prices sealed until the lock"
                }
                Phase::PriceOpened | Phase::Awarded => "opened",
            };
            assert_eq!(view.submissions_sealed, sealed, "{words}");
            let offered = [
                view.can_approve,
                view.can_invite,
                view.can_open_technical,
                view.can_score,
                view.can_open_price,
                view.can_award,
            ];
            assert!(offered.iter().filter(|o| **o).count() <= 2, "{words}: {offered:?}");
        }
        let open = tender_view(&status(Phase::Open, true), true, before);
        assert!(open.can_invite && !open.can_open_technical);
        let closed = tender_view(&status(Phase::Open, true), true, after);
        assert!(!closed.can_invite && closed.can_open_technical);
        let by_service = wire::TenderStatus { service_now: Some(after), ..status(Phase::Open, true) };
        assert_eq!(tender_view(&by_service, true, before).status, "Closed", "the service's clock decides");
        let mine = wire::TenderStatus { requested_by_you: true, ..status(Phase::Open, false) };
        assert!(!tender_view(&mine, true, before).can_approve, "the asker cannot approve their own publication");
    }

    #[test]
    fn a_weight_in_basis_points_reads_as_a_percentage() {
        assert_eq!(pactwise_source::evaluation::shown(weight_percent(4000), 2), "40");
        assert_eq!(pactwise_source::evaluation::shown(weight_percent(3333), 2), "33.33");
        assert_eq!(hex_decode(&hex_encode(&[0, 1, 254, 255])), Some(vec![0, 1, 254, 255]));
        assert_eq!(hex_decode("abc"), None);
    }
}

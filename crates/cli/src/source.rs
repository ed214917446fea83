//! PactWise Source commands (`pactwise source …`): publish a published Prep Studio package as a tender, list,
//! approve (a second member), invite, questions and answers, extend, open technical envelopes, score, lock, open
//! price, evaluation, award, export the OCDS record and the audit trail. Each is a few lines over an `api` function;
//! the organization is the session's, signed in to sync.

use crate::output::{Outcome, clean};
use clap::Subcommand;
use pactwise_api::{Api, ApiError, AwardInput, Existing, InviteInput, OrgScope, ScoreInput, TenderView};
use pactwise_domain::ErrorCode;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum SourceCommand {
    /// Publish a published Prep Studio package as a tender (a second member approves it); the opening key stays in
    /// this computer's keychain
    Publish {
        #[arg(value_name = "PACKAGE")]
        package: String,
    },
    /// The organization's tenders, with status and counts
    List,
    /// One tender's status
    Show {
        #[arg(value_name = "TENDER")]
        tender: String,
    },
    /// Approve a colleague's publication (you cannot approve your own)
    Approve {
        #[arg(value_name = "TENDER")]
        tender: String,
    },
    /// Invite a vendor: prints the single-use link to give them
    Invite {
        #[arg(value_name = "TENDER")]
        tender: String,
        /// The vendor's email address
        #[arg(long, value_name = "EMAIL")]
        email: String,
        /// The vendor's name (or --vendor-id)
        #[arg(long, value_name = "NAME")]
        name: Option<String>,
        /// A vendor record of the organization
        #[arg(long, value_name = "ID")]
        vendor_id: Option<String>,
    },
    /// The vendors' questions (and who asked)
    Questions {
        #[arg(value_name = "TENDER")]
        tender: String,
    },
    /// Answer a question: published to every invited vendor without the asker's name
    Answer {
        #[arg(value_name = "TENDER")]
        tender: String,
        #[arg(value_name = "QUESTION")]
        question: String,
        #[arg(value_name = "ANSWER")]
        answer: String,
    },
    /// Move the deadlines later (RFC 3339 instants), with a reason every vendor sees
    Extend {
        #[arg(value_name = "TENDER")]
        tender: String,
        #[arg(long, value_name = "WHEN")]
        questions_close: String,
        #[arg(long, value_name = "WHEN")]
        submissions_close: String,
        #[arg(long, value_name = "WHY")]
        reason: String,
    },
    /// Open the technical envelopes (after the deadline; needs this desktop's opening key)
    Open {
        #[arg(value_name = "TENDER")]
        tender: String,
    },
    /// Score a vendor on a criterion, 0 to 10, with a reason
    Score {
        #[arg(value_name = "TENDER")]
        tender: String,
        #[arg(long, value_name = "VENDOR")]
        vendor: String,
        #[arg(long, value_name = "CRITERION")]
        criterion: String,
        #[arg(long, value_name = "POINTS")]
        points: u32,
        #[arg(long, value_name = "WHY")]
        reason: String,
    },
    /// Lock the technical evaluation (every criterion of every bidder scored)
    Lock {
        #[arg(value_name = "TENDER")]
        tender: String,
    },
    /// Open the price envelopes (after the lock) and show the totals
    OpenPrice {
        #[arg(value_name = "TENDER")]
        tender: String,
    },
    /// The totals, from code (vendors in name order; nothing is ranked)
    Evaluation {
        #[arg(value_name = "TENDER")]
        tender: String,
    },
    /// Award the tender to a vendor, with a reason
    Award {
        #[arg(value_name = "TENDER")]
        tender: String,
        #[arg(long, value_name = "VENDOR")]
        vendor: String,
        #[arg(long, value_name = "WHY")]
        reason: String,
        /// Also find or make the vendor record and start the contract approval workflow
        #[arg(long)]
        start_contract: bool,
    },
    /// Save the tender's OCDS 1.1 release package
    Ocds {
        #[arg(value_name = "TENDER")]
        tender: String,
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        #[arg(long)]
        overwrite: bool,
    },
    /// Save the audit trail as CSV after checking its chain
    Audit {
        #[arg(value_name = "TENDER")]
        tender: String,
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        #[arg(long)]
        overwrite: bool,
    },
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<serde_json::Value, ApiError> {
    serde_json::to_value(value).map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))
}

fn line(t: &TenderView) -> String {
    format!(
        "{}  {}  [{}]  invited: {}, joined: {}, submissions: {}  (submissions close {})",
        t.id,
        clean(&t.title),
        t.status,
        t.invited,
        t.joined,
        t.submissions,
        t.submissions_close
    )
}

fn tender(t: TenderView) -> Result<Outcome, ApiError> {
    let text = line(&t);
    Ok(Outcome::ok(to_json(&t)?, text))
}

fn instant(text: &str, what: &str) -> Result<chrono::DateTime<chrono::Utc>, ApiError> {
    chrono::DateTime::parse_from_rfc3339(text.trim()).map(|d| d.with_timezone(&chrono::Utc)).map_err(|_| {
        ApiError::new(ErrorCode::InvalidInput, format!("{what}: write it as 2027-03-10T17:00:00Z, not {text:?}"))
    })
}

fn existing(overwrite: bool) -> Existing {
    if overwrite { Existing::Replace } else { Existing::Refuse }
}

pub async fn run(api: &Api, scope: &OrgScope, what: SourceCommand) -> Result<Outcome, ApiError> {
    match what {
        SourceCommand::Publish { package } => tender(api.source_publish(scope, &package).await?),
        SourceCommand::List => {
            let list = api.source_list(scope).await?;
            let mut lines = vec![format!("{} tender(s)", list.len())];
            lines.extend(list.iter().map(line));
            Ok(Outcome::ok(to_json(&list)?, lines.join("\n")))
        }
        SourceCommand::Show { tender: id } => tender(api.source_show(scope, &id).await?),
        SourceCommand::Approve { tender: id } => tender(api.source_approve(scope, &id).await?),
        SourceCommand::Invite { tender: id, email, name, vendor_id } => {
            let made = api.source_invite(scope, &id, InviteInput { vendor_id, vendor_name: name, email }).await?;
            let text = format!("Give this link to {} (it works once):\n{}", clean(&made.vendor_name), made.link);
            Ok(Outcome::ok(to_json(&made)?, text))
        }
        SourceCommand::Questions { tender: id } => {
            let list = api.source_questions(scope, &id).await?;
            let lines: Vec<String> = list
                .iter()
                .map(|q| {
                    format!(
                        "{}  {}  — {}",
                        q.id,
                        clean(&q.question),
                        q.answer.as_deref().map_or("(not answered)".into(), clean)
                    )
                })
                .collect();
            Ok(Outcome::ok(to_json(&list)?, lines.join("\n")))
        }
        SourceCommand::Answer { tender: id, question, answer } => {
            let q = api.source_answer(scope, &id, &question, answer).await?;
            Ok(Outcome::ok(to_json(&q)?, "Answered; every invited vendor sees it.".into()))
        }
        SourceCommand::Extend { tender: id, questions_close, submissions_close, reason } => {
            let q = instant(&questions_close, "--questions-close")?;
            let s = instant(&submissions_close, "--submissions-close")?;
            tender(api.source_extend(scope, &id, q, s, reason).await?)
        }
        SourceCommand::Open { tender: id } => {
            let opened = api.source_open_technical(scope, &id).await?;
            let mut lines = vec![line(&opened.tender)];
            for s in &opened.submissions {
                lines.push(format!(
                    "{} ({}): submission {}, {} answers, {} files",
                    clean(&s.vendor),
                    s.vendor_account,
                    s.submission,
                    s.answers.iter().filter(|a| !a.answer.is_empty()).count(),
                    s.files.len()
                ));
            }
            Ok(Outcome::ok(to_json(&opened)?, lines.join("\n")))
        }
        SourceCommand::Score { tender: id, vendor, criterion, points, reason } => {
            api.source_score(
                scope,
                &id,
                ScoreInput { vendor_account: vendor, criterion_id: criterion, points, reason },
            )
            .await?;
            Ok(Outcome::ok(serde_json::json!({"scored": true}), "Score recorded.".into()))
        }
        SourceCommand::Lock { tender: id } => tender(api.source_lock(scope, &id).await?),
        SourceCommand::OpenPrice { tender: id } => evaluation(api.source_open_price(scope, &id).await?),
        SourceCommand::Evaluation { tender: id } => evaluation(api.source_evaluation(scope, &id).await?),
        SourceCommand::Award { tender: id, vendor, reason, start_contract } => {
            let award =
                api.source_award(scope, &id, AwardInput { vendor_account: vendor, reason, start_contract }).await?;
            let text = award.message.clone();
            Ok(Outcome::ok(to_json(&award)?, text))
        }
        SourceCommand::Ocds { tender: id, out, overwrite } => {
            let saved = api.source_export_ocds(scope, &id, &out, existing(overwrite)).await?;
            let text = format!("{} ({})", saved.message, saved.path);
            Ok(Outcome::ok(to_json(&saved)?, text))
        }
        SourceCommand::Audit { tender: id, out, overwrite } => {
            let saved = api.source_export_audit(scope, &id, &out, existing(overwrite)).await?;
            let text = format!("{} ({})", saved.message, saved.path);
            Ok(Outcome::ok(to_json(&saved)?, text))
        }
    }
}

fn evaluation(e: pactwise_api::EvaluationView) -> Result<Outcome, ApiError> {
    let mut lines = vec![line(&e.tender)];
    for v in &e.vendors {
        lines.push(format!(
            "{}  technical: {}  price: {}",
            clean(&v.vendor),
            v.technical_total.as_deref().unwrap_or("—"),
            v.price_total.as_ref().map_or("—".to_string(), |p| format!("{p} {}", v.currency))
        ));
    }
    lines.push(e.note.clone());
    Ok(Outcome::ok(to_json(&e)?, lines.join("\n")))
}

#![allow(dead_code)]

use chrono::{TimeZone, Utc};
use pactwise_domain::{FixedClock, OrgId, Role};
use pactwise_engine::{NodeContext, NodeFailure, NodeOutput, Registry};
use pactwise_store::{OrgScope, Store};
use serde_json::{Value, json};
use std::sync::Arc;

pub fn clock() -> Arc<FixedClock> {
    Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()))
}

pub fn org(store: &Store, name: &str) -> OrgId {
    store.platform().create_organization(name).unwrap()
}

pub fn member(store: &Store, org: OrgId, name: &str, role: Role) -> OrgScope {
    let p = store.platform();
    let user = p.create_user(name, None).unwrap();
    p.set_membership(org, user, role).unwrap();
    store.sessions().open(p.start_session(user, org).unwrap()).unwrap()
}

/// A handler that appends its node's name to the `log` channel.
pub fn logs(ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
    Ok(NodeOutput::default().write("log", json!(ctx.node)))
}

pub fn registry_with_log() -> Registry {
    let mut r = Registry::new();
    r.handler("log", logs);
    r
}

pub fn strings(v: &Value) -> Vec<String> {
    v.as_array().map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect()).unwrap_or_default()
}

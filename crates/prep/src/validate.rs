//! The deterministic validators and the publish pre-check. Both are `pactwise_rules::prep`'s: the pre-check is the
//! very publish gate the store runs on what it stores before publishing ([`pactwise_rules::prep::publish_gate`]),
//! so what the buyer sees blocking is exactly what the store refuses.

pub use pactwise_rules::prep::gate::{
    RULE_INTAKE_INCOMPLETE, RULE_MILESTONE_NOT_COMPUTED, RULE_SCOPE_INCOMPLETE, RULE_UNKNOWN_NEED, validate,
};
pub use pactwise_rules::prep::{GateViolation, PublishRule, publish_gate as precheck};

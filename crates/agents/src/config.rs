//! The agents' thresholds: defaults in code, a JSON schema from the types, and one check that every path uses
//! (the CLI's `agents config set`, the api, a stored value read back). A value that fails the check is refused with
//! every problem in words: which setting, what was wrong, what is allowed. Stored per organization by the api.

use serde::{Deserialize, Serialize};

/// Every agent's thresholds. Unknown fields are refused (a misspelt name would otherwise be ignored silently).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AgentsConfig {
    pub manager: ManagerConfig,
    pub secretary: SecretaryConfig,
    pub financial: FinancialConfig,
    pub vendor: VendorConfig,
    pub analytics: AnalyticsConfig,
    pub notifications: NotificationsConfig,
    pub workers: WorkersConfig,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct WorkersConfig {
    /// Agent steps and follow-up tasks that run at once (1 to 16).
    pub concurrency: u32,
    /// Seconds one agent step or task may take before it is stopped and reported (1 to 600).
    pub timeout_secs: u32,
}

impl Default for WorkersConfig {
    fn default() -> Self {
        WorkersConfig { concurrency: 4, timeout_secs: 30 }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ManagerConfig {
    /// Longest request the manager plans, in characters (200 to 20,000). Longer ones are refused with the reason.
    pub max_request_chars: u32,
    /// Currency of an amount written without one when the request names no other (ISO 4217, e.g. "EUR").
    pub default_currency: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SecretaryConfig {
    /// Days before a deadline the reminder is due (1 to 365).
    pub reminder_days_before: u32,
    /// A deadline this many days away or fewer is reported as close (0 to 90).
    pub close_deadline_days: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct FinancialConfig {
    /// Share of a budget spent, in percent, from which a warning is raised (1 to 100).
    pub budget_warning_percent: u32,
    /// An invoice may differ from its contract's price by this much, in percent, before it is flagged (0 to 20).
    pub invoice_tolerance_percent: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct VendorConfig {
    /// Days an onboarding may wait for a decision before it is reported as stalled (1 to 365).
    pub onboarding_stalled_days: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AnalyticsConfig {
    /// Red flags from which the risk summary says high (1 to 50; above `medium_red_flags`).
    pub high_red_flags: u32,
    /// Red flags from which the risk summary says medium (1 to 50).
    pub medium_red_flags: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct NotificationsConfig {
    /// Send a native notification (besides the inbox item) for urgent outcomes only.
    pub native_for_urgent_only: bool,
    /// Most inbox items one run may create (1 to 100).
    pub max_items_per_run: u32,
}

impl Default for ManagerConfig {
    fn default() -> Self {
        ManagerConfig { max_request_chars: 4_000, default_currency: "EUR".into() }
    }
}

impl Default for SecretaryConfig {
    fn default() -> Self {
        SecretaryConfig { reminder_days_before: 30, close_deadline_days: 7 }
    }
}

impl Default for FinancialConfig {
    fn default() -> Self {
        FinancialConfig { budget_warning_percent: 90, invoice_tolerance_percent: 2 }
    }
}

impl Default for VendorConfig {
    fn default() -> Self {
        VendorConfig { onboarding_stalled_days: 30 }
    }
}

impl Default for AnalyticsConfig {
    fn default() -> Self {
        AnalyticsConfig { high_red_flags: 3, medium_red_flags: 1 }
    }
}

impl Default for NotificationsConfig {
    fn default() -> Self {
        NotificationsConfig { native_for_urgent_only: true, max_items_per_run: 10 }
    }
}

/// One setting as a form shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SettingLine {
    /// `agent.field`.
    pub setting: String,
    /// What it does and its bounds, in words.
    pub description: String,
    pub value: serde_json::Value,
}

/// One reason a configuration is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigProblem {
    /// The setting, as `agent.field` (e.g. `secretary.reminder_days_before`); empty when the whole value is unreadable.
    pub setting: String,
    pub message: String,
}

impl std::fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.setting.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.setting, self.message)
        }
    }
}

/// The configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("The agents' configuration was not changed: {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
pub struct ConfigRefused(pub Vec<ConfigProblem>);

fn range(problems: &mut Vec<ConfigProblem>, setting: &str, value: u32, min: u32, max: u32) {
    if !(min..=max).contains(&value) {
        problems.push(ConfigProblem {
            setting: setting.into(),
            message: format!("{value} is outside the allowed range; use a whole number from {min} to {max}"),
        });
    }
}

/// The ISO 4217 codes the manager reads amounts in.
pub const CURRENCIES: &[&str] =
    &["EUR", "USD", "GBP", "CHF", "JPY", "SEK", "NOK", "DKK", "CAD", "AUD", "INR", "CNY", "PLN", "CZK", "NZD", "SGD"];

impl AgentsConfig {
    /// The one check of a configuration: every problem, in words.
    pub fn check(&self) -> Result<(), ConfigRefused> {
        let mut p = Vec::new();
        range(&mut p, "manager.max_request_chars", self.manager.max_request_chars, 200, 20_000);
        if !CURRENCIES.contains(&self.manager.default_currency.as_str()) {
            p.push(ConfigProblem {
                setting: "manager.default_currency".into(),
                message: format!(
                    "\"{}\" is not a currency the manager reads; use one of {}",
                    self.manager.default_currency,
                    CURRENCIES.join(", ")
                ),
            });
        }
        range(&mut p, "secretary.reminder_days_before", self.secretary.reminder_days_before, 1, 365);
        range(&mut p, "secretary.close_deadline_days", self.secretary.close_deadline_days, 0, 90);
        range(&mut p, "financial.budget_warning_percent", self.financial.budget_warning_percent, 1, 100);
        range(&mut p, "financial.invoice_tolerance_percent", self.financial.invoice_tolerance_percent, 0, 20);
        range(&mut p, "vendor.onboarding_stalled_days", self.vendor.onboarding_stalled_days, 1, 365);
        range(&mut p, "analytics.high_red_flags", self.analytics.high_red_flags, 1, 50);
        range(&mut p, "analytics.medium_red_flags", self.analytics.medium_red_flags, 1, 50);
        if self.analytics.medium_red_flags >= self.analytics.high_red_flags {
            p.push(ConfigProblem {
                setting: "analytics.medium_red_flags".into(),
                message: format!(
                    "must be below analytics.high_red_flags ({}), or medium risk could never be reported",
                    self.analytics.high_red_flags
                ),
            });
        }
        range(&mut p, "notifications.max_items_per_run", self.notifications.max_items_per_run, 1, 100);
        range(&mut p, "workers.concurrency", self.workers.concurrency, 1, 16);
        range(&mut p, "workers.timeout_secs", self.workers.timeout_secs, 1, 600);
        if p.is_empty() { Ok(()) } else { Err(ConfigRefused(p)) }
    }

    /// Reads and checks a configuration from JSON (fields left out keep their defaults).
    pub fn from_json(value: &serde_json::Value) -> Result<AgentsConfig, ConfigRefused> {
        let config: AgentsConfig = serde_json::from_value(value.clone()).map_err(|e| {
            ConfigRefused(vec![ConfigProblem {
                setting: String::new(),
                message: format!("the configuration could not be read ({e}); see `pactwise agents config --schema`"),
            }])
        })?;
        config.check()?;
        Ok(config)
    }

    /// This configuration with one setting changed (`agent.field` = a JSON or plain value), checked.
    pub fn with_setting(&self, setting: &str, value: &str) -> Result<AgentsConfig, ConfigRefused> {
        let refused = |message: String| ConfigRefused(vec![ConfigProblem { setting: setting.into(), message }]);
        let mut json = serde_json::to_value(self).map_err(|e| refused(e.to_string()))?;
        let Some((section, field)) = setting.split_once('.') else {
            return Err(refused("name a setting as agent.field, e.g. secretary.reminder_days_before".into()));
        };
        let slot = json
            .get_mut(section)
            .and_then(|s| s.get_mut(field))
            .ok_or_else(|| refused("there is no such setting; `pactwise agents config` lists them".into()))?;
        let parsed = serde_json::from_str::<serde_json::Value>(value)
            .unwrap_or_else(|_| serde_json::Value::String(value.to_string()));
        *slot = parsed;
        AgentsConfig::from_json(&json)
    }

    /// Every setting with its description (from the schema, so the words live once, on the fields) and its value,
    /// in the configuration's order.
    pub fn settings(&self) -> Vec<SettingLine> {
        let schema = Self::schema();
        let values = serde_json::to_value(self).unwrap_or_default();
        let defs = schema.get("$defs").or_else(|| schema.get("definitions"));
        let mut out = Vec::new();
        let Some(sections) = values.as_object() else { return out };
        for (section, fields) in sections {
            let reference = schema["properties"][section]["$ref"].as_str().unwrap_or_default();
            let name = reference.rsplit('/').next().unwrap_or_default();
            let props = defs.and_then(|d| d.get(name)).and_then(|d| d.get("properties"));
            for (field, value) in fields.as_object().into_iter().flatten() {
                let description = props
                    .and_then(|p| p.get(field))
                    .and_then(|f| f.get("description"))
                    .and_then(|d| d.as_str())
                    .unwrap_or_default()
                    .to_string();
                out.push(SettingLine { setting: format!("{section}.{field}"), description, value: value.clone() });
            }
        }
        out
    }

    /// The JSON schema of the configuration.
    pub fn schema() -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(AgentsConfig)).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_pass_their_own_check_and_partial_json_keeps_defaults() {
        AgentsConfig::default().check().unwrap();
        let c = AgentsConfig::from_json(&serde_json::json!({"secretary": {"reminder_days_before": 14}})).unwrap();
        assert_eq!(c.secretary.reminder_days_before, 14);
        assert_eq!(c.secretary.close_deadline_days, 7);
        assert_eq!(c.analytics, AnalyticsConfig::default());
    }

    #[test]
    fn bad_values_are_refused_with_every_problem_in_words() {
        let err = AgentsConfig::from_json(&serde_json::json!({
            "secretary": {"reminder_days_before": 0},
            "analytics": {"high_red_flags": 2, "medium_red_flags": 2},
            "manager": {"default_currency": "euro"}
        }))
        .unwrap_err();
        let settings: Vec<_> = err.0.iter().map(|p| p.setting.as_str()).collect();
        assert_eq!(
            settings,
            ["manager.default_currency", "secretary.reminder_days_before", "analytics.medium_red_flags"]
        );
        let text = err.to_string();
        assert!(text.contains("use a whole number from 1 to 365"), "{text}");
        assert!(text.contains("\"euro\" is not a currency"), "{text}");
    }

    #[test]
    fn unknown_settings_and_wrong_types_are_refused_not_ignored() {
        let err = AgentsConfig::from_json(&serde_json::json!({"secretary": {"reminder_days": 3}})).unwrap_err();
        assert!(err.to_string().contains("reminder_days"), "{err}");
        assert!(AgentsConfig::from_json(&serde_json::json!({"vendor": {"onboarding_stalled_days": "soon"}})).is_err());
    }

    #[test]
    fn one_setting_changes_with_the_same_check() {
        let c = AgentsConfig::default();
        let changed = c.with_setting("financial.budget_warning_percent", "75").unwrap();
        assert_eq!(changed.financial.budget_warning_percent, 75);
        let changed = c.with_setting("manager.default_currency", "USD").unwrap();
        assert_eq!(changed.manager.default_currency, "USD");
        assert!(c.with_setting("financial.budget_warning_percent", "150").is_err());
        let err = c.with_setting("financial.nope", "1").unwrap_err();
        assert!(err.to_string().contains("no such setting"), "{err}");
        assert!(c.with_setting("nodot", "1").is_err());
    }

    #[test]
    fn every_setting_is_listed_with_its_words_from_the_schema() {
        let lines = AgentsConfig::default().settings();
        assert_eq!(lines.len(), 13);
        let line = lines.iter().find(|l| l.setting == "secretary.reminder_days_before").unwrap();
        assert_eq!(line.value, serde_json::json!(30));
        assert!(line.description.contains("1 to 365"), "{}", line.description);
        assert!(lines.iter().all(|l| !l.description.is_empty()), "{lines:?}");
    }

    #[test]
    fn the_schema_names_every_section() {
        let schema = AgentsConfig::schema().to_string();
        for s in ["manager", "secretary", "financial", "vendor", "analytics", "notifications", "workers"] {
            assert!(schema.contains(s), "{s}");
        }
    }
}

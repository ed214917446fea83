//! Times are stored as RFC 3339 text in UTC, with microseconds, so they sort as text.

use chrono::{DateTime, SecondsFormat, Utc};

pub(crate) fn to_sql(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

pub(crate) fn from_sql(s: &str) -> rusqlite::Result<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e)))
}

pub(crate) fn from_sql_opt(s: Option<String>) -> rusqlite::Result<Option<DateTime<Utc>>> {
    s.as_deref().map(from_sql).transpose()
}

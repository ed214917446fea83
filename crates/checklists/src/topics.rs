//! Where each CUAD category's clauses live (`checklists/topics.toml`): headings that name the clause, the broader
//! sections it usually sits in, and the words that name its topic. The offline evaluator takes quotes from the
//! sections so headed first, and calls a clause absent only when its topic is not mentioned at all.

use crate::compiled::{CompiledPatterns, check_patterns};
use crate::validate::Problem;
use pactwise_domain::CuadCategory;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// The file's name inside the library directory.
pub const TOPICS_FILE: &str = "topics.toml";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TopicsFile {
    #[serde(default)]
    topics: Vec<CategoryTopic>,
}

/// One category's topic as the data file states it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CategoryTopic {
    pub category: CuadCategory,
    /// Section headings that name the clause itself.
    #[serde(default)]
    pub headings: Vec<String>,
    /// Headings of the sections where the clause usually sits.
    #[serde(default)]
    pub homes: Vec<String>,
    /// Words that name the topic anywhere in the text.
    pub mentions: Vec<String>,
}

/// One category's topic, compiled.
#[derive(Debug, Clone)]
pub struct CompiledTopic {
    pub category: CuadCategory,
    pub headings: Vec<Regex>,
    pub homes: Vec<Regex>,
    pub mentions: Vec<Regex>,
}

impl CompiledTopic {
    fn compile(topic: &CategoryTopic, compiled: &CompiledPatterns) -> CompiledTopic {
        let compile = |patterns: &[String]| patterns.iter().filter_map(|p| compiled.get(p).ok()).collect();
        CompiledTopic {
            category: topic.category,
            headings: compile(&topic.headings),
            homes: compile(&topic.homes),
            mentions: compile(&topic.mentions),
        }
    }

    /// Does this heading name the clause itself?
    pub fn names_clause(&self, heading: &str) -> bool {
        self.headings.iter().any(|r| r.is_match(heading))
    }

    /// Is a section with this heading (or one of its parents') where the clause usually sits?
    pub fn is_home(&self, headings: &str) -> bool {
        self.names_clause(headings) || self.homes.iter().any(|r| r.is_match(headings))
    }

    /// Does the text mention the topic?
    pub fn mentioned_in(&self, text: &str) -> bool {
        self.mentions.iter().any(|r| r.is_match(text))
    }
}

/// Parses and checks the topics file.
pub(crate) fn parse(text: &str, problems: &mut Vec<Problem>) -> Vec<CategoryTopic> {
    let file = match toml::from_str::<TopicsFile>(text) {
        Ok(file) => file,
        Err(error) => {
            problems.push(Problem::new(TOPICS_FILE, "", format!("not a valid topics file: {error}")));
            return Vec::new();
        }
    };
    let mut seen = HashSet::new();
    for topic in &file.topics {
        let at = topic.category.as_str();
        if !seen.insert(topic.category) {
            problems.push(Problem::new(TOPICS_FILE, at, "category listed twice"));
        }
        if topic.mentions.is_empty() {
            problems.push(Problem::new(TOPICS_FILE, at, "a topic needs at least one mention pattern"));
        }
        check_patterns(TOPICS_FILE, &format!("{at} headings"), &topic.headings, problems);
        check_patterns(TOPICS_FILE, &format!("{at} homes"), &topic.homes, problems);
        check_patterns(TOPICS_FILE, &format!("{at} mentions"), &topic.mentions, problems);
    }
    file.topics
}

pub(crate) fn compile_all(topics: &[CategoryTopic], compiled: &CompiledPatterns) -> Vec<CompiledTopic> {
    topics.iter().map(|one| CompiledTopic::compile(one, compiled)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_topic_knows_its_headings_its_homes_and_its_words() {
        let mut problems = Vec::new();
        let parsed = parse(
            "[[topics]]\ncategory = \"Insurance\"\nheadings = ['insurance']\nhomes = ['indemn']\nmentions = ['insur']\n",
            &mut problems,
        );
        assert!(problems.is_empty(), "{problems:?}");
        let topic = &compile_all(&parsed, &CompiledPatterns::default())[0];
        assert!(topic.names_clause("11.4 INSURANCE"));
        assert!(topic.is_home("Indemnification / Insurance"));
        assert!(topic.is_home("Indemnification"));
        assert!(!topic.names_clause("Indemnification"));
        assert!(topic.mentioned_in("Each Party shall maintain insurance."));
        assert!(!topic.mentioned_in("Fees are due monthly."));
    }

    #[test]
    fn duplicates_empty_mentions_and_bad_patterns_are_reported() {
        let mut problems = Vec::new();
        parse(
            "[[topics]]\ncategory = \"Insurance\"\nmentions = ['(x']\n\n[[topics]]\ncategory = \"Insurance\"\nmentions = []\n",
            &mut problems,
        );
        let messages: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        assert!(messages.iter().any(|m| m.contains("does not compile")), "{messages:?}");
        assert!(messages.iter().any(|m| m.contains("listed twice")), "{messages:?}");
        assert!(messages.iter().any(|m| m.contains("at least one mention")), "{messages:?}");
    }
}

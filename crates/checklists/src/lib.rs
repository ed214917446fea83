//! The checklist library: the 34 contract types and their checklist items, loaded from the data files in
//! `checklists/` (embedded into the binary at compile time, or read from a directory for tools and tests), validated
//! (structure, ids, sections, every pattern is valid `regex` syntax, matched case-insensitively) and indexed for
//! lookup by type, section and item. Owns the catalog version and content hash recorded with every evaluation, the
//! compiled patterns the classifier and offline evaluator use (compiled on first use, once per distinct pattern), and the export and
//! statistics the CLI prints.
//! Imports only `pactwise-domain`; no store, no network.

mod categories;
mod compiled;
mod report;
mod similarity;
mod topics;
mod validate;

pub use categories::{CATEGORIES_FILE, CategorySignals, CompiledCategorySignals};
pub use compiled::{CompiledItemSignals, CompiledTypeSignals, compile_pattern};
pub use report::{
    CatalogExport, CatalogStats, CuadCategoryCount, FieldCount, FieldCoverage, RiskCounts, SectionStats, TypeStats,
};
pub use similarity::{QuestionPair, closest_question_pair, question_similarity, question_tokens};
pub use topics::{CategoryTopic, CompiledTopic, TOPICS_FILE};
pub use validate::Problem;

use compiled::CompiledPatterns;
use pactwise_domain::{CatalogVersion, ChecklistItem, ContractType, CuadCategory, ErrorCode, Section};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

/// Why the checklist library could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("cannot read {path}: {source}; check that the checklists directory exists and is readable")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the checklist library has {} problem(s); fix the data files (checklists/schema.json describes them):\n{}",
        .problems.len(),
        render_problems(.problems)
    )]
    Invalid { problems: Vec<Problem> },
}

impl CatalogError {
    /// The stable code for the UI and the CLI. The embedded library is checked by this crate's tests, so at run time
    /// `Invalid` means a library directory given by a person or tool is broken.
    pub fn code(&self) -> ErrorCode {
        match self {
            CatalogError::Read { .. } => ErrorCode::FileUnreadable,
            CatalogError::Invalid { .. } => ErrorCode::InvalidInput,
        }
    }
}

fn render_problems(problems: &[Problem]) -> String {
    let mut text = String::new();
    for problem in problems {
        let _ = writeln!(text, "  - {problem}");
    }
    text
}

/// `checklists/catalog.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    version: String,
}

/// The loaded, validated and indexed checklist library. Types are ordered by id; items keep their file order.
#[derive(Debug)]
pub struct Catalog {
    version: CatalogVersion,
    types: Vec<ContractType>,
    /// Parallel to `types`: compiled on first use.
    type_signals: Vec<OnceLock<CompiledTypeSignals>>,
    /// Parallel to `types[t].items`: compiled on first use.
    item_signals: Vec<Vec<OnceLock<CompiledItemSignals>>>,
    type_index: HashMap<String, usize>,
    item_index: HashMap<String, (usize, usize)>,
    /// Per-CUAD-category clause signals (`categories.toml`), shared by the items of each category.
    categories: Vec<CategorySignals>,
    /// Parallel to `categories`: compiled on first use.
    compiled_categories: OnceLock<Vec<CompiledCategorySignals>>,
    /// Where each category's clauses live (`topics.toml`).
    topics: Vec<CategoryTopic>,
    compiled_topics: OnceLock<Vec<CompiledTopic>>,
    /// Every pattern compiled so far, once per distinct text, shared by the compiled signals above.
    patterns: CompiledPatterns,
}

impl Catalog {
    /// The library embedded in this binary at compile time.
    pub fn load() -> Result<Catalog, CatalogError> {
        let files = embedded::TYPE_FILES.iter().map(|(name, text)| ((*name).to_owned(), (*text).to_owned())).collect();
        Catalog::from_sources(embedded::CATALOG_TOML, files)?
            .with_categories(embedded::CATEGORIES_TOML)?
            .with_topics(embedded::TOPICS_TOML)
    }

    /// The library in a directory laid out like `checklists/`: `catalog.toml` and `types/*.toml`.
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<Catalog, CatalogError> {
        let dir = dir.as_ref();
        let read = |path: PathBuf| fs::read_to_string(&path).map_err(|source| CatalogError::Read { path, source });
        let catalog_toml = read(dir.join("catalog.toml"))?;
        let types_dir = dir.join("types");
        let entries =
            fs::read_dir(&types_dir).map_err(|source| CatalogError::Read { path: types_dir.clone(), source })?;
        let mut paths = Vec::new();
        for entry in entries {
            let path = entry.map_err(|source| CatalogError::Read { path: types_dir.clone(), source })?.path();
            if path.extension().is_some_and(|ext| ext == "toml") {
                paths.push(path);
            }
        }
        paths.sort();
        let mut files = Vec::with_capacity(paths.len());
        for path in paths {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            files.push((name, read(path)?));
        }
        let catalog = Catalog::from_sources(&catalog_toml, files)?;
        let categories = dir.join(CATEGORIES_FILE);
        let catalog = if categories.exists() { catalog.with_categories(&read(categories)?)? } else { catalog };
        let topics = dir.join(TOPICS_FILE);
        if topics.exists() { catalog.with_topics(&read(topics)?) } else { Ok(catalog) }
    }

    /// Adds where each category's clauses live (the text of `topics.toml`), replacing any loaded before.
    pub fn with_topics(mut self, text: &str) -> Result<Catalog, CatalogError> {
        let mut problems = Vec::new();
        let topics = topics::parse(text, &mut problems);
        if !problems.is_empty() {
            return Err(CatalogError::Invalid { problems });
        }
        self.topics = topics;
        self.compiled_topics = OnceLock::new();
        self.version.hash = content_hash_with_categories(&self.types, &self.categories, &self.topics);
        Ok(self)
    }

    /// A CUAD category's topic, compiled (all topics on the first call, then kept).
    pub fn topic(&self, category: CuadCategory) -> Option<&CompiledTopic> {
        self.compiled_topics
            .get_or_init(|| topics::compile_all(&self.topics, &self.patterns))
            .iter()
            .find(|t| t.category == category)
    }

    /// Adds the per-category clause signals (the text of `categories.toml`), replacing any loaded before.
    pub fn with_categories(mut self, text: &str) -> Result<Catalog, CatalogError> {
        let mut problems = Vec::new();
        let categories = categories::parse(text, &mut problems);
        if !problems.is_empty() {
            return Err(CatalogError::Invalid { problems });
        }
        self.categories = categories;
        self.compiled_categories = OnceLock::new();
        // The category signals decide offline answers, so they are part of what the hash identifies.
        self.version.hash = content_hash_with_categories(&self.types, &self.categories, &self.topics);
        Ok(self)
    }

    /// The per-category clause signals as loaded (empty when the library has no `categories.toml`).
    pub fn categories(&self) -> &[CategorySignals] {
        &self.categories
    }

    /// A CUAD category's clause signals, compiled (all categories on the first call, then kept).
    pub fn category_signals(&self, category: CuadCategory) -> Option<&CompiledCategorySignals> {
        self.compiled_categories
            .get_or_init(|| categories::compile_all(&self.categories, &self.patterns))
            .iter()
            .find(|c| c.category == category)
    }

    /// Parses, validates and indexes the library from its texts: `catalog.toml` and (file name, text) of each type.
    /// Every problem found is reported at once, not only the first.
    pub fn from_sources(catalog_toml: &str, files: Vec<(String, String)>) -> Result<Catalog, CatalogError> {
        let _span = tracing::info_span!("checklists.load", files = files.len()).entered();
        let mut problems = Vec::new();

        let version = match toml::from_str::<CatalogFile>(catalog_toml) {
            Ok(file) => {
                validate::check_version(&file.version, &mut problems);
                file.version
            }
            Err(error) => {
                problems.push(Problem::new("catalog.toml", "", format!("not a valid catalog file: {error}")));
                String::new()
            }
        };

        let mut types = Vec::with_capacity(files.len());
        for (name, text) in files {
            let mut contract_type = match toml::from_str::<ContractType>(&text) {
                Ok(contract_type) => contract_type,
                Err(error) => {
                    problems.push(Problem::new(&name, "", format!("not a valid checklist file: {error}")));
                    continue;
                }
            };
            validate::fill_item_types(&name, &mut contract_type, &mut problems);
            validate::check_type(&name, &contract_type, &mut problems);
            compiled::check_type_patterns(&name, &contract_type, &mut problems);
            types.push(contract_type);
        }
        validate::check_library(&types, &mut problems);
        if !problems.is_empty() {
            tracing::warn!(problems = problems.len(), "checklist library is invalid");
            return Err(CatalogError::Invalid { problems });
        }

        types.sort_by(|a, b| a.id.cmp(&b.id));
        let type_signals = types.iter().map(|_| OnceLock::new()).collect();
        let item_signals = types.iter().map(|t| t.items.iter().map(|_| OnceLock::new()).collect()).collect();

        let mut type_index = HashMap::with_capacity(types.len());
        let mut item_index = HashMap::new();
        for (t, contract_type) in types.iter().enumerate() {
            type_index.insert(contract_type.id.clone(), t);
            for (i, item) in contract_type.items.iter().enumerate() {
                item_index.insert(item.id.clone(), (t, i));
            }
        }
        let hash = content_hash(&types);
        tracing::debug!(types = types.len(), items = item_index.len(), %hash, "checklist library loaded");
        Ok(Catalog {
            version: CatalogVersion { version, hash },
            types,
            type_signals,
            item_signals,
            type_index,
            item_index,
            categories: Vec::new(),
            compiled_categories: OnceLock::new(),
            topics: Vec::new(),
            compiled_topics: OnceLock::new(),
            patterns: CompiledPatterns::default(),
        })
    }

    /// The same library with nothing compiled: what an idle desktop keeps instead of this catalog, whose compiled
    /// patterns (tens to hundreds of megabytes once a review has run) are then dropped with it. Its signals compile
    /// again on first use, as after [`Catalog::load`].
    pub fn uncompiled(&self) -> Catalog {
        Catalog {
            version: self.version.clone(),
            types: self.types.clone(),
            type_signals: self.types.iter().map(|_| OnceLock::new()).collect(),
            item_signals: self.types.iter().map(|t| t.items.iter().map(|_| OnceLock::new()).collect()).collect(),
            type_index: self.type_index.clone(),
            item_index: self.item_index.clone(),
            categories: self.categories.clone(),
            compiled_categories: OnceLock::new(),
            topics: self.topics.clone(),
            compiled_topics: OnceLock::new(),
            patterns: CompiledPatterns::default(),
        }
    }

    /// How many distinct patterns this catalog has compiled (each once, however many signals use it).
    pub fn compiled_pattern_count(&self) -> usize {
        self.patterns.len()
    }

    /// The version and content hash to record with every evaluation.
    pub fn version(&self) -> &CatalogVersion {
        &self.version
    }

    /// Every type, ordered by id.
    pub fn types(&self) -> &[ContractType] {
        &self.types
    }

    /// Every item of every type (types by id, items in review order).
    pub fn items(&self) -> impl Iterator<Item = &ChecklistItem> {
        self.types.iter().flat_map(|t| t.items.iter())
    }

    pub fn item_count(&self) -> usize {
        self.item_index.len()
    }

    pub fn contract_type(&self, type_id: &str) -> Option<&ContractType> {
        self.type_index.get(type_id).map(|&t| &self.types[t])
    }

    pub fn section(&self, type_id: &str, section_id: &str) -> Option<&Section> {
        self.contract_type(type_id)?.sections.iter().find(|s| s.id == section_id)
    }

    /// The items of one section, in review order; `None` if the type or section does not exist.
    pub fn section_items(&self, type_id: &str, section_id: &str) -> Option<Vec<&ChecklistItem>> {
        let contract_type = self.contract_type(type_id)?;
        contract_type.sections.iter().find(|s| s.id == section_id)?;
        Some(contract_type.items.iter().filter(|item| item.section == section_id).collect())
    }

    pub fn item(&self, item_id: &str) -> Option<&ChecklistItem> {
        self.item_index.get(item_id).map(|&(t, i)| &self.types[t].items[i])
    }

    /// The type's classifier patterns, compiled (on the first call for the type, then kept).
    pub fn type_signals(&self, type_id: &str) -> Option<&CompiledTypeSignals> {
        let &t = self.type_index.get(type_id)?;
        Some(self.type_signals[t].get_or_init(|| CompiledTypeSignals::compile(&self.types[t].signals, &self.patterns)))
    }

    /// The item's evaluator patterns, compiled (on the first call for the item, then kept).
    pub fn item_signals(&self, item_id: &str) -> Option<&CompiledItemSignals> {
        let &(t, i) = self.item_index.get(item_id)?;
        Some(
            self.item_signals[t][i]
                .get_or_init(|| CompiledItemSignals::compile(&self.types[t].items[i], &self.patterns)),
        )
    }
}

/// The catalog a long-running process shares (the desktop's): handed out as an `Arc` to each review, and swapped for
/// an [uncompiled](Catalog::uncompiled) copy once no review holds it and nothing has asked for it for a while, so an
/// idle desktop gives back the memory its compiled patterns took.
#[derive(Debug)]
pub struct SharedCatalog {
    slot: std::sync::Mutex<SharedSlot>,
}

#[derive(Debug)]
struct SharedSlot {
    catalog: std::sync::Arc<Catalog>,
    last_used: Option<std::time::Instant>,
}

impl SharedCatalog {
    pub fn new(catalog: Catalog) -> SharedCatalog {
        SharedCatalog {
            slot: std::sync::Mutex::new(SharedSlot { catalog: std::sync::Arc::new(catalog), last_used: None }),
        }
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, SharedSlot> {
        self.slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The catalog, for one piece of work; the work's end is when the returned `Arc` is dropped.
    pub fn get(&self) -> std::sync::Arc<Catalog> {
        let mut slot = self.slot();
        slot.last_used = Some(std::time::Instant::now());
        slot.catalog.clone()
    }

    /// Drops the compiled patterns when nothing has asked for the catalog during `idle` before `now` and no work
    /// holds it (work that holds it keeps its patterns until it ends); they compile again on next use. Returns
    /// whether they were dropped.
    pub fn release_compiled_if_idle(&self, now: std::time::Instant, idle: std::time::Duration) -> bool {
        let mut slot = self.slot();
        let unused = slot.last_used.is_none_or(|used| now.saturating_duration_since(used) >= idle);
        let held = std::sync::Arc::strong_count(&slot.catalog) > 1;
        let compiled = slot.catalog.compiled_pattern_count();
        if unused && !held && compiled > 0 {
            slot.catalog = std::sync::Arc::new(slot.catalog.uncompiled());
            tracing::info!(
                patterns = compiled,
                "the checklist library's compiled patterns were released after sitting unused"
            );
            return true;
        }
        false
    }
}

/// SHA-256 (lowercase hex) of the canonical serialization: the types ordered by id, serialized as compact JSON with
/// fields in declaration order. Formatting, comments and key order in the TOML files do not change it.
fn content_hash(types: &[ContractType]) -> String {
    let canonical = serde_json::to_vec(types).expect("checklist types serialize to JSON");
    hex::encode(Sha256::digest(&canonical))
}

/// The content hash of the types followed by the per-category signals (each as compact JSON).
fn content_hash_with_categories(
    types: &[ContractType],
    categories: &[CategorySignals],
    topics: &[CategoryTopic],
) -> String {
    if categories.is_empty() && topics.is_empty() {
        return content_hash(types);
    }
    let mut canonical = serde_json::to_vec(types).expect("checklist types serialize to JSON");
    canonical.extend(serde_json::to_vec(categories).expect("category signals serialize to JSON"));
    if !topics.is_empty() {
        canonical.extend(serde_json::to_vec(topics).expect("topics serialize to JSON"));
    }
    hex::encode(Sha256::digest(&canonical))
}

/// The whole embedded catalog, for `pactwise checklists export --json`.
pub fn export() -> Result<CatalogExport, CatalogError> {
    Ok(Catalog::load()?.export())
}

/// Counts and field coverage of the embedded catalog, for `pactwise checklists stats --json`.
pub fn stats() -> Result<CatalogStats, CatalogError> {
    Ok(Catalog::load()?.stats())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_shared_catalog_drops_its_compiled_patterns_only_when_idle_and_unheld() {
        let shared = SharedCatalog::new(Catalog::load().unwrap());
        let idle = Duration::from_secs(120);
        assert!(!shared.release_compiled_if_idle(Instant::now() + idle, idle), "nothing compiled, nothing to drop");

        let review = shared.get();
        review.type_signals("nda").unwrap();
        let compiled = review.compiled_pattern_count();
        assert!(compiled > 0);
        let later = Instant::now() + idle;
        assert!(!shared.release_compiled_if_idle(later, idle), "a review still holds the catalog");
        drop(review);
        assert!(!shared.release_compiled_if_idle(Instant::now(), idle), "asked for a moment ago");
        assert_eq!(shared.get().compiled_pattern_count(), compiled, "kept while in use");

        assert!(shared.release_compiled_if_idle(Instant::now() + idle, idle));
        let next = shared.get();
        assert_eq!(next.compiled_pattern_count(), 0, "dropped");
        assert!(
            next.type_signals("nda").unwrap().title_patterns.iter().any(|r| r.is_match("NON-DISCLOSURE AGREEMENT"))
        );
        assert_eq!(next.compiled_pattern_count(), compiled, "compiled again on use");
    }
}

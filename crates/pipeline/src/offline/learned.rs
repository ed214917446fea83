//! The learned part of the offline pre-fill: for each CUAD clause category the checklists map to, one logistic
//! regression over a sentence's embedding (the local all-MiniLM-L6-v2, 384 dimensions, plus a bias), trained by
//! `examples/train_prefill.rs` on the CUAD dev split and shipped as `prefill_classifier.json` (its training data,
//! seed and embedding model id recorded in it). It reads only [`classifier_sentences`] (operative text) and proposes
//! where a category's clause is; [`super::evaluate`] combines that with the rules per category as the training chose
//! ([`Combine`]), and the evidence rules still decide what may be quoted. Weights trained on another embedding model
//! are not used: the rules alone answer, and the stage says why.

use super::ContractIndex;
use pactwise_domain::CuadCategory;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::LazyLock;

/// A sentence the classifier reads has at least this many words (as the rules' supporting sentences).
pub const MIN_WORDS: usize = 6;

/// The weights the product uses (see `bench/README.md`, "Learned pre-fill", for how they were trained).
const SHIPPED: &str = include_str!("prefill_classifier.json");

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LearnedError {
    #[error("the pre-fill classifier's weights cannot be read ({0}); the rules alone answer")]
    BadWeights(String),
    #[error(
        "the pre-fill classifier was trained on sentence vectors of {trained} but the installed embedding model is \
         {installed}; the rules alone answer until it is retrained (examples/train_prefill.rs)"
    )]
    ModelMismatch { trained: String, installed: String },
    #[error("the local embedding model is not available ({0}); the rules alone answer")]
    NoEmbedder(String),
    #[error("the contract's sentences could not be embedded ({0}); the rules alone answer")]
    Embedding(String),
}

/// How a category's presence comes from the rules and the classifier (chosen per category on the training half, by
/// the presence F1 of classifier scores the training did not fit on).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Combine {
    /// The rules alone (the classifier only picks the quote among what it scores above its threshold).
    Rules,
    /// The classifier alone decides presence.
    Classifier,
    /// Present when either says so.
    Either,
    /// Present only when both say so.
    Both,
}

impl Combine {
    /// In order of preference when they tie.
    pub const ALL: [Combine; 4] = [Combine::Rules, Combine::Either, Combine::Both, Combine::Classifier];

    pub fn present(self, rules: bool, classifier: bool) -> bool {
        match self {
            Combine::Rules => rules,
            Combine::Classifier => classifier,
            Combine::Either => rules || classifier,
            Combine::Both => rules && classifier,
        }
    }
}

/// Where the quote of a clause both the rules and the classifier found comes from (chosen per category on the
/// training half: whichever lay on a labelled span more often, the rules when tied).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuoteFrom {
    #[default]
    Rules,
    /// The classifier's best sentence, when it reaches the threshold.
    Classifier,
}

/// One category's logistic regression and how it is used.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CategoryWeights {
    pub category: String,
    pub combine: Combine,
    #[serde(default)]
    pub quote: QuoteFrom,
    /// The classifier calls the clause present when its best sentence's probability reaches this.
    pub threshold: f32,
    pub bias: f32,
    pub weights: Vec<f32>,
}

impl CategoryWeights {
    /// The probability that a sentence (its unit vector) belongs to this category's clause.
    pub fn probability(&self, vector: &[f32]) -> f32 {
        sigmoid(pactwise_embed::dot(&self.weights, vector) + self.bias)
    }
}

pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// The weights file: the classifier and the record of how it was made.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClassifierFile {
    /// The embedding model the sentence vectors came from ([`pactwise_embed::Embedder::model_id`]).
    pub embedding_model_id: String,
    pub dimensions: usize,
    pub seed: u64,
    pub epochs: usize,
    /// Which data it was trained on, in words.
    pub trained_on: String,
    /// The CUAD contracts it was trained on.
    pub contracts: Vec<String>,
    pub categories: Vec<CategoryWeights>,
}

/// The classifier, ready to score a contract's sentences.
#[derive(Debug, Clone)]
pub struct PrefillClassifier {
    file: ClassifierFile,
    by_category: HashMap<CuadCategory, usize>,
}

static SHIPPED_CLASSIFIER: LazyLock<Result<PrefillClassifier, LearnedError>> =
    LazyLock::new(|| PrefillClassifier::from_json(SHIPPED));

impl PrefillClassifier {
    /// Reads a weights file, refusing one whose vectors do not have the embedding's dimensions or that names an
    /// unknown category.
    pub fn from_json(text: &str) -> Result<Self, LearnedError> {
        let file: ClassifierFile = serde_json::from_str(text).map_err(|e| LearnedError::BadWeights(e.to_string()))?;
        if file.dimensions != pactwise_embed::DIMENSIONS {
            return Err(LearnedError::BadWeights(format!(
                "{} dimensions, the embedding has {}",
                file.dimensions,
                pactwise_embed::DIMENSIONS
            )));
        }
        let mut by_category = HashMap::new();
        for (i, c) in file.categories.iter().enumerate() {
            let category: CuadCategory = c.category.parse().map_err(LearnedError::BadWeights)?;
            if c.weights.len() != file.dimensions || !c.bias.is_finite() || c.weights.iter().any(|w| !w.is_finite()) {
                return Err(LearnedError::BadWeights(format!(
                    "the weights of {} are not {} numbers",
                    c.category, file.dimensions
                )));
            }
            by_category.insert(category, i);
        }
        Ok(PrefillClassifier { file, by_category })
    }

    /// The classifier the product ships.
    pub fn shipped() -> Result<&'static PrefillClassifier, LearnedError> {
        SHIPPED_CLASSIFIER.as_ref().map_err(Clone::clone)
    }

    pub fn file(&self) -> &ClassifierFile {
        &self.file
    }

    pub fn category(&self, category: CuadCategory) -> Option<&CategoryWeights> {
        self.by_category.get(&category).map(|&i| &self.file.categories[i])
    }

    /// Scores a contract's [`classifier_sentences`] given their vectors (in that order) from `embedding_model_id`.
    pub fn score(
        &self,
        index: &ContractIndex,
        embedding_model_id: &str,
        vectors: &[Vec<f32>],
    ) -> Result<SentenceScores, LearnedError> {
        if embedding_model_id != self.file.embedding_model_id {
            return Err(LearnedError::ModelMismatch {
                trained: self.file.embedding_model_id.clone(),
                installed: embedding_model_id.to_owned(),
            });
        }
        let sentences = classifier_sentences(index);
        if sentences.len() != vectors.len() {
            return Err(LearnedError::Embedding(format!(
                "{} vectors for {} sentences",
                vectors.len(),
                sentences.len()
            )));
        }
        let categories = self
            .by_category
            .iter()
            .map(|(&c, &i)| {
                let w = &self.file.categories[i];
                let probabilities = vectors.iter().map(|v| w.probability(v)).collect();
                (c, CategoryScores { combine: w.combine, quote: w.quote, threshold: w.threshold, probabilities })
            })
            .collect();
        Ok(SentenceScores { sentences, categories })
    }

    /// Embeds a contract's [`classifier_sentences`] with `vectors` and scores them.
    pub fn score_with(
        &self,
        index: &ContractIndex,
        vectors: &dyn SentenceVectors,
    ) -> Result<SentenceScores, LearnedError> {
        let _span = tracing::debug_span!("offline.learned.score").entered();
        if vectors.model_id() != self.file.embedding_model_id {
            return Err(LearnedError::ModelMismatch {
                trained: self.file.embedding_model_id.clone(),
                installed: vectors.model_id().to_owned(),
            });
        }
        let texts = sentence_texts(index);
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let embedded = vectors.vectors(&texts).map_err(LearnedError::Embedding)?;
        self.score(index, vectors.model_id(), &embedded)
    }
}

/// Where sentence vectors come from: the embedding model, or (for the evaluation and training) a cache of its vectors.
pub trait SentenceVectors: Sync {
    fn model_id(&self) -> &str;
    /// One unit vector per text, in order.
    fn vectors(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String>;
}

impl SentenceVectors for pactwise_embed::Embedder {
    fn model_id(&self) -> &str {
        pactwise_embed::Embedder::model_id(self)
    }

    fn vectors(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        self.embed(texts).map_err(|e| e.to_string())
    }
}

/// The sentences the classifier scores: operative text only (the body and exhibits, never a running line, the table
/// of contents, a bare heading, a cross-reference, a definition, the recitals, the cover or a signature block), of at
/// least [`MIN_WORDS`] words. What the pre-fill embeds, so what the evaluation and training embed too.
pub fn classifier_sentences(index: &ContractIndex) -> Vec<usize> {
    (0..index.sentences().len())
        .filter(|&i| {
            index.place(i).is_operative()
                && index.sentence_text(&index.sentences()[i]).split_whitespace().count() >= MIN_WORDS
        })
        .collect()
}

/// The texts of [`classifier_sentences`], in order (owned, to embed on another thread).
pub fn sentence_texts(index: &ContractIndex) -> Vec<String> {
    classifier_sentences(index).into_iter().map(|i| index.sentence_text(&index.sentences()[i]).to_owned()).collect()
}

/// A contract's sentences scored for every category the classifier knows.
#[derive(Debug, Clone)]
pub struct SentenceScores {
    /// Indices into the index's sentences.
    sentences: Vec<usize>,
    categories: HashMap<CuadCategory, CategoryScores>,
}

/// One category's scores of a contract's sentences, and how they are used.
#[derive(Debug, Clone)]
pub struct CategoryScores {
    pub combine: Combine,
    pub quote: QuoteFrom,
    pub threshold: f32,
    /// One per sentence of [`SentenceScores`].
    probabilities: Vec<f32>,
}

impl SentenceScores {
    pub fn category(&self, category: CuadCategory) -> Option<&CategoryScores> {
        self.categories.get(&category)
    }

    /// The sentence most likely to be the category's clause, and its probability (the earliest among equals).
    pub fn best(&self, category: CuadCategory) -> Option<(usize, f32)> {
        let scores = self.categories.get(&category)?;
        self.sentences
            .iter()
            .copied()
            .zip(scores.probabilities.iter().copied())
            .rev()
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// The probability of one sentence, when the classifier read it.
    pub fn probability(&self, category: CuadCategory, sentence: usize) -> Option<f32> {
        let at = self.sentences.binary_search(&sentence).ok()?;
        self.categories.get(&category).map(|s| s.probabilities[at])
    }
}

/// The classifier and where its sentence vectors come from, for one review.
pub struct Learned<'a> {
    pub classifier: &'a PrefillClassifier,
    pub vectors: &'a dyn SentenceVectors,
}

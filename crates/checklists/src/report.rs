//! What the CLI prints: the whole catalog (`export`) and its counts and field coverage (`stats`).

use crate::Catalog;
use pactwise_domain::{CatalogVersion, ChecklistItem, ContractType, CuadCategory, CuadType, RiskLevel};
use serde::Serialize;

/// The whole catalog: every type with all its fields and every item with all its fields.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct CatalogExport {
    pub catalog: CatalogVersion,
    pub type_count: usize,
    pub item_count: usize,
    /// Ordered by type id; items in review order.
    pub types: Vec<ContractType>,
}

/// Items per risk level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, specta::Type)]
pub struct RiskCounts {
    pub critical: usize,
    pub high: usize,
    pub medium: usize,
    pub low: usize,
}

impl RiskCounts {
    fn add(&mut self, risk: RiskLevel) {
        match risk {
            RiskLevel::Critical => self.critical += 1,
            RiskLevel::High => self.high += 1,
            RiskLevel::Medium => self.medium += 1,
            RiskLevel::Low => self.low += 1,
        }
    }
}

/// How many items carry an optional field, and what share of all items that is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, specta::Type)]
pub struct FieldCount {
    pub items: usize,
    /// Percent of all items, rounded to one decimal.
    pub percent: f64,
}

/// Items carrying each optional field.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct FieldCoverage {
    pub benchmark: FieldCount,
    pub red_flags: FieldCount,
    pub regulatory: FieldCount,
    pub preferred_position: FieldCount,
    pub fallback_position: FieldCount,
    pub cuad_category: FieldCount,
    pub partial_signals: FieldCount,
    pub absent_signals: FieldCount,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct TypeStats {
    pub id: String,
    pub name: String,
    pub cuad_type: Option<CuadType>,
    pub sections: usize,
    pub items: usize,
    pub by_risk: RiskCounts,
    /// Distinct CUAD categories mapped by the type's items.
    pub cuad_categories: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct SectionStats {
    pub type_id: String,
    pub section_id: String,
    pub name: String,
    pub items: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct CuadCategoryCount {
    pub category: CuadCategory,
    /// Items mapped to the category, across the library.
    pub items: usize,
    /// Types with at least one item mapped to it.
    pub types: usize,
}

/// Counts per type, section and risk level, and how many items carry each optional field.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct CatalogStats {
    pub catalog: CatalogVersion,
    pub type_count: usize,
    pub cuad_type_count: usize,
    pub section_count: usize,
    pub item_count: usize,
    pub by_risk: RiskCounts,
    pub fields: FieldCoverage,
    pub per_type: Vec<TypeStats>,
    pub per_section: Vec<SectionStats>,
    /// Every one of the 41 categories, in CUAD order, with zero where nothing maps to it.
    pub per_cuad_category: Vec<CuadCategoryCount>,
}

fn count(items: &[&ChecklistItem], has: impl Fn(&ChecklistItem) -> bool) -> FieldCount {
    let n = items.iter().filter(|item| has(item)).count();
    let percent = if items.is_empty() { 0.0 } else { (n as f64 * 1000.0 / items.len() as f64).round() / 10.0 };
    FieldCount { items: n, percent }
}

impl Catalog {
    pub fn export(&self) -> CatalogExport {
        CatalogExport {
            catalog: self.version().clone(),
            type_count: self.types().len(),
            item_count: self.item_count(),
            types: self.types().to_vec(),
        }
    }

    pub fn stats(&self) -> CatalogStats {
        let items: Vec<&ChecklistItem> = self.items().collect();
        let mut by_risk = RiskCounts::default();
        for item in &items {
            by_risk.add(item.risk);
        }
        let fields = FieldCoverage {
            benchmark: count(&items, |i| i.benchmark.is_some()),
            red_flags: count(&items, |i| !i.red_flags.is_empty()),
            regulatory: count(&items, |i| !i.regulatory.is_empty()),
            preferred_position: count(&items, |i| i.preferred_position.is_some()),
            fallback_position: count(&items, |i| i.fallback_position.is_some()),
            cuad_category: count(&items, |i| i.cuad_category.is_some()),
            partial_signals: count(&items, |i| !i.signals.partial.is_empty()),
            absent_signals: count(&items, |i| !i.signals.absent.is_empty()),
        };

        let mut per_type = Vec::new();
        let mut per_section = Vec::new();
        for t in self.types() {
            let mut risks = RiskCounts::default();
            for item in &t.items {
                risks.add(item.risk);
            }
            let mut categories: Vec<CuadCategory> = t.items.iter().filter_map(|i| i.cuad_category).collect();
            categories.sort_unstable();
            categories.dedup();
            per_type.push(TypeStats {
                id: t.id.clone(),
                name: t.name.clone(),
                cuad_type: t.cuad_type,
                sections: t.sections.len(),
                items: t.items.len(),
                by_risk: risks,
                cuad_categories: categories.len(),
            });
            for section in &t.sections {
                per_section.push(SectionStats {
                    type_id: t.id.clone(),
                    section_id: section.id.clone(),
                    name: section.name.clone(),
                    items: t.items.iter().filter(|i| i.section == section.id).count(),
                });
            }
        }

        let per_cuad_category = CuadCategory::ALL
            .iter()
            .map(|&category| CuadCategoryCount {
                category,
                items: items.iter().filter(|i| i.cuad_category == Some(category)).count(),
                types: self
                    .types()
                    .iter()
                    .filter(|t| t.items.iter().any(|i| i.cuad_category == Some(category)))
                    .count(),
            })
            .collect();

        CatalogStats {
            catalog: self.version().clone(),
            type_count: self.types().len(),
            cuad_type_count: self.types().iter().filter(|t| t.cuad_type.is_some()).count(),
            section_count: per_section.len(),
            item_count: items.len(),
            by_risk,
            fields,
            per_type,
            per_section,
            per_cuad_category,
        }
    }
}

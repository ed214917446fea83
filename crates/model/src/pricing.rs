//! The price table: every request is priced from its token usage. Prices are integer micro-dollars per million
//! tokens and the arithmetic is integer, so sums are exact; a request's cost is rounded half-up to a whole
//! micro-dollar.

use crate::policy::MODEL_ID;
use pactwise_domain::usage::TokenUsage;

/// Prices of one tier, in micro-dollars per million tokens (so $0.10 / MTok is `100_000`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prices {
    pub input: u64,
    pub output: u64,
    pub cache_write_5m: u64,
    pub cache_write_1h: u64,
    pub cache_read: u64,
}

/// The prices of a model: a standard tier and a long-prompt tier for prompts above a token threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PriceTable {
    pub model: &'static str,
    pub standard: Prices,
    /// Applies to the whole request when its prompt (input + cache writes + cache reads) exceeds the threshold.
    pub long_prompt: Prices,
    pub long_prompt_threshold: u64,
}

/// Claude Haiku 5.5: $0.10 in, $0.50 out, $0.125 5m write, $0.20 1h write, $0.01 cache read per MTok for prompts up
/// to 100k tokens; five times that above.
pub const HAIKU_5_5_PRICES: PriceTable = PriceTable {
    model: MODEL_ID,
    standard: Prices {
        input: 100_000,
        output: 500_000,
        cache_write_5m: 125_000,
        cache_write_1h: 200_000,
        cache_read: 10_000,
    },
    long_prompt: Prices {
        input: 500_000,
        output: 2_500_000,
        cache_write_5m: 625_000,
        cache_write_1h: 1_000_000,
        cache_read: 50_000,
    },
    long_prompt_threshold: 100_000,
};

impl PriceTable {
    /// The tier that applies to a request with this usage.
    pub fn tier(&self, usage: &TokenUsage) -> &Prices {
        if usage.prompt_tokens() > self.long_prompt_threshold { &self.long_prompt } else { &self.standard }
    }

    /// The cost of one request in micro-dollars, rounded half-up.
    pub fn cost_micros(&self, usage: &TokenUsage) -> i64 {
        let prices = self.tier(usage);
        let per_million: u128 = u128::from(usage.input) * u128::from(prices.input)
            + u128::from(usage.output) * u128::from(prices.output)
            + u128::from(usage.cache_write_5m) * u128::from(prices.cache_write_5m)
            + u128::from(usage.cache_write_1h) * u128::from(prices.cache_write_1h)
            + u128::from(usage.cache_read) * u128::from(prices.cache_read);
        let micros = (per_million + 500_000) / 1_000_000;
        i64::try_from(micros).unwrap_or(i64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u32, output: u32, w5: u32, w1: u32, read: u32) -> TokenUsage {
        TokenUsage { input, output, cache_write_5m: w5, cache_write_1h: w1, cache_read: read }
    }

    #[test]
    fn a_million_tokens_of_each_kind_costs_the_listed_price() {
        let t = &HAIKU_5_5_PRICES;
        // One million input tokens alone is a long prompt, so check the standard tier with output only.
        assert_eq!(t.cost_micros(&usage(0, 1_000_000, 0, 0, 0)), 500_000);
        assert_eq!(t.cost_micros(&usage(100_000, 0, 0, 0, 0)), 10_000);
        assert_eq!(t.cost_micros(&usage(0, 0, 100_000, 0, 0)), 12_500);
        assert_eq!(t.cost_micros(&usage(0, 0, 0, 100_000, 0)), 20_000);
        assert_eq!(t.cost_micros(&usage(0, 0, 0, 0, 100_000)), 1_000);
    }

    #[test]
    fn prompts_over_one_hundred_thousand_tokens_use_the_long_prompt_tier_for_everything() {
        let t = &HAIKU_5_5_PRICES;
        // 100_000 prompt tokens exactly: standard. 100_001: long.
        assert_eq!(t.cost_micros(&usage(100_000, 1_000, 0, 0, 0)), 10_000 + 500);
        // 50_001 input + 50_000 cache read = 100_001 prompt tokens.
        let long = usage(50_001, 1_000, 0, 0, 50_000);
        let expected_per_million = 50_001u128 * 500_000 + 1_000 * 2_500_000 + 50_000 * 50_000;
        assert_eq!(t.cost_micros(&long) as u128, (expected_per_million + 500_000) / 1_000_000);
        // 25_000.5 + 2_500 + 2_500 = 30_000.5 µ$, rounded half-up.
        assert_eq!(t.cost_micros(&long), 30_001);
    }

    #[test]
    fn small_requests_round_half_up_to_whole_micro_dollars() {
        let t = &HAIKU_5_5_PRICES;
        assert_eq!(t.cost_micros(&usage(4, 0, 0, 0, 0)), 0); // 0.4 µ$
        assert_eq!(t.cost_micros(&usage(5, 0, 0, 0, 0)), 1); // 0.5 µ$
        assert_eq!(t.cost_micros(&usage(1_000, 200, 0, 0, 0)), 200); // 100 + 100
    }
}

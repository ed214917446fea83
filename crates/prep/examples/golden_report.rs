//! Replays every golden drafting run in `fixtures/prep/` through the fake server and prints the figures: gate pass
//! rate, critic convergence (cycles until no blocker or major finding), cost against its ceiling, measurability
//! rate and coverage of the intake's needs.
//!
//! `cargo run -p pactwise-prep --example golden_report`

#[path = "../tests/support/mod.rs"]
mod support;

use support::golden::{load_all, replay};

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let fixtures = load_all()?;
    let mut passed = 0;
    let (mut scored, mut measurable, mut needs, mut covered) = (0, 0, 0, 0);
    println!(
        "{:<18} {:>5} {:>6} {:>9} {:>15} {:>7} {:>10} {:>6} {:>9}  gate",
        "fixture", "calls", "cycles", "converged", "cost / ceiling", "tokens", "measurable", "needs", "for buyer"
    );
    for f in &fixtures {
        let r = replay(f).await?;
        passed += usize::from(r.published);
        scored += r.scored;
        measurable += r.measurable;
        needs += r.needs;
        covered += r.needs_covered;
        let gate = if r.published {
            "published".to_string()
        } else {
            let mut rules: Vec<&str> = r.gate_violations.iter().map(|v| v.rule.as_str()).collect();
            rules.dedup();
            format!("refused: {}", rules.join(", "))
        };
        println!(
            "{:<18} {:>5} {:>6} {:>9} {:>15} {:>7} {:>10} {:>6} {:>9}  {gate}{}",
            r.name,
            r.model_calls,
            r.critic_cycles,
            r.converged_at_cycle.map(|c| format!("cycle {c}")).unwrap_or_else(|| "no".into()),
            format!("${:.4} / ${:.2}", r.cost_micros as f64 / 1e6, r.ceiling_micros as f64 / 1e6),
            r.tokens,
            format!("{}/{}", r.measurable, r.scored),
            format!("{}/{}", r.needs_covered, r.needs),
            r.findings_for_buyer,
            if r.store_agrees { "" } else { "  (THE STORE REFUSED OTHER RULES THAN THE PRE-CHECK)" },
        );
        for w in &r.warnings {
            println!("{:<18} warning: {w}", "");
        }
    }
    let pct = |a: usize, b: usize| if b == 0 { 0.0 } else { 100.0 * a as f64 / b as f64 };
    println!();
    println!("gate pass rate      {passed}/{} runs ({:.0} %)", fixtures.len(), pct(passed, fixtures.len()));
    println!("measurability rate  {measurable}/{scored} scored requirements ({:.0} %)", pct(measurable, scored));
    println!(
        "needs coverage      {covered}/{needs} intake needs served by a requirement ({:.0} %)",
        pct(covered, needs)
    );
    Ok(())
}

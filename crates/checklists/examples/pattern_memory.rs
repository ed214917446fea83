//! What the checklist library's compiled patterns weigh: the anonymous memory (RssAnon) the process gains as a review
//! compiles and runs them on a contract (every type's classifier signals, every CUAD category's clause signals and
//! topics, one type's items), then with every item compiled. Each distinct pattern is compiled once.
//!
//! cargo run --release -p pactwise-checklists --example pattern_memory -- CONTRACT.txt [TYPE_ID]

fn rss_anon_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("Linux /proc");
    let line = status.lines().find(|l| l.starts_with("RssAnon:")).expect("RssAnon in /proc/self/status");
    line.split_whitespace().nth(1).and_then(|kb| kb.parse().ok()).expect("a number of kB")
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: pattern_memory CONTRACT.txt [TYPE_ID]");
    let type_id = args.next().unwrap_or_else(|| "distributor".to_owned());
    let text = std::fs::read_to_string(&path).expect("a readable text file");
    let start = rss_anon_kb();
    let catalog = pactwise_checklists::Catalog::load().expect("the embedded library loads");
    let mut before = rss_anon_kb();
    println!("library loaded: {} MB", (before - start) / 1024);
    let step = |what: &str, before: &mut u64, clock: std::time::Instant, catalog: &pactwise_checklists::Catalog| {
        let now = rss_anon_kb();
        println!(
            "{what}: +{} MB in {} ms ({} distinct patterns compiled so far)",
            (now - *before) / 1024,
            clock.elapsed().as_millis(),
            catalog.compiled_pattern_count()
        );
        *before = now;
    };
    let mut hits = 0;
    let clock = std::time::Instant::now();
    for t in catalog.types() {
        let s = catalog.type_signals(&t.id).expect("a type's signals");
        hits += s
            .title_patterns
            .iter()
            .chain(&s.distinctive_terms)
            .chain(&s.negative_cues)
            .map(|r| r.find_iter(&text).count())
            .sum::<usize>();
    }
    step("every type's classifier signals, run on the contract", &mut before, clock, &catalog);
    let clock = std::time::Instant::now();
    for category in pactwise_domain::CuadCategory::ALL {
        if let Some(s) = catalog.category_signals(*category) {
            hits += s.clause.iter().map(|r| r.find_iter(&text).count()).sum::<usize>();
        }
        let _ = catalog.topic(*category);
    }
    step("every category's clause signals and topic, run on the contract", &mut before, clock, &catalog);
    let clock = std::time::Instant::now();
    let contract_type = catalog.contract_type(&type_id).expect("a type id of the library");
    for item in &contract_type.items {
        let s = catalog.item_signals(&item.id).expect("an item's signals");
        hits += s.present.iter().chain(&s.partial).chain(&s.absent).map(|r| r.find_iter(&text).count()).sum::<usize>();
    }
    step(
        &format!("{type_id}'s {} items, run on the contract", contract_type.items.len()),
        &mut before,
        clock,
        &catalog,
    );
    let clock = std::time::Instant::now();
    for item in catalog.items() {
        catalog.item_signals(&item.id).expect("an item's signals");
    }
    step("every other item, compiled", &mut before, clock, &catalog);
    println!("total: {} MB; {hits} matches", (rss_anon_kb() - start) / 1024);
}

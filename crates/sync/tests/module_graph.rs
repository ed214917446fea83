//! No two modules of `pactwise-sync` or of `pactwise-sync-server` import each other, directly or around a circle:
//! imports between a crate's files flow one way. Read from the sources: every `crate::name` (and `crate::{a, b}`)
//! is an edge to module `name`, or to the module the crate root re-exports `name` from.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn ident(text: &str) -> String {
    text.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
}

/// The names a path group `{a, b::c, D}` starts with.
fn group_heads(text: &str) -> Vec<String> {
    let mut depth = 0;
    let mut heads = Vec::new();
    let mut at_start = true;
    for (i, c) in text.char_indices() {
        match c {
            '{' => {
                depth += 1;
                at_start = depth == 1;
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => at_start = true,
            c if at_start && depth == 1 && (c.is_alphanumeric() || c == '_') => {
                heads.push(ident(&text[i..]));
                at_start = false;
            }
            _ => {}
        }
    }
    heads
}

/// Module name → the module names it imports.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeMap<String, String> = std::fs::read_dir(src)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        .map(|e| {
            let name = e.path().file_stem().unwrap().to_string_lossy().into_owned();
            // Comments (doc links included) are not imports.
            let text = std::fs::read_to_string(e.path()).unwrap();
            let code = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
            (name, code)
        })
        .collect();
    // What the root re-exports: item name → module.
    let mut reexports = BTreeMap::new();
    let lib = &modules["lib"];
    for (i, _) in lib.match_indices("pub use ") {
        let rest = &lib[i + "pub use ".len()..];
        let module = ident(rest);
        let after = &rest[module.len()..];
        let items = match after.strip_prefix("::") {
            Some(tail) if tail.starts_with('{') => group_heads(tail),
            Some(tail) => vec![ident(tail)],
            None => vec![],
        };
        for item in items {
            reexports.insert(item, module.clone());
        }
    }
    let mut edges = BTreeMap::new();
    for (name, text) in &modules {
        if name == "lib" {
            continue;
        }
        let mut to = BTreeSet::new();
        for (i, _) in text.match_indices("crate::") {
            let rest = &text[i + "crate::".len()..];
            let heads = if rest.starts_with('{') { group_heads(rest) } else { vec![ident(rest)] };
            for head in heads {
                let target =
                    if modules.contains_key(&head) { Some(head.clone()) } else { reexports.get(&head).cloned() };
                if let Some(t) = target.filter(|t| t != name && t != "lib") {
                    to.insert(t);
                }
            }
        }
        edges.insert(name.clone(), to);
    }
    edges
}

/// A circle of imports, if there is one.
fn circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == node) {
            let mut found = path[at..].to_vec();
            found.push(node.to_string());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, edges, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    edges.keys().find_map(|start| visit(start, edges, &mut Vec::new(), &mut done))
}

#[test]
fn no_two_files_of_sync_or_of_the_sync_server_import_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for src in [root.join("src"), root.join("../sync-server/src")] {
        let edges = graph(&src);
        assert!(edges.len() > 5, "read {}: {edges:?}", src.display());
        assert_eq!(circle(&edges), None, "modules of {} import each other", src.display());
    }
}

#[test]
fn a_circle_is_found_when_there_is_one() {
    let mut edges = BTreeMap::new();
    edges.insert("wire".to_string(), BTreeSet::from(["model".to_string()]));
    edges.insert("model".to_string(), BTreeSet::from(["hlc".to_string(), "wire".to_string()]));
    edges.insert("hlc".to_string(), BTreeSet::new());
    assert_eq!(circle(&edges), Some(vec!["model".into(), "wire".into(), "model".into()]));
    edges.get_mut("model").unwrap().remove("wire");
    assert_eq!(circle(&edges), None);
}

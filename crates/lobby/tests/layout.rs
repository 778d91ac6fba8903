//! The binary crate's shape, checked from its sources: no import cycle between its
//! modules (read from `crate::`, `super::`, `self::` and child-module paths, in `use`
//! lines and in code), nothing below `http` importing from it, no file over
//! [`MAX_FILE_LINES`] lines and the crate under [`MAX_CRATE_LINES`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The longest a source file of `crates/lobby/src` may be.
const MAX_FILE_LINES: usize = 700;

/// The most lines `crates/lobby/src` may hold: the binary crate wires the parts
/// together; what can be named (a protocol, an engine, a client, the configuration,
/// a part's tokio driver that needs nothing of the binary) lives in a crate named for
/// it. It grew to 9,700 by issue 21; issue 27 moved out the DNS serving
/// (`nameserver`), the lifecycle (`lifecycle`), the tracker server's admission and
/// queue file (`tracker`), the relay peers' schedule and the feed's records
/// (`relay`), the master's server names and the master-plus-curated merge
/// (`serverlist`), the admin files' reading (`config`) and the state file's check
/// (`master`), and typed the HTTP handlers (`api`): 6,909. Never raised again: what
/// a new feature needs beyond wiring goes into its crate.
const MAX_CRATE_LINES: usize = 7_000;

/// A module of the crate: `http::admin::auth` for `src/http/admin/auth.rs`, `http` for
/// `src/http/mod.rs`, the empty path for `lib.rs`.
type Module = String;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every source file of the library (not `main.rs`: it only dispatches) with its module.
fn modules() -> BTreeMap<Module, String> {
    fn walk(dir: &Path, prefix: &[String], out: &mut BTreeMap<Module, String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                let mut next = prefix.to_vec();
                next.push(p.file_name().unwrap().to_string_lossy().into_owned());
                walk(&p, &next, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let mut path = prefix.to_vec();
                if name != "mod" && name != "lib" {
                    path.push(name.clone());
                }
                if name == "main" && prefix.is_empty() {
                    continue;
                }
                out.insert(path.join("::"), std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(&src(), &[], &mut out);
    out
}

/// The code of a file without comments and string contents (so a doc line naming a
/// module is not an import).
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let line = match line.find("//") {
            Some(i) if !line[..i].contains('"') => &line[..i],
            _ => line,
        };
        let mut in_str = false;
        let mut prev = ' ';
        for c in line.chars() {
            if c == '"' && prev != '\\' {
                in_str = !in_str;
                out.push(c);
            } else if !in_str {
                out.push(c);
            }
            prev = c;
        }
        out.push('\n');
    }
    out
}

/// The paths a file names, each as the segments after its first (`crate`, `super`,
/// `self` or a child module), with `use` groups (`a::{b, c::d}`) expanded.
fn paths(code: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut i = 0;
    while i < bytes.len() {
        if is_ident(bytes[i]) && (i == 0 || !(is_ident(bytes[i - 1]) || bytes[i - 1] == ':')) {
            let start = i;
            while i < bytes.len() && is_ident(bytes[i]) {
                i += 1;
            }
            let head: String = bytes[start..i].iter().collect();
            if bytes.get(i) == Some(&':') && bytes.get(i + 1) == Some(&':') {
                let (tails, end) = tail(&bytes, i + 2);
                for t in tails {
                    out.push((head.clone(), t));
                }
                i = end;
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The path segments from `i` (just after a `::`), expanding `{...}` groups.
fn tail(b: &[char], mut i: usize) -> (Vec<Vec<String>>, usize) {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut segs = Vec::new();
    loop {
        while b.get(i).is_some_and(|c| c.is_whitespace()) {
            i += 1;
        }
        if b.get(i) == Some(&'{') {
            let mut groups = Vec::new();
            i += 1;
            loop {
                while b.get(i).is_some_and(|c| c.is_whitespace() || *c == ',') {
                    i += 1;
                }
                if b.get(i).is_none_or(|c| *c == '}') {
                    i += 1;
                    break;
                }
                let start = i;
                while b.get(i).is_some_and(|c| is_ident(*c)) {
                    i += 1;
                }
                let head: String = b[start..i].iter().collect();
                if b.get(i) == Some(&':') && b.get(i + 1) == Some(&':') {
                    let (tails, end) = tail(b, i + 2);
                    for t in tails {
                        let mut v = vec![head.clone()];
                        v.extend(t);
                        groups.push(v);
                    }
                    i = end;
                } else {
                    groups.push(vec![head]);
                    // skip `as alias` and the like
                    while b.get(i).is_some_and(|c| *c != ',' && *c != '}') {
                        i += 1;
                    }
                }
            }
            let out = groups
                .into_iter()
                .map(|g| {
                    let mut v = segs.clone();
                    v.extend(g);
                    v
                })
                .collect();
            return (out, i);
        }
        let start = i;
        while b.get(i).is_some_and(|c| is_ident(*c)) {
            i += 1;
        }
        if start == i {
            return (vec![segs], i);
        }
        segs.push(b[start..i].iter().collect());
        if b.get(i) == Some(&':') && b.get(i + 1) == Some(&':') {
            i += 2;
        } else {
            return (vec![segs], i);
        }
    }
}

/// The module a path leads into: the longest prefix that is a module (the module itself
/// when the path names an item of it).
fn target(all: &BTreeMap<Module, String>, base: &[String], segs: &[String]) -> Option<Module> {
    let mut best = None;
    for n in 0..=segs.len() {
        let mut m = base.to_vec();
        m.extend(segs[..n].iter().cloned());
        let key = m.join("::");
        if all.contains_key(&key) {
            best = Some(key);
        }
    }
    best
}

/// Who imports whom, at file-module granularity (a module's own inline `mod tests`
/// counts as the module).
fn edges(all: &BTreeMap<Module, String>) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut out: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, text) in all {
        let me: Vec<String> = if module.is_empty() {
            Vec::new()
        } else {
            module.split("::").map(str::to_string).collect()
        };
        let children: BTreeSet<String> = all
            .keys()
            .filter_map(|k| {
                let rest = if me.is_empty() {
                    Some(k.as_str())
                } else {
                    k.strip_prefix(&format!("{module}::"))
                }?;
                (!rest.is_empty() && !rest.contains("::")).then(|| rest.to_string())
            })
            .collect();
        let code = code_only(text);
        for line in code.lines() {
            // `use super::...` indented is inside an inline module (`mod tests`): its
            // `super` is this file's module.
            let inline_use = line.starts_with(' ') && line.trim_start().starts_with("use super::");
            for (head, mut segs) in paths(line) {
                let mut base: Vec<String> = match head.as_str() {
                    "crate" => Vec::new(),
                    "super" if inline_use => me.clone(),
                    "super" => me[..me.len().saturating_sub(1)].to_vec(),
                    "self" => me.clone(),
                    child if children.contains(child) => {
                        let mut b = me.clone();
                        b.push(child.to_string());
                        b
                    }
                    _ => continue,
                };
                while segs.first().is_some_and(|s| s == "super") {
                    segs.remove(0);
                    base.pop();
                }
                if let Some(t) = target(all, &base, &segs) {
                    if &t != module && !t.is_empty() {
                        out.entry(module.clone()).or_default().insert(t);
                    }
                }
            }
        }
    }
    out
}

/// A cycle in `g`, if there is one.
fn cycle(g: &BTreeMap<Module, BTreeSet<Module>>) -> Option<Vec<Module>> {
    fn visit(
        n: &Module,
        g: &BTreeMap<Module, BTreeSet<Module>>,
        state: &mut BTreeMap<Module, u8>,
        stack: &mut Vec<Module>,
    ) -> Option<Vec<Module>> {
        state.insert(n.clone(), 1);
        stack.push(n.clone());
        for m in g.get(n).into_iter().flatten() {
            match state.get(m).copied().unwrap_or(0) {
                1 => {
                    let at = stack.iter().position(|x| x == m).unwrap();
                    let mut c = stack[at..].to_vec();
                    c.push(m.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(m, g, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if state.get(n).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, g, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn no_module_imports_another_in_a_circle() {
    let all = modules();
    let g = edges(&all);
    assert!(g.values().map(BTreeSet::len).sum::<usize>() > 50, "{g:?}");
    if let Some(c) = cycle(&g) {
        panic!("import cycle: {}", c.join(" -> "));
    }
}

/// The imports between sibling subtrees: each edge `a -> b` where neither module
/// holds the other becomes an edge between the two children of their deepest common
/// module that hold them (`http::admin::show -> http::state` is `http::admin ->
/// http::state`). A cycle here is a cycle between subtrees even when no two files
/// import each other in a circle (`http::openapi -> http::routes::pilots` and
/// `http::routes::mod -> http::openapi`).
fn subtree_edges(g: &BTreeMap<Module, BTreeSet<Module>>) -> BTreeMap<Module, BTreeSet<Module>> {
    let path = |m: &str| -> Vec<String> {
        if m.is_empty() {
            Vec::new()
        } else {
            m.split("::").map(str::to_string).collect()
        }
    };
    let mut out: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (from, tos) in g {
        let a = path(from);
        for to in tos {
            let b = path(to);
            let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
            if common == a.len() || common == b.len() {
                continue; // a module and one it holds
            }
            let side = |p: &[String]| p[..=common].join("::");
            out.entry(side(&a)).or_default().insert(side(&b));
        }
    }
    out
}

#[test]
fn no_subtree_imports_a_sibling_in_a_circle() {
    let g = subtree_edges(&edges(&modules()));
    assert!(
        g.contains_key("http") && g.contains_key("http::routes"),
        "{g:?}"
    );
    if let Some(c) = cycle(&g) {
        panic!("import cycle between subtrees: {}", c.join(" -> "));
    }
}

#[test]
fn nothing_below_http_imports_from_it() {
    let all = modules();
    let g = edges(&all);
    for (m, to) in &g {
        if m.starts_with("http") || m.starts_with("commands") {
            continue;
        }
        for t in to {
            assert!(
                !t.starts_with("http") && !t.starts_with("commands"),
                "{m} imports {t}"
            );
        }
    }
}

#[test]
fn no_file_is_longer_than_the_limit() {
    let long: Vec<(String, usize)> = modules()
        .into_iter()
        .map(|(m, text)| (m, text.lines().count()))
        .filter(|(_, n)| *n > MAX_FILE_LINES)
        .collect();
    assert!(long.is_empty(), "over {MAX_FILE_LINES} lines: {long:?}");
}

#[test]
fn the_binary_crate_stays_small() {
    let mut all = modules();
    all.insert(
        "main".into(),
        std::fs::read_to_string(src().join("main.rs")).unwrap(),
    );
    let n: usize = all.values().map(|t| t.lines().count()).sum();
    assert!(n < MAX_CRATE_LINES, "crates/lobby/src holds {n} lines");
}

/// The checker itself: a cycle, an upward import and a group are seen.
#[test]
fn the_checker_sees_cycles_through_groups_and_child_paths() {
    let mut all = BTreeMap::new();
    all.insert(String::new(), "pub mod a; pub mod b;".to_string());
    all.insert(
        "a".to_string(),
        "pub mod c;\nuse crate::b::{x, y::Z};".to_string(),
    );
    all.insert(
        "a::c".to_string(),
        "fn f() { super::super::b::g() }".to_string(),
    );
    all.insert(
        "b".to_string(),
        "pub mod y;\n// crate::a is only named in a comment\nfn g() { y::h(); }".to_string(),
    );
    all.insert(
        "b::y".to_string(),
        "fn h() { crate::a::c::f(); }".to_string(),
    );
    let g = edges(&all);
    assert_eq!(
        g["a"],
        BTreeSet::from(["b".to_string(), "b::y".to_string()])
    );
    assert_eq!(g["a::c"], BTreeSet::from(["b".to_string()]));
    assert_eq!(g["b"], BTreeSet::from(["b::y".to_string()]));
    let c = cycle(&g).expect("b::y -> a::c -> b -> b::y");
    assert!(
        c.contains(&"b::y".to_string()) && c.contains(&"a::c".to_string()),
        "{c:?}"
    );
}

/// The subtree checker sees a cycle no two files make: `s::doc` imports
/// `s::routes::x`, and `s::routes` (its `mod.rs`) imports `s::doc`.
#[test]
fn the_checker_sees_cycles_between_subtrees() {
    let mut all = BTreeMap::new();
    all.insert(String::new(), "pub mod s;".to_string());
    all.insert("s".to_string(), "pub mod doc; pub mod routes;".to_string());
    all.insert(
        "s::doc".to_string(),
        "use crate::s::routes::x::handler;".to_string(),
    );
    all.insert(
        "s::routes".to_string(),
        "pub mod x;\nuse super::doc::Doc;".to_string(),
    );
    all.insert(
        "s::routes::x".to_string(),
        "pub fn handler() {}".to_string(),
    );
    let files = edges(&all);
    assert!(cycle(&files).is_none(), "no file cycle: {files:?}");
    let subtrees = subtree_edges(&files);
    let c = cycle(&subtrees).expect("s::doc -> s::routes -> s::doc");
    assert!(
        c.contains(&"s::doc".to_string()) && c.contains(&"s::routes".to_string()),
        "{c:?}"
    );
}

use std::collections::BTreeMap;
fn main() {
    let spec = _core::spec::Spec::from_json(&std::fs::read_to_string(std::env::args().nth(1).unwrap()).unwrap()).unwrap();
    let line = std::env::args().nth(2).unwrap();
    let mut layouts = BTreeMap::new();
    for (kind, columns) in &spec.kinds { layouts.insert(kind.clone(), _core::columns::Layout::new(columns).unwrap()); }
    let mut parser = _core::line::LineParser::new(&spec, &layouts).unwrap();
    let n = 300_000;
    let s = std::time::Instant::now();
    let mut k = 0;
    for _ in 0..n { if let _core::line::Outcome::Event(e) = parser.parse(&line) { k += e.fields.0.len(); } }
    println!("{:.0}ns per parse ({k})", s.elapsed().as_nanos() as f64 / n as f64);
}

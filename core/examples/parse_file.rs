//! Parse a whole log with a spec and print the rows per kind and the time taken (a profiling aid):
//! `cargo run --release --example parse_file -- SPEC.json LOG`
use _core::block::{parse_block, Shape};
use _core::columns::Layout;
use _core::line::LineParser;
use _core::spec::Spec;
use std::collections::BTreeMap;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let spec = Spec::from_json(&std::fs::read_to_string(&args[1]).map_err(|e| e.to_string())?)?;
    let data = std::fs::read(&args[2]).map_err(|e| e.to_string())?;
    let mut layouts = BTreeMap::new();
    for (kind, columns) in &spec.kinds {
        layouts.insert(kind.clone(), Layout::new(columns)?);
    }
    let mut parser = LineParser::new(&spec, &layouts)?;
    let shape = Shape { engine: spec.engine.clone(), layouts };
    if std::env::var("STAGES").is_ok() {
        stages(&spec, &shape.layouts, &data)?;
    }
    let lines = data.iter().filter(|b| **b == b'\n').count();
    let start = std::time::Instant::now();
    let out = parse_block(&mut parser, &shape, &data, lines, 1)?;
    let secs = start.elapsed().as_secs_f64();
    println!("{lines} lines, {:.1} MB/s, {:.2} us/line, {:?}", data.len() as f64 / secs / 1e6, secs * 1e6 / lines as f64, out.counts);
    Ok(())
}

#[allow(dead_code)]
fn stages(spec: &Spec, layouts: &BTreeMap<String, Layout>, data: &[u8]) -> Result<(), String> {
    let peeler = _core::envelope::Peeler::new(spec)?;
    let mut parser = LineParser::new(spec, layouts)?;
    let lines: Vec<&str> = data.split(|b| *b == b'\n').map(|l| std::str::from_utf8(l).unwrap_or("")).collect();
    let n = lines.len() as f64;
    let t = std::time::Instant::now();
    let mut total = 0usize;
    for l in &lines {
        let f = peeler.peel(_core::text::strip_ansi(l), None);
        total += f.body.1;
    }
    println!("peel: {:.2} us/line ({total})", t.elapsed().as_secs_f64() * 1e6 / n);
    let t = std::time::Instant::now();
    for l in &lines {
        let _ = parser.parse(l);
    }
    println!("parse: {:.2} us/line", t.elapsed().as_secs_f64() * 1e6 / n);
    Ok(())
}

//! Every real sample line of the grammar, read by the core alone: taken by its own rule, with the
//! values its `expect` table states (`logparse.engine.spec.write_specs` dumps the specs and samples
//! to `target/bench/`; `make test` does that before `cargo test`).

use serde_json::Value as Json;
use std::path::Path;

use _core::compiled::Compiled;
use _core::values::Value;

fn load(engine: &str) -> (Compiled, Vec<Json>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench");
    let read = |name: String| {
        std::fs::read_to_string(dir.join(&name))
            .unwrap_or_else(|_| panic!("{name} missing in {}: run `python -m logparse.engine.spec`", dir.display()))
    };
    let compiled = Compiled::from_json(&read(format!("spec-{engine}.json"))).expect("the spec compiles");
    let samples: Vec<Json> = serde_json::from_str(&read(format!("samples-{engine}.json"))).expect("samples JSON");
    (compiled, samples)
}

/// Whether a field the core read is the value the sample expects.
fn same(got: &Value, want: &Json) -> bool {
    match (got, want) {
        (Value::Int(i), Json::Number(n)) => n.as_i64() == Some(*i) || n.as_f64() == Some(*i as f64),
        (Value::Float(f), Json::Number(n)) => n.as_f64().is_some_and(|w| w == *f || (w - f).abs() < 1e-9),
        (Value::Float(f), Json::String(s)) => (s == "nan" && f.is_nan()) || s.parse::<f64>().ok() == Some(*f),
        (Value::Str(s), Json::String(w)) => s == w,
        (Value::Bool(b), Json::Bool(w)) => b == w,
        (Value::Floats(v), Json::Array(w)) => {
            v.len() == w.len() && v.iter().zip(w).all(|(a, b)| same(&Value::Float(*a), b))
        }
        (Value::Null, Json::Null) => true,
        _ => false,
    }
}

fn check(engine: &str) {
    let (compiled, samples) = load(engine);
    assert!(samples.len() > 100, "{engine}: only {} samples", samples.len());
    let mut parser = compiled.take_parser().expect("a parser");
    let mut problems = Vec::new();
    for sample in &samples {
        let line = sample["line"].as_str().expect("line");
        let rule = sample["rule"].as_str().expect("rule");
        parser.reset();
        let event = parser.parse(line);
        let Some(index) = event.rule else {
            problems.push(format!("{rule}: not read: {line}"));
            continue;
        };
        if compiled.rule_names[index] != rule {
            problems.push(format!("{rule}: read by {}: {line}", compiled.rule_names[index]));
            continue;
        }
        let layout = &compiled.layouts[compiled.rule_kind[index]];
        let r = &event.reading;
        for (key, want) in sample["expect"].as_object().expect("expect table") {
            let got = match key.as_str() {
                "ts" => r.ts.clone().map(Value::Str),
                "outer_ts" => r.outer_ts.clone().map(Value::Str),
                "level" => r.level.clone().map(Value::Str),
                "rank" => r.rank.clone().map(Value::Str),
                "task" => r.task.clone().map(Value::Str),
                "pid" => r.pid.map(Value::Int),
                "prefix" => event.prefix.clone().map(Value::Str),
                column => layout.index.get(column).and_then(|c| event.fields.get(*c)).cloned(),
            };
            if !got.as_ref().is_some_and(|g| same(g, want)) {
                problems.push(format!("{rule}: {key} = {got:?}, expected {want}: {line}"));
            }
        }
    }
    compiled.give_back(parser);
    assert!(
        problems.is_empty(),
        "{engine}: {} of {} samples wrong:\n{}",
        problems.len(),
        samples.len(),
        problems.join("\n")
    );
}

#[test]
fn every_vllm_sample_reads_as_its_rule_says() {
    check("vllm");
}

#[test]
fn every_sglang_sample_reads_as_its_rule_says() {
    check("sglang");
}

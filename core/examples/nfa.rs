use std::time::Instant;
use regex_automata::nfa::thompson::{NFA, backtrack::BoundedBacktracker, pikevm::PikeVM};
fn main() {
    let spec: serde_json::Value = serde_json::from_str(&std::fs::read_to_string("/tmp/bench/sglang.spec.json").unwrap()).unwrap();
    let toks = spec["tokens"].as_array().unwrap();
    let bs = toks.iter().find(|t| t["name"] == "bracket_stamp").unwrap()["pattern"].as_str().unwrap();
    let nfa = NFA::new(bs).unwrap();
    println!("states {}", nfa.states().len());
    let line = "[2025-02-27 04:46:39 TP0] ";
    let bt = BoundedBacktracker::new_from_nfa(nfa.clone()).unwrap();
    let mut cache = bt.create_cache(); let mut caps = bt.create_captures();
    let n = 100000; let s = Instant::now();
    for _ in 0..n { bt.try_captures(&mut cache, line, &mut caps).unwrap(); }
    println!("backtrack {:.0}ns {:?}", s.elapsed().as_nanos() as f64 / n as f64, caps.get_group(1));
    let pv = PikeVM::new_from_nfa(nfa.clone()).unwrap();
    let mut cache = pv.create_cache(); let mut caps = pv.create_captures();
    let s = Instant::now();
    for _ in 0..n { pv.captures(&mut cache, line, &mut caps); }
    println!("pikevm {:.0}ns", s.elapsed().as_nanos() as f64 / n as f64);
    println!("onepass {:?}", regex_automata::dfa::onepass::DFA::new(bs).err().map(|e| e.to_string()));
    let nfa2 = NFA::compiler().configure(NFA::config().shrink(true)).build(bs).unwrap();
    println!("shrunk states {}", nfa2.states().len());
}

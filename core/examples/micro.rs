use std::time::Instant;
fn main() {
    parts();
    let spec: serde_json::Value = serde_json::from_str(&std::fs::read_to_string("/tmp/bench/sglang.spec.json").unwrap()).unwrap();
    let toks = spec["tokens"].as_array().unwrap();
    let line = "[2025-02-27 04:46:39 TP0] Decode batch, #running-req: 8, #token: 62531, token usage: 0.12, cuda graph: True, gen throughput (token/s): 186.64, #queue-req: 0";
    let body = &line[26..];
    let n = 200_000;
    for t in toks.iter() {
        let name = t["name"].as_str().unwrap();
        let pat = t["pattern"].as_str().unwrap();
        let re = regex::Regex::new(pat).unwrap();
        let mut locs = re.capture_locations();
        let s = Instant::now();
        let mut k = 0;
        for _ in 0..n { if re.is_match(body) { k += 1; } }
        let fail_ns = s.elapsed().as_nanos() as f64 / n as f64;
        let s = Instant::now();
        for _ in 0..n { if re.captures_read(&mut locs, line).is_some() { k += 1; } }
        let cap_ns = s.elapsed().as_nanos() as f64 / n as f64;
        let t0 = Instant::now();
        let dfa = regex_automata::dfa::dense::DFA::builder()
            .configure(regex_automata::dfa::dense::Config::new().start_kind(regex_automata::dfa::StartKind::Anchored))
            .build(pat);
        let build_ms = t0.elapsed().as_secs_f64() * 1e3;
        let dfa_ns = match &dfa {
            Ok(d) => {
                use regex_automata::dfa::Automaton;
                let input = regex_automata::Input::new(body).anchored(regex_automata::Anchored::Yes);
                let s = Instant::now();
                for _ in 0..n { if d.try_search_fwd(&input).unwrap().is_some() { k += 1; } }
                format!("{:.0}ns mem {}KB", s.elapsed().as_nanos() as f64 / n as f64, d.memory_usage() / 1024)
            }
            Err(e) => format!("err {e}"),
        };
        println!("{name:20} is_match(fail) {fail_ns:6.0}ns captures(line) {cap_ns:6.0}ns dense {dfa_ns} build {build_ms:.1}ms {k}");
    }
}

#[allow(dead_code)]
pub fn more() {
    let line = "[2025-02-27 04:46:39 TP0] Decode batch, #running-req: 8, #token: 62531, token usage: 0.12, cuda graph: True, gen throughput (token/s): 186.64, #queue-req: 0";
    let n = 200_000;
    let s = Instant::now();
    let mut k = 0;
    for _ in 0..n { k += _core::text::strip_ansi(line).len(); }
    println!("strip_ansi {:.0}ns {k}", s.elapsed().as_nanos() as f64 / n as f64);
    let spec = _core::spec::Spec::from_json(&std::fs::read_to_string("/tmp/bench/sglang.spec.json").unwrap()).unwrap();
    let peeler = _core::envelope::Peeler::new(&spec).unwrap();
    let s = Instant::now();
    for _ in 0..n { k += peeler.peel(std::borrow::Cow::Borrowed(line), None).body.0; }
    println!("peel {:.0}ns {k}", s.elapsed().as_nanos() as f64 / n as f64);
    let s = Instant::now();
    for _ in 0..n { k += _core::text::clean_tail(line).len(); }
    println!("clean_tail {:.0}ns {k}", s.elapsed().as_nanos() as f64 / n as f64);
}

#[allow(dead_code)]
pub fn parts() {
    let line = "[2025-02-27 04:46:39 TP0] Decode batch, #running-req: 8, #token: 62531, token usage: 0.12, cuda graph: True, gen throughput (token/s): 186.64, #queue-req: 0";
    let spec: serde_json::Value = serde_json::from_str(&std::fs::read_to_string("/tmp/bench/sglang.spec.json").unwrap()).unwrap();
    let toks = spec["tokens"].as_array().unwrap();
    let bs = toks.iter().find(|t| t["name"] == "bracket_stamp").unwrap()["pattern"].as_str().unwrap();
    let c = _core::regexes::Compiled::new(bs, "x").unwrap();
    let n = 200_000;
    let s = Instant::now();
    let mut k = 0;
    for _ in 0..n { if let Some(sp) = c.captures(line) { k += sp.end(); } }
    println!("bracket captures(cut) {:.0}ns {k}", s.elapsed().as_nanos() as f64 / n as f64);
    let re = regex::Regex::new(bs).unwrap();
    let s = Instant::now();
    for _ in 0..n { if let Some(m) = re.find(line) { k += m.end(); } }
    println!("bracket find {:.0}ns {k}", s.elapsed().as_nanos() as f64 / n as f64);
    let mut locs = re.capture_locations();
    let s = Instant::now();
    for _ in 0..n { if re.captures_read(&mut locs, &line[..26]).is_some() { k += 1; } }
    println!("bracket captures on 26 bytes {:.0}ns {k}", s.elapsed().as_nanos() as f64 / n as f64);
    let bodies: Vec<String> = toks.iter().map(|t| t["pattern"].as_str().unwrap().trim_start_matches("\\A").to_string()).collect();
    let strip = |p: &str| { let mut o = String::new(); let mut r = p; while let Some(a) = r.find("(?P<") { o.push_str(&r[..a]); let af = &r[a+4..]; let cl = af.find('>').unwrap()+1; o.push_str("(?:"); r = &af[cl..]; } o.push_str(r); o };
    let alt = regex::Regex::new(&format!("\\A(?:{})", bodies[..17].iter().map(|b| strip(b)).collect::<Vec<_>>().join("|"))).unwrap();
    let s = Instant::now();
    for _ in 0..n { if alt.is_match(line) { k += 1; } }
    println!("before[17] is_match {:.0}ns {k}", s.elapsed().as_nanos() as f64 / n as f64);
    let all = regex::Regex::new(&format!("\\A(?:{})", bodies.iter().map(|b| strip(b)).collect::<Vec<_>>().join("|"))).unwrap();
    let s = Instant::now();
    for _ in 0..n { if all.is_match(&line[26..]) { k += 1; } }
    println!("any is_match at body {:.0}ns {k}", s.elapsed().as_nanos() as f64 / n as f64);
}

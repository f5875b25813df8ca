use std::time::Instant;
fn bench(name: &str, pat: &str, line: &str) {
    let re = regex::Regex::new(pat).unwrap();
    let mut locs = re.capture_locations();
    let n = 200000; let s = Instant::now(); let mut k = 0;
    for _ in 0..n { if re.captures_read(&mut locs, line).is_some() { k += 1; } }
    let op = regex_automata::dfa::onepass::DFA::new(pat).is_ok();
    println!("{name:12} {:.0}ns onepass={op} {k}", s.elapsed().as_nanos() as f64 / n as f64);
}
fn main() {
    let ranks = r"(?:DP|PP|ATTN_CP|MOE_DP|TP|EP|CP|PCP|DCP)[0-9]+(?:[ ](?:DP|PP|ATTN_CP|MOE_DP|TP|EP|CP|PCP|DCP)[0-9]+)*";
    let line = "[2025-02-27 04:46:39 TP0] ";
    bench("iso+rank", &format!(r"\A\[(?P<ts>[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}[T ][0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}}(?:[.,][0-9]{{1,9}})?)(?:[ ](?P<rank>{ranks}))?\][ ]?"), line);
    bench("iso only", r"\A\[(?P<ts>[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]{1,9})?)", line);
    bench("ascii(?-u)", &format!(r"(?-u)\A\[(?P<ts>[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}[T ][0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}}(?:[.,][0-9]{{1,9}})?)(?:[ ](?P<rank>{ranks}))?\][ ]?"), line);
    bench("vllm level", r"\A(?:(?P<level>INFO|WARNING|ERROR)(?:[ ]+))", "INFO 06-05 14:58:56 [loggers.py:271] x");
    let decode = r"\ADecode[ ]batch(?:\.|,|[ ]\[(?P<forward_iter>[0-9]+)\],)[ ]\z";
    bench("title", decode, "Decode batch, ");
}

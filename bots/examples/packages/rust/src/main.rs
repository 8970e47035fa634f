//! A Project L starter bot in Rust (standard library only, no crates): it plays the first
//! legal option of every request. The protocol is docs/protocol.md: one JSON object per line
//! on stdin, one reply per request on stdout, debugging output on stderr. Write your
//! strategy in `choose`.

mod json;

use json::Value;
use std::io::{self, BufRead, Write};

const NAME: &str = "rust-example";
const VERSION: &str = "1.0";

/// The action or decision to answer a request with (R14's JSON, docs/rules.md).
fn choose(request: &Value) -> Value {
    let legal = request.get("legal").as_array(); // the legal options: asked for in `ready`
    if let Some(first) = legal.first() {
        return first.clone();
    }
    // Without a list (none is sent if `ready` did not ask): the answer that is always legal.
    let kind = request.get("type").as_str();
    match kind {
        "action" => Value::object(vec![("type", Value::str("pass"))]),
        // the first of the rewards offered (R9.3)
        "reward" => Value::object(vec![
            ("type", Value::str("reward")),
            ("take", request.get("observation").get("decision").get("options").at(0).clone()),
        ]),
        "level_up" => Value::object(vec![("type", Value::str("level_up")), ("steps", Value::Array(vec![]))]),
        _ => Value::object(vec![("type", Value::str("finish")), ("placements", Value::Array(vec![]))]),
    }
}

fn main() {
    let stdin = io::stdin();
    let mut input = stdin.lock();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut raw = Vec::new();
    loop {
        raw.clear();
        match input.read_until(b'\n', &mut raw) {
            Ok(0) | Err(_) => break, // the end of the input: the arena is gone
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&raw);
        if line.trim().is_empty() {
            continue;
        }
        let msg = match json::parse(line.trim_end()) {
            Ok(msg) => msg,
            Err(why) => {
                eprintln!("cannot read a message: {}", why);
                continue;
            }
        };
        let id = msg.get("id").clone();
        let reply = match msg.get("type").as_str() {
            // a new game: forget the last one's state here
            "hello" => Value::object(vec![
                ("type", Value::str("ready")),
                ("id", id),
                ("name", Value::str(NAME)),
                ("version", Value::str(VERSION)),
                ("legal_actions", Value::Bool(true)),
            ]),
            "action" | "reward" | "level_up" | "finish" => Value::object(vec![("id", id), ("action", choose(&msg))]),
            "quit" => break,
            _ => continue, // game_over, and any message this bot does not know: no reply
        };
        // the arena waits for the whole line: flush it
        if writeln!(out, "{}", reply).and_then(|_| out.flush()).is_err() {
            break;
        }
    }
}

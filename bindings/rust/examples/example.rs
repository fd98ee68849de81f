// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//! The sds crate in use: a Rust service's call to a dependency, guarded
//! by `Point::invoke` or by a `Guard`, with a cached fallback.
//!
//!     example GROUP APP
//!
//! Looks up the point "dep" of app APP, prints "ready", then runs the
//! commands of stdin (the driver of tests/bindings), one per line:
//!
//!     ok N | err N | panic N          N calls through Point::invoke whose
//!                                     dependency succeeds, returns Err,
//!                                     or panics (caught outside the call)
//!     guard-ok N | guard-err N | guard-panic N
//!                                     the same in a scope holding a Guard
//!     key-ok N                        N calls through Point::invoke_key, of
//!                                     keys user0..user9 in turn, that
//!                                     succeed (docs/KEYS.md)
//!
//! Each prints "passed P downgraded D failed F" (P: the dependency ran,
//! D: the fallback ran, F: the dependency failed) then "done".  EOF or
//! "quit" ends it (exit 0).

use std::cell::Cell;
use std::io::{self, BufRead, Write};
use std::panic::{self, AssertUnwindSafe};
use std::process;

#[derive(Default)]
struct Tally {
    passed: Cell<u64>,     // the dependency ran
    downgraded: Cell<u64>, // the fallback ran
    failed: Cell<u64>,     // the dependency failed
}

fn bump(c: &Cell<u64>) {
    c.set(c.get() + 1);
}

/// The dependency: fails (Err or panic) when asked to.
fn dependency(t: &Tally, how: &str) -> Result<u32, String> {
    bump(&t.passed);
    match how {
        "ok" => Ok(42),
        "err" => {
            bump(&t.failed);
            Err("dependency down".into())
        }
        _ => {
            bump(&t.failed);
            panic!("dependency crashed")
        }
    }
}

fn cached(t: &Tally) -> Result<u32, String> {
    bump(&t.downgraded);
    Ok(7)
}

fn call(dep: &sds::Point, t: &Tally, kind: &str, i: u64) -> Result<u32, String> {
    if kind == "key-ok" {
        let key = format!("user{}", i % 10);
        return dep.invoke_key(key.as_bytes(), || cached(t), || dependency(t, "ok"));
    }
    match kind.strip_prefix("guard-") {
        // Idiomatic use 1: invoke.
        None => dep.invoke(|| cached(t), || dependency(t, kind)),
        // Idiomatic use 2: a guard for the scope.
        Some(how) => {
            let g = dep.guard();
            if g.downgraded() {
                return cached(t);
            }
            g.check(dependency(t, how))
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: {} GROUP APP", args[0]);
        process::exit(2);
    }
    // The dependency's panics are caught: keep their messages quiet.
    panic::set_hook(Box::new(|_| {}));
    let client = sds::Client::open(&args[1], &args[2]);
    let dep = client.point("dep");
    let kinds = ["ok", "err", "panic", "guard-ok", "guard-err", "guard-panic", "key-ok"];

    let mut out = io::stdout();
    writeln!(out, "ready").unwrap();
    out.flush().unwrap();
    for line in io::stdin().lock().lines() {
        let line = line.unwrap();
        let w: Vec<&str> = line.split_whitespace().collect();
        if w == ["quit"] {
            break;
        }
        let n: Option<u64> = w.get(1).and_then(|s| s.parse().ok());
        let (kind, n) = match (w.len(), n) {
            (2, Some(n)) if kinds.contains(&w[0]) => (w[0], n),
            _ => {
                writeln!(out, "error: want KIND N").unwrap();
                process::exit(1);
            }
        };
        let t = Tally::default();
        for i in 0..n {
            // The service's own error path: an Err, or a caught panic.
            let _ = panic::catch_unwind(AssertUnwindSafe(|| call(&dep, &t, kind, i)));
        }
        writeln!(
            out,
            "passed {} downgraded {} failed {}\ndone",
            t.passed.get(),
            t.downgraded.get(),
            t.failed.get()
        )
        .unwrap();
        out.flush().unwrap();
    }
}

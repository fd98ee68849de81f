// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// names_handler [N]: the Rust service of issue 10, as a new user writes it
// (tests/harm/t_names.py).  `handler` is main::handler to `nm -C` (the
// crate is named main, as a main.rs would be); it fails (-1) on every
// third call: N calls (default 300,000), N / 3 errors.  Prints
// "calls N errors E" and exits 0.
#![crate_name = "main"]

use std::ptr::read_volatile;

#[inline(never)]
fn handler(i: u64) -> i32 {
    if i % 3 == 0 {
        -1
    } else {
        (i & 7) as i32
    }
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("N: a count"))
        .unwrap_or(300_000);
    let mut errors = 0u64;
    for i in 0..n {
        // A volatile read: the loop cannot be folded into handler.
        let v = unsafe { read_volatile(&i) };
        if handler(v) < 0 {
            errors += 1;
        }
    }
    println!("calls {} errors {}", n, errors);
}

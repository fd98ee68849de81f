// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//! unwind_panic - a Rust panic unwinding through a probed function (issue 9).
//!
//!   unwind_panic N K
//!
//! main calls `work(i)` N times inside `std::panic::catch_unwind`; `work`
//! panics every K-th call (i % K == K - 1).  The panic message is
//! silenced by a hook.  Prints "caught C" (C = N / K) and "sum S" of the
//! normal returns.  `work` is probed by its mangled symbol
//! (_ZN12unwind_panic4work17h...E, from nm).

use std::panic;

/// std::hint::black_box is not stable in Debian's rustc (1.63).
fn black_box<T: Copy>(x: T) -> T {
    unsafe { std::ptr::read_volatile(&x) }
}

#[inline(never)]
fn work(i: u64, k: u64) -> u64 {
    if black_box(i) % k == k - 1 {
        panic!("work {}", i);
    }
    black_box(i & 1) + 1
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args.get(1).map_or(100, |s| s.parse().unwrap());
    let k: u64 = args.get(2).map_or(2, |s| s.parse().unwrap());
    let (mut caught, mut sum) = (0u64, 0u64);

    panic::set_hook(Box::new(|_| {}));
    for i in 0..n {
        match panic::catch_unwind(|| work(black_box(i), k)) {
            Ok(v) => sum += v,
            Err(_) => caught += 1,
        }
    }
    println!("caught {}\nsum {}", caught, sum);
}

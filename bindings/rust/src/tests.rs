// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//! Unit tests without a loader: libsds fails open (nothing downgrades),
//! and the wrapper runs, returns, signs and unwinds as documented.  The
//! counts a loader sees are tested by tests/bindings (make test).

use super::*;
use std::panic;

fn client() -> Client {
    // SDS_RUN_DIR comes from the Makefile (an empty dir of the build):
    // no loader serves this app.
    Client::open("default", "rust-unit")
}

#[test]
fn invoke_runs_the_call_without_a_loader() {
    let c = client();
    let p = c.point("dep");
    assert!(!p.as_ptr().is_null());
    for _ in 0..1000 {
        let r: Result<u32, ()> = p.invoke(|| panic!("fallback ran"), || Ok(42));
        assert_eq!(r, Ok(42));
    }
}

#[test]
fn invoke_gives_back_the_err() {
    let c = client();
    let p = c.point("dep");
    let r: Result<u32, &str> = p.invoke(|| Ok(7), || Err("down"));
    assert_eq!(r, Err("down"));
}

#[test]
fn a_panic_goes_on_unwinding_through_invoke() {
    let c = client();
    let p = c.point("dep");
    let r = panic::catch_unwind(|| {
        let _: Result<u32, ()> = p.invoke(|| Ok(7), || panic!("boom"));
    });
    let e = r.expect_err("the panic was swallowed");
    assert_eq!(e.downcast_ref::<&str>(), Some(&"boom"));
    // The thread's frames are balanced: the next call runs normally.
    let r: Result<u32, ()> = p.invoke(|| Ok(7), || Ok(1));
    assert_eq!(r, Ok(1));
}

#[test]
fn guard_scope_and_verdicts() {
    let c = client();
    let p = c.point("dep");
    {
        let g = p.guard();
        assert!(!g.downgraded());
        assert_eq!(g.check::<u8, u8>(Err(1)), Err(1));
        g.fail(); // twice: still one exception for the call
    }
    assert_eq!(p.enter(), Verdict::Pass);
    p.downgrade_finally();
    assert!(!p.should_downgrade());
    p.downgrade_finally();
}

#[test]
fn same_name_same_point_and_bad_names() {
    let c = client();
    assert_eq!(c.point("dep").as_ptr(), c.point("dep").as_ptr());
    // A NUL in a name: a null point, which never downgrades.
    let bad = c.point("de\0p");
    assert!(bad.as_ptr().is_null());
    let r: Result<u8, ()> = bad.invoke(|| Ok(0), || Ok(1));
    assert_eq!(r, Ok(1));
    let detached = Client::open("bad group", "x\0y");
    let r: Result<u8, ()> = detached.point("dep").invoke(|| Ok(0), || Ok(1));
    assert_eq!(r, Ok(1));
}

#[test]
fn copy_without_a_loader_and_of_bad_points() {
    let c = client();
    let p = c.point("dep");
    for i in 0..1000u32 {
        assert!(p.copy(&i.to_le_bytes()).is_ok());
    }
    assert!(p.copy(&[]).is_ok());
    let bad = c.point("de\0p");
    let e = bad.copy(b"body").unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc_einval()));
    let invalid = c.point("no spaces");
    assert_eq!(invalid.copy(b"body").unwrap_err().raw_os_error(), Some(libc_einval()));
}

// EINVAL without the libc crate (the crate has no dependencies).
fn libc_einval() -> i32 {
    22
}

#[test]
fn points_are_shared_across_threads() {
    let c = client();
    let p = c.point("dep");
    thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..1000 {
                    let r: Result<(), ()> = p.invoke(|| Err(()), || Ok(()));
                    assert_eq!(r, Ok(()));
                }
            });
        }
    });
}

#[test]
fn keyed_calls_without_a_loader() {
    let c = client();
    let p = c.point("dep");
    for i in 0..1000u32 {
        let key = format!("user{}", i % 10);
        assert_eq!(p.invoke_key::<u32, (), _, _>(key.as_bytes(), || panic!("fallback ran"), || Ok(i)), Ok(i));
    }
    {
        let g = p.guard_key(b"user7");
        assert!(!g.downgraded());
        g.fail();
    }
    assert_eq!(p.enter_key(&[0u8; 100]), Verdict::Pass); // longer than 64: its first 64
    p.downgrade_finally();
    assert!(!p.should_downgrade_key(b""));                // empty: an unkeyed call
    p.downgrade_finally();
}

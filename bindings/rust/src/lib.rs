// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//! libsds for Rust: guard a call with sds-bpf.
//!
//! ```no_run
//! let client = sds::Client::open("shop", "frontend");
//! let order = client.point("order");
//!
//! // A call: the fallback when downgraded, else the call; an Err or a
//! // panic of the call is signed as the call's exception.
//! let r: Result<u32, String> = order.invoke(|| Ok(7), || Ok(42));
//!
//! // Or a scope: the guard's drop ends the call (and signs a panic).
//! let g = order.guard();
//! let r: Result<u32, String> = if g.downgraded() { Ok(7) } else { g.check(Ok(42)) };
//! ```
//!
//! Without a loader, or when the loader dies, nothing downgrades
//! (libsds fails open).  A guarded call belongs to the thread that began
//! it (libsds keeps frames per thread): [`Guard`] is neither `Send` nor
//! `Sync`, so an async task that holds one across an `.await` cannot be
//! spawned on a multi-threaded executor.

use std::ffi::CString;
use std::marker::PhantomData;
use std::ptr;
use std::thread;

pub mod ffi;

/// What [`Point::enter`] tells a guarded call (`enum sds_verdict`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Make the call.
    Pass,
    /// Run the fallback instead.
    Downgrade,
    /// A fault drill: act as if the call failed (sign it).
    Fault,
}

/// One app's connection to its loader; closed on drop.
pub struct Client {
    raw: *mut ffi::sds_client, // null only when memory ran out: fails open
}

// libsds's client is thread-safe (sds.h: "Every call is thread-safe").
unsafe impl Send for Client {}
unsafe impl Sync for Client {}

/// A name as libsds takes it; a name with a NUL byte is invalid for
/// libsds too, and "" is an invalid name (a detached client).
fn c_name(s: &str) -> CString {
    CString::new(s).unwrap_or_default()
}

impl Client {
    /// `sds_client_open(group, app)`: registers with the loader serving
    /// the app, if any, before it returns.  Invalid names give a client
    /// that never downgrades.
    pub fn open(group: &str, app: &str) -> Client {
        let (g, a) = (c_name(group), c_name(app));
        // SAFETY: two valid C strings, copied by libsds.
        let raw = unsafe { ffi::sds_client_open(g.as_ptr(), a.as_ptr()) };
        Client { raw }
    }

    /// `sds_point(client, name)`: look points up once and keep them.
    pub fn point(&self, name: &str) -> Point<'_> {
        let raw = match CString::new(name) {
            // SAFETY: the client is alive; the name is a C string.
            Ok(n) => unsafe { ffi::sds_point(self.raw, n.as_ptr()) },
            Err(_) => ptr::null_mut(),
        };
        Point { raw, _client: PhantomData }
    }

    /// The C client, for calls this crate does not wrap.
    pub fn as_ptr(&self) -> *mut ffi::sds_client {
        self.raw
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // SAFETY: no Point outlives the borrow of its Client, so no
        // guarded call of this client is in progress.
        unsafe { ffi::sds_client_close(self.raw) }
    }
}

/// A guarded call site, valid as long as its client.
#[derive(Clone, Copy)]
pub struct Point<'c> {
    raw: *mut ffi::sds_point,               // null: never downgrades
    _client: PhantomData<&'c Client>,       // the client it lives in
}

unsafe impl Send for Point<'_> {}
unsafe impl Sync for Point<'_> {}

impl<'c> Point<'c> {
    /// `sds_should_downgrade`: the entry of a guarded call (pair it with
    /// [`Point::downgrade_finally`] on this thread).  Prefer
    /// [`Point::guard`] or [`Point::invoke`].
    pub fn should_downgrade(&self) -> bool {
        // SAFETY: a point of a live client, or null.
        unsafe { ffi::sds_should_downgrade(self.raw) }
    }

    /// `sds_enter`: the entry of a guarded call that takes part in
    /// fault drills.
    pub fn enter(&self) -> Verdict {
        // SAFETY: as above.
        match unsafe { ffi::sds_enter(self.raw) } {
            ffi::SDS_DOWNGRADE => Verdict::Downgrade,
            ffi::SDS_FAULT => Verdict::Fault,
            _ => Verdict::Pass,
        }
    }

    /// `sds_should_downgrade_key`: [`Point::should_downgrade`] for one
    /// call of `key` (a user, a tenant: docs/KEYS.md), which the loader
    /// can block alone.  At most 64 bytes count (longer keys are their
    /// first 64); an empty key is an unkeyed call.  libsds copies it.
    pub fn should_downgrade_key(&self, key: &[u8]) -> bool {
        // SAFETY: as above; libsds reads at most key.len() bytes, only
        // during the call.
        unsafe { ffi::sds_should_downgrade_key(self.raw, key.as_ptr().cast(), key.len()) }
    }

    /// `sds_enter_key`: [`Point::enter`] for one call of `key`.
    pub fn enter_key(&self, key: &[u8]) -> Verdict {
        // SAFETY: as above.
        match unsafe { ffi::sds_enter_key(self.raw, key.as_ptr().cast(), key.len()) } {
            ffi::SDS_DOWNGRADE => Verdict::Downgrade,
            ffi::SDS_FAULT => Verdict::Fault,
            _ => Verdict::Pass,
        }
    }

    /// `sds_exception_sign`: the call in progress on this thread failed.
    pub fn exception_sign(&self) {
        // SAFETY: as above.
        unsafe { ffi::sds_exception_sign(self.raw) }
    }

    /// `sds_downgrade_finally`: the end of the innermost guarded call.
    pub fn downgrade_finally(&self) {
        // SAFETY: as above.
        unsafe { ffi::sds_downgrade_finally(self.raw) }
    }

    /// `sds_copy`: offer `buf` to traffic copy (docs/COPY.md); a few ns
    /// when nothing copies the point.  `Err` (EINVAL) only for a null
    /// point or one of an invalid name, which can never copy.
    pub fn copy(&self, buf: &[u8]) -> std::io::Result<()> {
        // SAFETY: as above; libsds reads at most buf.len() bytes of buf,
        // and only during the call.
        let r = unsafe { ffi::sds_copy(self.raw, buf.as_ptr().cast(), buf.len()) };
        if r == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }

    /// `sds_copy_response`: offer `buf` as the response to the request
    /// this thread last offered with `copy` (docs/COPY.md, "Responses").
    pub fn copy_response(&self, buf: &[u8]) -> std::io::Result<()> {
        // SAFETY: as for copy.
        let r = unsafe { ffi::sds_copy_response(self.raw, buf.as_ptr().cast(), buf.len()) };
        if r == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }

    /// Begin a guarded call, ended when the guard drops.
    pub fn guard(&self) -> Guard<'c> {
        Guard {
            point: *self,
            panicking: thread::panicking(),
            downgraded: self.should_downgrade(),
            _thread: PhantomData,
        }
    }

    /// [`Point::guard`] for one call of `key`.
    pub fn guard_key(&self, key: &[u8]) -> Guard<'c> {
        Guard {
            point: *self,
            panicking: thread::panicking(),
            downgraded: self.should_downgrade_key(key),
            _thread: PhantomData,
        }
    }

    /// [`Point::invoke`] for one call of `key`.
    pub fn invoke_key<T, E, B, F>(&self, key: &[u8], fallback: B, f: F) -> Result<T, E>
    where
        B: FnOnce() -> Result<T, E>,
        F: FnOnce() -> Result<T, E>,
    {
        let g = self.guard_key(key);
        if g.downgraded() {
            return fallback();
        }
        g.check(f())
    }

    /// A guarded call: `fallback()` when downgraded, else `f()`, whose
    /// `Err` and panic are signed as the call's exception (the panic goes
    /// on unwinding).
    pub fn invoke<T, E, B, F>(&self, fallback: B, f: F) -> Result<T, E>
    where
        B: FnOnce() -> Result<T, E>,
        F: FnOnce() -> Result<T, E>,
    {
        let g = self.guard();
        if g.downgraded() {
            return fallback();
        }
        g.check(f())
    }

    /// The C point, for calls this crate does not wrap.
    pub fn as_ptr(&self) -> *mut ffi::sds_point {
        self.raw
    }
}

/// One guarded call in progress on this thread: begun by
/// [`Point::guard`], ended by drop (`sds_downgrade_finally`), which
/// signs the call's exception if a panic is unwinding through it.
pub struct Guard<'c> {
    point: Point<'c>,                   // the point of the call
    panicking: bool,                    // a panic was unwinding at the start
    downgraded: bool,                   // what should_downgrade() said
    _thread: PhantomData<*const ()>,    // !Send, !Sync: stays on its thread
}

impl Guard<'_> {
    /// Run the fallback instead of the call.
    pub fn downgraded(&self) -> bool {
        self.downgraded
    }

    /// The call failed (counted once per call, nothing when downgraded).
    pub fn fail(&self) {
        self.point.exception_sign();
    }

    /// Sign `r` if it is an `Err`; give it back.
    pub fn check<T, E>(&self, r: Result<T, E>) -> Result<T, E> {
        if r.is_err() {
            self.fail();
        }
        r
    }
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        // A panic that began inside the guarded scope is leaving it.
        if thread::panicking() && !self.panicking {
            self.point.exception_sign();
        }
        self.point.downgrade_finally();
    }
}

#[cfg(test)]
mod tests;

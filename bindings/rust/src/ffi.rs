// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//! The C API of libsds (libsds/sds.h), one to one.  Every function
//! accepts null pointers (a no-op, or false), never aborts and never
//! unwinds.

#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_void};

/// One app's connection to its loader (`struct sds_client`).
#[repr(C)]
pub struct sds_client {
    _opaque: [u8; 0],
}

/// A guarded call site (`struct sds_point`).
#[repr(C)]
pub struct sds_point {
    _opaque: [u8; 0],
}

/// `enum sds_verdict`: what `sds_enter` tells a guarded call.
pub type sds_verdict = c_int;
pub const SDS_PASS: sds_verdict = 0;
pub const SDS_DOWNGRADE: sds_verdict = 1;
pub const SDS_FAULT: sds_verdict = 2;

extern "C" {
    pub fn sds_client_open(group: *const c_char, app: *const c_char) -> *mut sds_client;
    pub fn sds_point(c: *mut sds_client, name: *const c_char) -> *mut sds_point;
    pub fn sds_should_downgrade(p: *mut sds_point) -> bool;
    pub fn sds_enter(p: *mut sds_point) -> sds_verdict;
    pub fn sds_should_downgrade_key(p: *mut sds_point, key: *const c_void, len: usize) -> bool;
    pub fn sds_enter_key(p: *mut sds_point, key: *const c_void, len: usize) -> sds_verdict;
    pub fn sds_exception_sign(p: *mut sds_point);
    pub fn sds_downgrade_finally(p: *mut sds_point);
    pub fn sds_copy(p: *mut sds_point, buf: *const c_void, len: usize) -> c_int;
    pub fn sds_copy_response(p: *mut sds_point, buf: *const c_void, len: usize) -> c_int;
    pub fn sds_client_close(c: *mut sds_client);
}

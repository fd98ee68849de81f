// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause

// Package sds is libsds for Go (cgo): guard a call with sds-bpf.
//
//	client := sds.Open("shop", "frontend")
//	order := client.Point("order")
//
//	// A call: the fallback when downgraded, else the call, whose error
//	// or panic is signed as the call's exception (the panic goes on).
//	r, err := sds.Invoke(order, cachedAnswer, orderServiceCall)
//
//	// Or a function body:
//	func handle() (err error) {
//		g := order.Begin()
//		defer g.End(&err)
//		if g.Downgraded() {
//			return fallback()
//		}
//		return call()
//	}
//
// Without a loader, or when the loader dies, nothing downgrades (libsds
// fails open).  libsds keeps a thread's guarded calls in thread-local
// frames, and a goroutine may move between threads: Begin locks the
// goroutine to its thread (runtime.LockOSThread) until End.  Build with
// PKG_CONFIG_PATH naming the directory of sds.pc (build/lib/pkgconfig of
// the sds-bpf tree).
package sds

/*
#cgo pkg-config: sds
#include <stdlib.h>
#include <sds.h>
*/
import "C"

import (
	"strings"
	"unsafe"
)

// Client is one app's connection to its loader.
type Client struct {
	c *C.struct_sds_client // nil only when memory ran out: fails open
}

// Point is a guarded call site, valid until its client is closed.  The
// zero Point never downgrades.
type Point struct {
	p *C.struct_sds_point // nil: never downgrades
}

// Verdict is what Point.Enter tells a guarded call.
type Verdict int

const (
	Pass      Verdict = C.SDS_PASS      // make the call
	Downgrade Verdict = C.SDS_DOWNGRADE // run the fallback instead
	Fault     Verdict = C.SDS_FAULT     // a fault drill: act as if it failed
)

// cName is @s as libsds takes it; a name with a NUL byte is invalid for
// libsds too, and "" is an invalid name.
func cName(s string) *C.char {
	if strings.IndexByte(s, 0) >= 0 {
		s = ""
	}
	return C.CString(s)
}

// Open is sds_client_open: it registers with the loader serving the app,
// if any, before it returns.  Invalid names give a client that never
// downgrades.
func Open(group, app string) *Client {
	g, a := cName(group), cName(app)
	defer C.free(unsafe.Pointer(g))
	defer C.free(unsafe.Pointer(a))
	return &Client{c: C.sds_client_open(g, a)}
}

// Point is sds_point: look points up once and keep them.  A name with a
// NUL byte gives the zero Point.
func (c *Client) Point(name string) Point {
	if strings.IndexByte(name, 0) >= 0 {
		return Point{}
	}
	n := C.CString(name)
	defer C.free(unsafe.Pointer(n))
	return Point{p: C.sds_point(c.c, n)}
}

// Close is sds_client_close: no goroutine may use its points any more.
func (c *Client) Close() {
	C.sds_client_close(c.c)
	c.c = nil
}

// ShouldDowngrade is sds_should_downgrade, the entry of a guarded call.
// The caller must stay on its thread (runtime.LockOSThread) until
// DowngradeFinally: prefer Begin/End or Invoke.
func (p Point) ShouldDowngrade() bool { return bool(C.sds_should_downgrade(p.p)) }

// Enter is sds_enter, the entry of a call that takes part in fault drills
// (the same thread rule).
func (p Point) Enter() Verdict { return Verdict(C.sds_enter(p.p)) }

// keyArgs is key as libsds takes it: its first byte (nil when empty,
// an unkeyed call) and its length.  libsds copies the key during the
// call and keeps no pointer to it.
func keyArgs(key []byte) (unsafe.Pointer, C.size_t) {
	if len(key) == 0 {
		return nil, 0
	}
	return unsafe.Pointer(&key[0]), C.size_t(len(key))
}

// ShouldDowngradeKey is sds_should_downgrade_key: ShouldDowngrade for one
// call of key (a user, a tenant: docs/KEYS.md), which the loader can block
// alone.  At most 64 bytes count (longer keys are their first 64); an
// empty key is an unkeyed call.  The same thread rule: prefer BeginKey
// or InvokeKey.
func (p Point) ShouldDowngradeKey(key []byte) bool {
	k, n := keyArgs(key)
	return bool(C.sds_should_downgrade_key(p.p, k, n))
}

// EnterKey is sds_enter_key: Enter for one call of key.
func (p Point) EnterKey(key []byte) Verdict {
	k, n := keyArgs(key)
	return Verdict(C.sds_enter_key(p.p, k, n))
}

// ExceptionSign is sds_exception_sign: the call in progress on this
// thread failed.
func (p Point) ExceptionSign() { C.sds_exception_sign(p.p) }

// DowngradeFinally is sds_downgrade_finally: the end of the innermost
// guarded call of p on this thread.
func (p Point) DowngradeFinally() { C.sds_downgrade_finally(p.p) }

// Copy is sds_copy: offer buf to traffic copy (docs/COPY.md); libsds
// reads it only during the call.  A few ns in C when nothing copies the
// point (plus cgo's call).  An error (EINVAL) only for the zero Point or
// one of an invalid name, which can never copy.
func (p Point) Copy(buf []byte) error {
	var ptr unsafe.Pointer
	if len(buf) > 0 {
		ptr = unsafe.Pointer(&buf[0])
	}
	if r, err := C.sds_copy(p.p, ptr, C.size_t(len(buf))); r != 0 {
		return err
	}
	return nil
}

// CopyResponse is sds_copy_response: offer buf as the response to the
// request this goroutine's OS thread last offered with Copy (docs/COPY.md,
// "Responses").  Call it without yielding the thread in between
// (runtime.LockOSThread), or the pair is lost; same errors as Copy.
func (p Point) CopyResponse(buf []byte) error {
	var ptr unsafe.Pointer
	if len(buf) > 0 {
		ptr = unsafe.Pointer(&buf[0])
	}
	if r, err := C.sds_copy_response(p.p, ptr, C.size_t(len(buf))); r != 0 {
		return err
	}
	return nil
}

// Valid tells whether p is a point of libsds (not the zero Point).
func (p Point) Valid() bool { return p.p != nil }

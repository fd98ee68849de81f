// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause

package sds

import "runtime"

// Guard is one guarded call in progress: begun by Point.Begin, ended by
// a deferred Guard.End.
type Guard struct {
	p          Point // the point of the call
	downgraded bool  // what ShouldDowngrade said
}

// Begin begins a guarded call of p and locks the goroutine to its thread
// until End (the call's frame is the thread's).
func (p Point) Begin() Guard {
	runtime.LockOSThread()
	return Guard{p: p, downgraded: p.ShouldDowngrade()}
}

// BeginKey is Begin for one call of key (docs/KEYS.md).
func (p Point) BeginKey(key []byte) Guard {
	runtime.LockOSThread()
	return Guard{p: p, downgraded: p.ShouldDowngradeKey(key)}
}

// Downgraded tells the call to run its fallback instead.
func (g Guard) Downgraded() bool { return g.downgraded }

// Fail signs the call's exception (once per call; nothing when
// downgraded).
func (g Guard) Fail() { g.p.ExceptionSign() }

// End ends the call; defer it directly (defer g.End(&err)) so that it
// sees a panic.  It signs the call's exception when *errp is not nil
// (errp may be nil) or a panic is unwinding, which it recovers and
// raises again, then calls DowngradeFinally and unlocks the thread.
func (g Guard) End(errp *error) {
	r := recover()
	if r != nil || (errp != nil && *errp != nil) {
		g.p.ExceptionSign()
	}
	g.p.DowngradeFinally()
	runtime.UnlockOSThread()
	if r != nil {
		panic(r)
	}
}

// Invoke is a guarded call: fallback() when p downgrades it, else fn(),
// whose error or panic is signed as the call's exception (the panic goes
// on).
func Invoke[T any](p Point, fallback, fn func() (T, error)) (v T, err error) {
	g := p.Begin()
	defer g.End(&err)
	if g.Downgraded() {
		return fallback()
	}
	return fn()
}

// InvokeKey is Invoke for one call of key: a key the loader blocked runs
// fallback().
func InvokeKey[T any](p Point, key []byte, fallback, fn func() (T, error)) (v T, err error) {
	g := p.BeginKey(key)
	defer g.End(&err)
	if g.Downgraded() {
		return fallback()
	}
	return fn()
}

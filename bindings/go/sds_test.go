// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause

// Unit tests without a loader: libsds fails open (nothing downgrades),
// and the wrapper runs, returns, signs and panics as documented.  The
// counts a loader sees are tested by tests/bindings (make test).
package sds

import (
	"errors"
	"sync"
	"syscall"
	"testing"
)

// SDS_RUN_DIR comes from the Makefile (an empty dir of the build): no
// loader serves this app.
func client(t *testing.T) *Client {
	c := Open("default", "go-unit")
	t.Cleanup(c.Close)
	return c
}

func fallbackRan() (int, error) { panic("fallback ran") }

func TestInvokeRunsTheCallWithoutALoader(t *testing.T) {
	p := client(t).Point("dep")
	if !p.Valid() {
		t.Fatal("no point")
	}
	for i := 0; i < 1000; i++ {
		v, err := Invoke(p, fallbackRan, func() (int, error) { return 42, nil })
		if v != 42 || err != nil {
			t.Fatalf("Invoke: %v, %v; want 42, nil", v, err)
		}
	}
}

func TestInvokeGivesBackTheError(t *testing.T) {
	p := client(t).Point("dep")
	down := errors.New("down")
	_, err := Invoke(p, fallbackRan, func() (int, error) { return 0, down })
	if err != down {
		t.Fatalf("Invoke: %v, want %v", err, down)
	}
}

func TestPanicGoesOnThroughInvoke(t *testing.T) {
	p := client(t).Point("dep")
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v, want boom", r)
			}
		}()
		Invoke(p, fallbackRan, func() (int, error) { panic("boom") })
		t.Fatal("the panic was swallowed")
	}()
	v, err := Invoke(p, fallbackRan, func() (int, error) { return 1, nil })
	if v != 1 || err != nil {
		t.Fatalf("after a panic: %v, %v", v, err)
	}
}

func TestGuardAndVerdicts(t *testing.T) {
	p := client(t).Point("dep")
	err := func() (err error) {
		g := p.Begin()
		defer g.End(&err)
		if g.Downgraded() {
			t.Fatal("downgraded without a loader")
		}
		g.Fail()
		return errors.New("x")
	}()
	if err == nil {
		t.Fatal("End changed the error")
	}
	if v := p.Enter(); v != Pass {
		t.Fatalf("Enter: %v, want Pass", v)
	}
	p.DowngradeFinally()
}

func TestNamesAndZeroPoint(t *testing.T) {
	c := client(t)
	if c.Point("dep") != c.Point("dep") {
		t.Fatal("two points for one name")
	}
	bad := c.Point("de\x00p")
	if bad.Valid() {
		t.Fatal("a name with NUL gave a point")
	}
	v, _ := Invoke(bad, fallbackRan, func() (int, error) { return 1, nil })
	if v != 1 {
		t.Fatal("the zero point did not pass")
	}
	d := Open("bad group", "x\x00y")
	defer d.Close()
	v, _ = Invoke(d.Point("dep"), fallbackRan, func() (int, error) { return 2, nil })
	if v != 2 {
		t.Fatal("a detached client did not pass")
	}
}

func TestManyGoroutines(t *testing.T) {
	p := client(t).Point("dep")
	var wg sync.WaitGroup
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				Invoke(p, fallbackRan, func() (int, error) { return 0, nil })
			}
		}()
	}
	wg.Wait()
}

// The cost of a guarded call without a loader: three cgo calls and the
// thread lock (go test -bench . -run XXX).
func BenchmarkInvoke(b *testing.B) {
	c := Open("default", "go-bench")
	defer c.Close()
	p := c.Point("dep")
	fn := func() (int, error) { return 1, nil }
	for i := 0; i < b.N; i++ {
		Invoke(p, fn, fn)
	}
}

func TestCopyWithoutALoaderAndOfBadPoints(t *testing.T) {
	c := client(t)
	p := c.Point("dep")
	for i := 0; i < 1000; i++ {
		if err := p.Copy([]byte{byte(i), 1, 2, 3}); err != nil {
			t.Fatalf("Copy: %v, want nil", err)
		}
	}
	if err := p.Copy(nil); err != nil {
		t.Fatalf("Copy(nil): %v, want nil", err)
	}
	if err := (Point{}).Copy([]byte("body")); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("zero Point: %v, want EINVAL", err)
	}
	if err := c.Point("no spaces").Copy([]byte("body")); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("invalid name: %v, want EINVAL", err)
	}
}

func TestKeyedCallsWithoutALoader(t *testing.T) {
	p := client(t).Point("dep")
	for i := 0; i < 1000; i++ {
		key := []byte{'u', byte('0' + i%10)}
		v, err := InvokeKey(p, key, fallbackRan, func() (int, error) { return i, nil })
		if v != i || err != nil {
			t.Fatalf("InvokeKey: %v, %v; want %d, nil", v, err, i)
		}
	}
	err := func() (err error) {
		g := p.BeginKey([]byte("user7"))
		defer g.End(&err)
		if g.Downgraded() {
			t.Fatal("downgraded without a loader")
		}
		return errors.New("x")
	}()
	if err == nil {
		t.Fatal("End changed the error")
	}
	if v := p.EnterKey(make([]byte, 100)); v != Pass { // its first 64 bytes
		t.Fatalf("EnterKey: %v, want Pass", v)
	}
	p.DowngradeFinally()
	if p.ShouldDowngradeKey(nil) { // an unkeyed call
		t.Fatal("ShouldDowngradeKey(nil) downgraded")
	}
	p.DowngradeFinally()
	if (Point{}).ShouldDowngradeKey([]byte("k")) {
		t.Fatal("the zero Point downgraded")
	}
}

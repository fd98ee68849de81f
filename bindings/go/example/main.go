// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause

// The sds package in use: a Go service's call to a dependency, guarded
// by sds.Invoke or by Begin/End, with a cached fallback.
//
//	example GROUP APP
//
// Looks up the point "dep" of app APP, prints "ready", then runs the
// commands of stdin (the driver of tests/bindings), one per line:
//
//	ok N | err N | panic N     N calls through sds.Invoke whose dependency
//	                           succeeds, returns an error, or panics
//	                           (recovered outside the call)
//	guard-ok N | guard-err N | guard-panic N
//	key-ok N	N calls through sds.InvokeKey, of keys user0..user9 in
//			turn, that succeed (docs/KEYS.md)
//	                           the same in a function with Begin/End
//	spread N                   N goroutines at once, each one call through
//	                           sds.Invoke that sleeps 1 ms inside (parks
//	                           the goroutine: it may wake on another thread)
//
// Each prints "passed P downgraded D failed F" (P: the dependency ran,
// D: the fallback ran, F: the dependency failed) then "done".  EOF or
// "quit" ends it (exit 0).
package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sds "sds-bpf/bindings/go"
)

type tally struct {
	passed, downgraded, failed int64 // dependency ran, fallback ran, it failed
}

// dependency fails (error or panic) when asked to.
func dependency(t *tally, how string) (int, error) {
	atomic.AddInt64(&t.passed, 1)
	switch how {
	case "ok":
		return 42, nil
	case "sleep":
		time.Sleep(time.Millisecond)
		return 42, nil
	case "err":
		atomic.AddInt64(&t.failed, 1)
		return 0, errors.New("dependency down")
	}
	atomic.AddInt64(&t.failed, 1)
	panic("dependency crashed")
}

func cached(t *tally) (int, error) {
	atomic.AddInt64(&t.downgraded, 1)
	return 7, nil
}

// Idiomatic use 2: a function body with a guard.
func guarded(dep sds.Point, t *tally, how string) (v int, err error) {
	g := dep.Begin()
	defer g.End(&err)
	if g.Downgraded() {
		return cached(t)
	}
	return dependency(t, how)
}

func call(dep sds.Point, t *tally, kind string) {
	// The service's own error path: an error, or a recovered panic.
	defer func() { recover() }()
	if strings.HasPrefix(kind, "guard-") {
		guarded(dep, t, strings.TrimPrefix(kind, "guard-"))
		return
	}
	// Idiomatic use 1: Invoke.
	sds.Invoke(dep, func() (int, error) { return cached(t) },
		func() (int, error) { return dependency(t, kind) })
}

func run(dep sds.Point, t *tally, kind string, n int) {
	if kind == "key-ok" {
		for i := 0; i < n; i++ {
			sds.InvokeKey(dep, []byte("user"+strconv.Itoa(i%10)),
				func() (int, error) { return cached(t) },
				func() (int, error) { return dependency(t, "ok") })
		}
		return
	}
	if kind != "spread" {
		for i := 0; i < n; i++ {
			call(dep, t, kind)
		}
		return
	}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			call(dep, t, "sleep")
		}()
	}
	wg.Wait()
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintf(os.Stderr, "usage: %s GROUP APP\n", os.Args[0])
		os.Exit(2)
	}
	client := sds.Open(os.Args[1], os.Args[2])
	defer client.Close()
	dep := client.Point("dep")
	kinds := map[string]bool{"ok": true, "err": true, "panic": true,
		"guard-ok": true, "guard-err": true, "guard-panic": true,
		"spread": true, "key-ok": true}

	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		w := strings.Fields(in.Text())
		if len(w) == 1 && w[0] == "quit" {
			break
		}
		var n int
		var err error
		if len(w) == 2 {
			n, err = strconv.Atoi(w[1])
		}
		if len(w) != 2 || err != nil || n < 0 || !kinds[w[0]] {
			fmt.Println("error: want KIND N")
			os.Exit(1)
		}
		var t tally
		run(dep, &t, w[0], n)
		fmt.Printf("passed %d downgraded %d failed %d\ndone\n",
			t.passed, t.downgraded, t.failed)
	}
}

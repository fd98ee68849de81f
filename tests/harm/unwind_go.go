// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// unwind_go: G goroutines each recurse D deep through work(), whose frames
// are big enough that every goroutine's stack grows (the Go runtime
// copies it, walking every return address on it), then a GC walks them
// all again.  Prints "total N" (N = G * (D + 1)) and exits 0.  Under a
// uretprobe on main.work the walk meets the kernel's trampoline address
// and the runtime exits 2 ("unexpected return pc"); the test checks that
// attach's default keeps it alive (tests/harm/t_unwind.py).
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
)

//go:noinline
func sink(b *[256]byte) { b[0]++ }

//go:noinline
func work(n int) int {
	var pad [256]byte
	sink(&pad)
	if n == 0 {
		runtime.GC()
		return int(pad[0])
	}
	return work(n-1) + int(pad[0])
}

func main() {
	g, _ := strconv.Atoi(os.Args[1])
	d, _ := strconv.Atoi(os.Args[2])
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for i := 0; i < g; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := work(d)
			mu.Lock()
			total += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	fmt.Printf("total %d\n", total)
}

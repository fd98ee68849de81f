// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause

// names_go N: Go names as written (tests/harm/t_names.py): main.handler
// and the method main.(*Cart).Add each run N times, through
// math/rand.(*Rand).Seed once (a function of a package with a path).
// Prints "calls N items M" and exits 0.
package main

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
)

type Cart struct {
	items int
}

//go:noinline
func (c *Cart) Add(n int) {
	c.items += n
}

//go:noinline
func handler(c *Cart, i int) int {
	c.Add(1)
	if i%3 == 0 {
		return -1
	}
	return 0
}

func main() {
	n := 1000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	r := rand.New(rand.NewSource(1))
	r.Seed(2)
	c := &Cart{}
	for i := 0; i < n; i++ {
		handler(c, i)
	}
	fmt.Printf("calls %d items %d\n", n, c.items)
}

// Command spreadcost measures what the Go runtime charges for doing the same
// work bunched or spread out in time: units of work that look like a sync
// in miniature (two HTTP GETs over loopback, JSON decoded and encoded again),
// either four at once every 2.2 s or one every 0.55 s, the same units per
// second. It prints the process's CPU time per unit in each way.
//
// It explains a row of docs/benchmarks.md: budget-1000's four keys admit
// their syncs at the same instants when their budgets refill on one grid,
// and at four instants of their own when they are offset (ratebudget's
// Store.phaseFor), which is what spreads the calls in every second.
// The manager does the same work either way (the same reconciles, asks,
// calls and status writes), but each wake-up of a sleeping process costs
// CPU of its own: the scheduler's spinning, cold caches, timers. Spread
// out, each sync pays it alone.
//
//	go run ./test/scale/spreadcost [-for 30s] [-rounds 2]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"syscall"
	"time"
)

// item is what a pipe of the fake cloud looks like, more or less.
type item struct{ ID, Name, State, Kind string }

func main() {
	duration := flag.Duration("for", 30*time.Second, "how long each way runs, per round")
	rounds := flag.Int("rounds", 2, "rounds of both ways, alternating")
	flag.Parse()

	url, err := serve()
	if err != nil {
		log.Fatal(err)
	}
	for round := 1; round <= *rounds; round++ {
		bunched, err := measure(url, 4, *duration)
		if err != nil {
			log.Fatal(err)
		}
		spread, err := measure(url, 1, *duration)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("round %d: CPU per unit %v bunched (4 at once every 2.2 s), %v spread (1 every 0.55 s): spread ÷ bunched = %.2f\n",
			round, bunched.Round(time.Microsecond), spread.Round(time.Microsecond), spread.Seconds()/bunched.Seconds())
	}
}

// serve answers every GET on a loopback port with 100 items of JSON.
func serve() (string, error) {
	items := make([]item, 100)
	for i := range items {
		items[i] = item{ID: fmt.Sprint("pipe-", i), Name: "name", State: "Running", Kind: "kafka"}
	}
	body, _ := json.Marshal(items) // plain strings: never fails
	var lc net.ListenConfig
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/", nil
}

// measure runs units of work at 1/0.55 s for d, batch of them at once, and
// returns the CPU time per unit.
func measure(url string, batch int, d time.Duration) (time.Duration, error) {
	every := time.Duration(batch) * 550 * time.Millisecond
	start, units := cpuTime(), 0
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		errs := make(chan error, batch)
		for range batch {
			go func() { errs <- unit(url) }()
			units++
		}
		time.Sleep(every)
		for range batch {
			if err := <-errs; err != nil {
				return 0, err
			}
		}
	}
	return (cpuTime() - start) / time.Duration(units), nil
}

// unit is a sync in miniature: two reads at once, each decoded and encoded.
func unit(url string) error {
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- read(url) }()
	}
	return errors.Join(<-errs, <-errs)
}

// read GETs url, decodes the items and encodes them again.
func read(url string) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, http.NoBody)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	var items []item
	if err := json.NewDecoder(resp.Body).Decode(&items); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_, _ = json.Marshal(items) // plain strings: never fails
	return nil
}

// cpuTime is the CPU time (user and system) the process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru) // never fails for RUSAGE_SELF
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

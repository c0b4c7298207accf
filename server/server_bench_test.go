package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
)

// BenchmarkLoad runs 100 concurrent sessions × 100 trivial JS cells from a
// loopback client, one HTTP request a cell, and checks that every cell's
// output is its own (session id and sequence number). It reports cells/s,
// the p99 latency of one request, and the CPU time the process spent per
// cell (client, server and sandbox together), which, unlike cells/s, other
// load on the machine does not change: on a machine shared with other
// work, cells/s alone says little.
func BenchmarkLoad(b *testing.B) {
	const sessions, perSession = 100, 100
	ts := newServer(b, server.Config{MaxInFlight: sessions, MaxSessionsPerToken: sessions})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: sessions, MaxConnsPerHost: sessions}}
	b.ReportAllocs()
	var lat []time.Duration
	var total, cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		ids := make([]string, sessions)
		for i := range ids {
			ids[i] = ts.create(b, tokenA)
		}
		b.StartTimer()
		start, cpu0 := time.Now(), cpuTime()
		var mu sync.Mutex
		var wg sync.WaitGroup
		errs := make(chan error, sessions)
		for _, id := range ids {
			wg.Go(func() {
				mine := make([]time.Duration, 0, perSession)
				for seq := range perSession {
					want := fmt.Sprintf("%s %d\n", id, seq)
					body, _ := json.Marshal(cells("js", fmt.Sprintf("print(%q + ' ' + %d)", id, seq)))
					req, _ := http.NewRequest("POST", ts.URL+"/v1/sessions/"+id+"/eval", bytes.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+tokenA)
					t0 := time.Now()
					resp, err := client.Do(req)
					if err != nil {
						errs <- err
						return
					}
					var res sandbox.Result
					err = json.NewDecoder(resp.Body).Decode(&res)
					resp.Body.Close()
					mine = append(mine, time.Since(t0))
					if err != nil || resp.StatusCode != http.StatusOK {
						errs <- fmt.Errorf("session %s cell %d: status %d, %v", id, seq, resp.StatusCode, err)
						return
					}
					if got := res.Details.Cells[0].Output; got != want {
						errs <- fmt.Errorf("session %s cell %d: output %q, want %q (lost or mixed)", id, seq, got, want)
						return
					}
				}
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			})
		}
		wg.Wait()
		total += time.Since(start)
		cpu += cpuTime() - cpu0
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		b.StopTimer()
		for _, id := range ids {
			wantStatus(b, do(b, "DELETE", ts.URL+"/v1/sessions/"+id, tokenA, nil), http.StatusNoContent)
		}
		b.StartTimer()
	}
	if len(lat) != b.N*sessions*perSession {
		b.Fatalf("%d cells answered, want %d", len(lat), b.N*sessions*perSession)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(len(lat))/total.Seconds(), "cells/s")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(cpu.Microseconds())/float64(len(lat)), "cpu-us/cell")
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
